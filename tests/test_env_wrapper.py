"""The environment side of the scripts: env ids, AmagoEnv (rl2 = previous reward and action, the time index, Box
actions rescaled to [-1, 1]) through gymnasium's vector envs, and AmagoVecEnv around already-vectorized envs."""

import gymnasium as gym
import numpy as np
import pytest

import amago_agent as amago
from common.args import resolve_env_id
from common.guards import UserError
from tests.dummy_envs import CountingEnv


def test_old_lunarlander_id_resolves_to_newest(capsys):
    assert resolve_env_id("LunarLander-v2") == "LunarLander-v3"
    assert "using LunarLander-v3" in capsys.readouterr().out
    assert resolve_env_id("CartPole-v1") == "CartPole-v1"
    assert resolve_env_id("CartPole-v0") == "CartPole-v0"  # an old version that still exists is kept
    assert resolve_env_id("CartPole") == "CartPole-v1"


def test_module_colon_id_imports_the_module():
    assert resolve_env_id("tests.dummy_envs:DummyBox-v0") == "DummyBox-v0"


def test_unknown_id_gives_clear_error():
    with pytest.raises(UserError, match="NotAnEnv-v0"):
        resolve_env_id("NotAnEnv-v0")


def test_rl2_and_time_alignment_through_vector_env():
    """Through the real (same-step autoreset) vector env and across episode boundaries: rl2 at t+1 is
    [r_t, onehot(a_t)], the time index counts steps since reset, the true final obs arrives in final_obs,
    and the reset obs has zero rl2 and time 0."""
    envs = gym.vector.SyncVectorEnv(
        [lambda: amago.AmagoEnv(CountingEnv(length=4), "c"), lambda: amago.AmagoEnv(CountingEnv(length=6), "c")],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    # use the script's own vector-env settings
    assert (
        amago.make_vec_env("CartPole-v1", 2, "sync", 0).metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    )
    obs, _ = envs.reset(seed=0)
    assert (obs["rl2"] == 0).all() and (obs["time"] == 0).all()
    rng = np.random.default_rng(0)
    seen_done = 0
    for _step in range(14):
        a = rng.integers(0, 3, 2)
        prev_time = obs["time"].copy()
        obs, rew, term, trunc, info = envs.step(a)
        for i in range(2):
            expect = np.concatenate([[rew[i]], np.eye(3)[a[i]]])
            if term[i] or trunc[i]:
                seen_done += 1
                final = info["final_obs"][i]
                np.testing.assert_allclose(final["rl2"], expect)
                assert final["time"] == prev_time[i] + 1 == (4, 6)[i]
                assert (obs["rl2"][i] == 0).all() and obs["time"][i] == 0
            else:
                np.testing.assert_allclose(obs["rl2"][i], expect)
                assert obs["time"][i] == prev_time[i] + 1
    assert seen_done >= 3


def test_box_actions_are_rescaled_and_recorded_in_minus_one_one():
    inner = CountingEnv(box=True)
    env = amago.AmagoEnv(inner, "box")
    assert env.action_space.low.tolist() == [-1, -1] and env.action_space.high.tolist() == [1, 1]
    env.reset(seed=0)
    obs, *_ = env.step(np.array([0.5, -1.0], np.float32))
    np.testing.assert_allclose(inner.received[-1], [1.0, 0.0])  # [-2, 2] and [0, 10] scales
    np.testing.assert_allclose(obs["rl2"], [1.0, 0.5, -1.0])  # reward (env scale), then the [-1, 1] action


def test_unbounded_box_action_space_is_rejected():
    env = CountingEnv(box=True)
    env.action_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    with pytest.raises(ValueError, match="bounded"):
        amago.AmagoEnv(env, "x")


# -------------------------------------------------- already vectorized --------------------------------------------------
class BatchedCounting(gym.vector.VectorEnv):
    """N CountingEnvs stepped as one batch with numpy (the jax/gymnax style): obs = [t, 0]; reward 1 + 0.5 a
    (Discrete(3)) or the sum of the env-scale action (Box); actor i ends after lengths[i] steps, is reset inside
    the same step and hands back its last obs as info["final_obs"]."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, lengths, box=False):
        self.num_envs, self.lengths = len(lengths), np.array(lengths)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        box_space = gym.spaces.Box(
            np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32)
        )  # as CountingEnv's
        self.single_action_space = box_space if box else gym.spaces.Discrete(3)
        self.received = []

    def obs(self):
        return np.stack([self.t, np.zeros(self.num_envs)], 1).astype(np.float32)

    def reset(self, seed=None, options=None):
        self.t = np.zeros(self.num_envs)
        return self.obs(), {}

    def step(self, actions):
        self.received.append(actions.copy())
        self.t += 1
        box = isinstance(self.single_action_space, gym.spaces.Box)
        reward = actions.sum(1) if box else 1.0 + 0.5 * actions
        done = self.t >= self.lengths
        final = self.obs()
        self.t[done] = 0
        return self.obs(), reward, done, np.zeros_like(done), {"final_obs": final}


def per_env(lengths, box):
    fns = [lambda n=n: amago.AmagoEnv(CountingEnv(length=n, box=box), "c") for n in lengths]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


@pytest.mark.parametrize("box", [False, True])
def test_already_vectorized_matches_sync_vector_of_amago_envs(box):
    """What the loop reads from AmagoVecEnv(batched env) equals what SyncVectorEnv(AmagoEnv(env)) gives it: obs dict,
    rewards, dones, final_obs and final_info["env_name"] of finished actors, and the env-scale actions."""
    lengths = [3, 5, 4]
    batched, sync = amago.AmagoVecEnv(BatchedCounting(lengths, box), "c"), per_env(lengths, box)
    assert batched.single_action_space == sync.single_action_space
    assert batched.single_observation_space == sync.single_observation_space
    ob, _ = batched.reset(seed=0)
    os_, _ = sync.reset(seed=0)
    rng = np.random.default_rng(0)
    done_seen = 0
    for _ in range(13):
        np.testing.assert_array_equal(ob["rl2"], os_["rl2"])
        np.testing.assert_array_equal(ob["time"], os_["time"])
        np.testing.assert_array_equal(ob["obs"]["observation"][:, 0], os_["obs"]["observation"][:, 0])  # col 1: noise
        a = rng.uniform(-1, 1, (3, 2)).astype(np.float32) if box else rng.integers(0, 3, 3)
        ob, rb, tb, ub, ib = batched.step(a)
        os_, rs, ts, us, is_ = sync.step(a)
        np.testing.assert_allclose(rb, rs, rtol=1e-6)
        np.testing.assert_array_equal(tb, ts)
        np.testing.assert_array_equal(ub, us)
        for i in np.flatnonzero(tb | ub):
            done_seen += 1
            fb, fs = ib["final_obs"][i], is_["final_obs"][i]
            np.testing.assert_allclose(fb["rl2"], fs["rl2"], rtol=1e-6)
            assert fb["time"] == fs["time"] == lengths[i]
            assert fb["obs"]["observation"][0] == fs["obs"]["observation"][0] == lengths[i]
            assert ib["final_info"]["env_name"][i] == is_["final_info"]["env_name"][i] == "c"
    assert done_seen >= 6
    received_sync = np.stack([e.unwrapped.received for e in sync.envs], 1)  # (steps, N, ...) env-scale actions
    np.testing.assert_allclose(np.stack(batched.env.received), received_sync, rtol=1e-6)


def test_next_step_autoreset_env_is_rejected_clearly():
    """gymnasium's own CartPoleVectorEnv resets one step late (NEXT_STEP); the loop needs same-step resets."""
    with pytest.raises(ValueError, match="autoreset_mode SAME_STEP"):
        amago.make_vec_env("CartPole-v1", 4, "already_vectorized", 0)


def test_the_version_notice_prints_once_per_process():
    import subprocess
    import sys

    from conftest import ROOT

    code = "import amago_agent as a, common.args as c; c.resolve_env_ids(a.Args(env_id='LunarLander-v2'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("note: LunarLander-v2 is not registered") == 1
