"""The benchmark suites (envs/: Meta-World, BabyAI, Atari, Procgen, XLand-MiniGrid, DM Control): gymnasium's env
checker, seeding, each suite's defining rule, and a short run of both scripts on each."""

import itertools
import subprocess
import sys
from importlib.util import find_spec

import gymnasium as gym
import numpy as np
import pytest
from conftest import INF_BOUNDS, MULTITASK_SCRIPT, ROOT, SCRIPT, check_strict, record, run_script, same

import envs
from common.logs import read_scalars

P = envs.LOG_PREFIX


def needs(module):
    return pytest.mark.skipif(find_spec(module) is None, reason=f"{module} is not installed (requirements-suites.txt)")


# id -> (the package it needs, checker warnings to ignore)
SUITE_IDS = {
    "DMC-cheetah-run-v0": ("dm_control", [INF_BOUNDS]),  # dm_control declares no observation bounds
    "DMC-walker-walk-v0": ("dm_control", [INF_BOUNDS]),
    "Atari-MultiGame-v0": ("ale_py", []),
    "BabyAI-MT-Easy-v0": ("minigrid", []),
    "BabyAI-MT-v0": ("minigrid", []),
    "Procgen-Memory-TwoShot-v0": ("procgen", []),
    "MetaWorld-ML1-reach-v0": ("metaworld", [INF_BOUNDS]),  # Meta-World's object positions are unbounded
}
PARAMS = [pytest.param(i, ig, marks=needs(m), id=i) for i, (m, ig) in SUITE_IDS.items()]


@pytest.mark.parametrize("env_id, ignore", PARAMS)
def test_suite_env_passes_the_env_checker_and_is_seeded(env_id, ignore):
    check_strict(gym.make(env_id).unwrapped, ignore)
    space = gym.make(env_id).action_space
    space.seed(0)
    acts = [space.sample() for _ in range(60)]
    a, b = record(gym.make(env_id), 5, acts), record(gym.make(env_id), 5, acts)
    assert same(a, b)
    assert any(not same(a, record(gym.make(env_id), s, acts)) for s in (6, 7, 8))


def test_without_its_package_a_suite_module_imports_and_its_env_names_the_pip_line():
    """In a process where no suite package can be imported: every module imports, and making an env fails with the
    install line."""
    code = """
import sys
for m in ("dm_control", "ale_py", "minigrid", "procgen", "metaworld", "xminigrid"):
    sys.modules[m] = None  # import m -> ImportError
import gymnasium as gym
import envs, envs.atari, envs.babyai, envs.dmc, envs.metaworld_env, envs.procgen_env, envs.xland
for env_id in ("DMC-cheetah-run-v0", "Atari-Pong-v0", "BabyAI-MT-Easy-v0", "Procgen-Maze-TwoShot-v0",
               "MetaWorld-ML1-reach-v0"):
    try:
        gym.make(env_id)
    except ImportError as e:
        print(env_id, "|", e)
try:
    gym.make_vec("XLand-Trivial-R1-9x9-v0", 2, vectorization_mode="vector_entry_point")
except ImportError as e:
    print("XLand |", e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(line.split(" | ") for line in out.stdout.splitlines() if " | " in line)
    assert "`pip install dm-control`" in lines["DMC-cheetah-run-v0"]
    assert "`pip install ale-py`" in lines["Atari-Pong-v0"]
    assert "`pip install minigrid`" in lines["BabyAI-MT-Easy-v0"]
    assert "`pip install --no-deps procgen-mirror==0.10.7" in lines["Procgen-Maze-TwoShot-v0"]
    assert "`pip install metaworld==3.1.1`" in lines["MetaWorld-ML1-reach-v0"]
    assert "`pip install xminigrid`" in lines["XLand"]


# ----------------------------------------------------- Meta-World -----------------------------------------------------
@needs("metaworld")
def test_metaworld_ml1_goal_changes_between_tasks_not_between_attempts():
    from envs.metaworld_env import MetaWorld

    env = MetaWorld("reach-v3", "train", k=3, max_steps=10)  # 10-step attempts keep it short
    assert env.observation_space.shape == (36 + 2,) and env.env_name == "MetaWorld-reach-v3"
    goals, info = [], {}
    for rollout in range(3):
        obs, _ = env.reset(seed=rollout)
        per_attempt = [env.env.goal]
        for t in range(30):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            if obs[-2] == 1 and not term:  # soft reset: the next attempt, same task
                per_attempt.append(env.env.goal)
            assert term == (t == 29) and not trunc
        assert len(per_attempt) == 3 and all(np.array_equal(g, per_attempt[0]) for g in per_attempt)
        goals.append(per_attempt[0])
    assert not np.array_equal(goals[0], goals[1]) and not np.array_equal(goals[1], goals[2])
    assert {f"{P} attempt {i} {m}" for i in range(3) for m in ("return", "success")} == set(info)
    assert all(info[f"{P} attempt {i} success"] in (0.0, 1.0) for i in range(3))
    # the test split's goals are other goals of the same family
    test_env = MetaWorld("reach-v3", "test", k=1)
    train_goals, test_goals = ({t.data for t in e.env.tasks["reach-v3"]} for e in (env, test_env))
    assert len(train_goals) == len(test_goals) == 50 and not train_goals & test_goals


@needs("metaworld")
@pytest.mark.parametrize(
    "env_id, steps",
    [
        ("MetaWorld-ML1-reach-Steps50-v0", 50),
        ("MetaWorld-ML1-reach-Steps40-NoPuck-v0", 40),
        ("MetaWorld-ML1-reach-Steps30-NoPuck-v0", 30),
    ],
)
def test_metaworld_reach_short_attempts_are_three_attempts_of_their_steps(env_id, steps):
    env = gym.make(f"envs:{env_id}")
    obs, _ = env.reset(seed=0)
    flags, term = [], False
    for t in range(3 * steps):
        assert not term, f"the rollout ended early, at step {t}"
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        flags.append(obs[-2])
    assert term and not trunc and [t + 1 for t, f in enumerate(flags) if f == 1] == [steps, 2 * steps, 3 * steps]
    assert env.observation_space.shape == ((8 if "NoPuck" in env_id else 36) + 2,)  # NoPuck: hand and gripper only
    # the hand driven straight at the (hidden) goal: every attempt starts it alike at the same goal, so all three
    # attempts end alike; at 40 and 50 steps they reach it at these seeds' goals (this drive aims the hand's body, not
    # the point between the fingers that success is measured from: at 40 steps it reaches 49 of the 50 train goals,
    # at 30, 21)
    inner, outcomes = env.unwrapped.env, []
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        for _ in range(3 * steps):
            obs, r, term, trunc, info = env.step(np.append(np.clip((inner.goal - obs[:3]) * 100, -1, 1), 0))
        success = [info[f"{P} attempt {i} success"] for i in range(3)]
        assert term and success in ([1.0] * 3, [0.0] * 3), success
        outcomes.append(success[0])
    assert steps < 40 or outcomes == [1.0] * 3


@needs("metaworld")
def test_metaworld_success_bonus_adds_to_the_steps_within_the_success_radius():
    from envs.metaworld_env import MetaWorldTasks

    kw = gym.registry["MetaWorld-ML1-reach-Steps30-NoPuck-Bonus-v0"].kwargs
    plain_kw = gym.registry["MetaWorld-ML1-reach-Steps30-NoPuck-v0"].kwargs
    assert kw == {**plain_kw, "success_bonus": 10.0}  # the same env but for the bonus
    plain, bonus = MetaWorldTasks(**plain_kw), MetaWorldTasks(**kw)
    rewards, within = {plain: [], bonus: []}, {plain: [], bonus: []}
    for env, task in itertools.product((plain, bonus), plain.tasks["reach-v3"][:5]):
        env.env.set_task(task)
        env.reset()
        inside = 0
        for _ in range(30):  # driven at the point between the fingers (success is measured there), and away again
            toward = np.clip((env.goal - env.env.tcp_center) * 100, -1, 1)
            r = env.step(np.append(toward if inside < 2 else -toward, 0))[1]
            hit = float(np.linalg.norm(env.env.tcp_center - env.goal) <= 0.05)
            inside += hit
            rewards[env].append(r)
            within[env].append(hit)
    hits = within[plain]
    assert within[bonus] == hits and 0 < sum(hits) < len(hits)  # the same steps, some within the radius, some not
    left = [t for t in range(1, len(hits)) if hits[t - 1] and not hits[t] and t % 30]  # left it within an attempt
    assert left  # so the bonus goes with this step's success, not with the attempt's success so far
    np.testing.assert_allclose(np.subtract(rewards[bonus], rewards[plain]), 10.0 * np.array(hits), atol=1e-9)


@needs("metaworld")
def test_metaworld_sparse_reach_pays_one_per_step_within_the_success_radius_and_nothing_elsewhere():
    from envs.metaworld_env import MetaWorldTasks

    kw = gym.registry["MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0"].kwargs
    assert kw == {**gym.registry["MetaWorld-ML1-reach-Steps50-NoPuck-v0"].kwargs, "sparse": True}
    env, hits, rewards = MetaWorldTasks(**kw), [], []
    for task in env.tasks["reach-v3"][:3]:
        env.env.set_task(task)
        env.reset()
        inside = 0
        for _ in range(50):  # driven at the point between the fingers, held there a few steps, then away again
            toward = np.clip((env.goal - env.env.tcp_center) * 100, -1, 1)
            _, r, _, _, info = env.step(np.append(toward if inside < 4 else -toward, 0))
            hit = float(np.linalg.norm(env.env.tcp_center - env.goal) <= 0.05)
            inside += hit
            hits.append(hit)
            rewards.append(r)
        assert info["success"] == 1.0  # the attempt's success stays once reached
    assert 0 < sum(hits) < len(hits) and rewards == hits  # 1 within the radius, 0 elsewhere, also after leaving it
    test_kw = gym.registry["MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-Test-v0"].kwargs
    assert test_kw == {**kw, "split": "test"}


@needs("metaworld")
def test_metaworld_sparse10cm_reach_pays_one_less_the_distance_over_10cm_within_10cm():
    from envs.metaworld_env import MetaWorldTasks

    kw = gym.registry["MetaWorld-ML1-reach-Steps50-NoPuck-Sparse10cm-v0"].kwargs
    assert kw == {**gym.registry["MetaWorld-ML1-reach-Steps50-NoPuck-v0"].kwargs, "reward_radius": 0.1}
    env, dists, rewards = MetaWorldTasks(**kw), [], []
    for task in env.tasks["reach-v3"][:2]:
        env.env.set_task(task)
        env.reset()
        for t in range(50):  # toward the goal, then away
            toward = np.clip((env.goal - env.env.tcp_center) * 100, -1, 1)
            rewards.append(env.step(np.append(toward if t < 30 else -toward, 0))[1])
            dists.append(np.linalg.norm(env.env.tcp_center - env.goal))
    dists = np.array(dists)
    assert (dists > 0.1).any() and (dists < 0.05).any()  # outside the radius, and within success's
    np.testing.assert_allclose(rewards, np.maximum(0.0, 1.0 - dists / 0.1), atol=1e-9)
    for bad in ({"reward_radius": -0.1}, {"reward_radius": 0.1, "sparse": True}):
        with pytest.raises(ValueError, match="reward_radius must be >= 0 .* not beside sparse=True"):
            MetaWorldTasks("reach-v3", max_steps=50, **bad)


@needs("metaworld")
def test_metaworld_reach_first_observation_names_the_goal_unless_the_puck_is_hidden():
    from envs.metaworld_env import MetaWorldTasks

    full, hidden = MetaWorldTasks("reach-v3", max_steps=50), MetaWorldTasks("reach-v3", max_steps=50, hide_objects=True)
    first = {}
    for env in (full, hidden):
        firsts = []
        for task in env.tasks["reach-v3"]:
            env.env.set_task(task)
            firsts.append(env.reset()[0])
        first[env] = np.array(firsts)  # (50 train goals, obs dim)
    # with the puck, the 50 train goals start from 50 different observations: the first step identifies the goal
    assert len({o.tobytes() for o in first[full]}) == 50
    # without it they all start alike (hand, gripper, and their copies a step earlier: the full observation's slots)
    assert hidden.observation_space.shape == (8,) and len({o.tobytes() for o in first[hidden]}) == 1
    np.testing.assert_array_equal(first[hidden], first[full][:, [0, 1, 2, 3, 18, 19, 20, 21]])
    env = gym.make("envs:MetaWorld-ML1-reach-Steps50-NoPuck-Test-v0")
    assert env.observation_space.shape == (8 + 2,) and env.unwrapped.env.tasks["reach-v3"][0].data not in {
        t.data for t in full.tasks["reach-v3"]
    }


@needs("metaworld")
def test_metaworld_ml10_train_and_test_families():
    from envs.metaworld_env import MetaWorld

    train, test = gym.make("MetaWorld-ML10-Train-v0").unwrapped, gym.make("MetaWorld-ML10-Test-v0").unwrapped
    assert len(train.env.families) == 10 and len(test.env.families) == 5
    assert not set(train.env.families) & set(test.env.families) and "reach-v3" in train.env.families
    names = {(train.reset(seed=s), train.env_name)[1] for s in range(20)}
    assert len(names) > 3 and names <= {f"MetaWorld-{f}" for f in train.env.families}
    with pytest.raises(ValueError, match="unknown Meta-World benchmark 'reach'; accepted: ml10, ml45, .*reach-v3"):
        MetaWorld("reach")


# ------------------------------------------------------- BabyAI -------------------------------------------------------
@needs("minigrid")
def test_babyai_mission_tokens_decode_to_the_mission_and_success_is_per_level():
    from envs.babyai import BabyAI, decode_mission, encode_mission

    env = BabyAI(("GoToObj", "PickupLoc", "PutNextLocal", "OpenDoor"))
    levels, infos = set(), []
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        assert decode_mission(obs["mission"]) == env.env.mission  # e.g. "put the red key next to the blue ball"
        assert obs["grid"].shape == (147,) and obs["direction"].sum() == 1
        levels.add(env.env_name)
        for _ in range(2000):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            if term or trunc:
                break
        infos.append((env.env_name, info[f"{P} success"], r))
    assert levels == {"BabyAI-GoToObj", "BabyAI-PickupLoc", "BabyAI-PutNextLocal", "BabyAI-OpenDoor"}
    assert all(s == float(r > 0) for _, s, r in infos)
    assert (
        decode_mission(encode_mission("open the red door, then go to a ball")) == "open the red door, then go to a ball"
    )
    assert encode_mission("go to the zebra")[3] == 1  # unknown word
    with pytest.raises(ValueError, match="unknown BabyAI level 'GoToMoon'; accepted: .*GoToObj"):
        BabyAI("GoToMoon")


# ------------------------------------------------------- Atari -------------------------------------------------------
@needs("ale_py")
def test_atari_frame_skip_grayscale_unclipped_rewards_and_game_names():
    from envs.atari import Atari

    env = Atari(("Pong", "Breakout"))
    names = set()
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        names.add(env.env_name)
    assert names == {"Atari-Pong", "Atari-Breakout"} and obs.shape == (1, 84, 84) and obs.dtype == np.uint8
    ale = env.env.unwrapped.ale
    before = ale.getEpisodeFrameNumber()
    env.step(0)
    assert ale.getEpisodeFrameNumber() - before == 4  # frame skip 4
    inner = env.env.step

    def scores_5(a):  # every frame scores 5
        obs, _, term, trunc, info = inner(a)
        return obs, 5.0, term, trunc, info

    env.env.step = scores_5
    _, r, *_ = env.step(0)
    assert r == 4 * 5.0  # summed over the 4 skipped frames and never clipped to 1
    with pytest.raises(ValueError, match="unknown Atari game 'Pongg'"):
        Atari("Pongg")


# ------------------------------------------------------ Procgen ------------------------------------------------------
@needs("procgen")
def test_procgen_two_shot_replays_the_level():
    from envs.procgen_env import Procgen

    env = Procgen(("maze", "heist"), "memory", attempts=2)
    for seed in range(2):
        obs, _ = env.reset(seed=seed)
        first, starts, rng = obs["rgb"], [], np.random.default_rng(seed)
        for _ in range(5000):
            obs, r, term, trunc, info = env.step(int(rng.integers(15)))
            if obs["attempt"][0] == 1:  # an attempt ended: obs is the level's first frame again
                starts.append(obs["rgb"])
            if term:
                break
        assert len(starts) == 2 and np.array_equal(starts[0], first)  # the second attempt replays the level
        assert set(info) == {f"{P} attempt {i} {m}" for i in range(2) for m in ("return", "success")}
    other, _ = env.reset(seed=7)
    assert not np.array_equal(other["rgb"], first)  # a new rollout draws another level
    with pytest.raises(ValueError, match="unknown Procgen distribution mode 'memoryy'"):
        Procgen("maze", "memoryy")


# --------------------------------------------------- XLand-MiniGrid ---------------------------------------------------
@needs("xminigrid")
def test_xland_ruleset_per_trial_of_k_episodes():
    from envs.xland import XLandVecEnv

    N, k = 8, 2
    env = XLandVecEnv(N, "R1-9x9", k=k)
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space
    goal = np.array(env.ruleset.goal)
    episodes, trials, rng = np.zeros(N, int), np.zeros(N, int), np.random.default_rng(0)
    returns, ended = np.zeros((N, k)), []  # per attempt, counted here from the rewards
    for _ in range(800):
        obs, rew, term, trunc, info = env.step(rng.integers(0, 6, N))
        returns[np.arange(N), episodes % k] += rew
        for i in np.flatnonzero(term):  # a trial's end reports each attempt's return and success
            for j in range(k):
                assert np.isclose(info[f"{P} attempt {j} return"][i], returns[i, j])
                assert info[f"{P} attempt {j} success"][i] == (returns[i, j] > 0)
            ended.append(returns[i].copy())
            returns[i] = 0
        new_goal = np.array(env.ruleset.goal)
        ep_end = obs["extra"][:, 4] == 1
        episodes += ep_end
        changed = (new_goal != goal).any(1)
        assert not (changed & ~term).any()  # the ruleset never changes inside a trial
        assert (term == (ep_end & (episodes % k == 0))).all()  # the trial ends after exactly k episodes
        trials += term
        goal = new_goal
    assert trials.sum() > N and not trunc.any()
    assert np.sum(ended) > 0  # random actions pick up the goal now and then: the check above saw rewards
    assert np.array_equal(info["final_obs"]["extra"][:, 4], ep_end)  # the true last observation, before the reset
    a = record_vec(XLandVecEnv(N, "R1-9x9", k=k), 3)
    assert same(a, record_vec(XLandVecEnv(N, "R1-9x9", k=k), 3)) and not same(a, record_vec(env, 4))


@needs("xminigrid")
def test_xland_observation_follows_the_agent():
    """What the agent sees changes as it acts: the heading one-hot is the env's direction and a turn moves it by one;
    the 5 x 5 view changes when the agent turns; the attempt index steps by 1/k at each soft reset."""
    from envs.xland import XLandVecEnv

    N, k = 8, 4
    env = XLandVecEnv(N, "R1-9x9", k=k)
    obs, _ = env.reset(seed=0)
    rng, attempts, view_changed = np.random.default_rng(0), set(), 0
    for _ in range(3 * 243 + 10):  # 243-step attempts: no object is picked up with these actions
        heading = np.array(env.ts.state.agent.direction)
        assert (obs["extra"][np.arange(N), heading] == 1).all() and (obs["extra"][:, :4].sum(1) == 1).all()
        a = rng.integers(0, 3, N)  # forward, turn clockwise, turn counterclockwise
        nxt, rew, term, trunc, info = env.step(a)
        same_ep = nxt["extra"][:, 4] == 0
        turn = (a > 0) & same_ep
        expected = (heading + np.where(a == 1, 1, -1)) % 4
        assert (np.argmax(nxt["extra"][:, :4], 1)[turn] == expected[turn]).all()
        view_changed += (nxt["grid"] != obs["grid"]).any(1)[turn].sum()
        attempts |= set(nxt["extra"][:, 5].tolist())
        soft = ~same_ep & ~term
        assert np.allclose(nxt["extra"][soft, 5] - obs["extra"][soft, 5], 1 / k)
        obs = nxt
    assert attempts == {i / k for i in range(k)} and view_changed > 0


def record_vec(env, seed, steps=40):
    obs, _ = env.reset(seed=seed)
    acts = np.random.default_rng(0).integers(0, 6, (steps, env.num_envs))
    return [obs] + [env.step(a)[:4] for a in acts]


# ----------------------------------------------------- DM Control -----------------------------------------------------
@needs("dm_control")
def test_dmc_box_actions_and_time_limit_truncation():
    env = gym.make("DMC-cheetah-run-v0").unwrapped
    assert env.action_space == gym.spaces.Box(-1, 1, (6,), np.float32) and env.observation_space.shape == (17,)
    env.reset(seed=0)
    steps = 0
    for steps in range(1, 1001):  # noqa: B007  (the step count is checked after the loop)
        _, r, term, trunc, _ = env.step(env.action_space.sample())
        assert 0 <= r <= 1 and not term
        if trunc:
            break
    assert steps == 1000 and trunc
    with pytest.raises(ValueError, match="unknown DM Control task cheetah-fly; accepted: .*cheetah-run"):
        envs.dmc.DMControl("cheetah", "fly")


# ------------------------------------------------ both scripts, each suite ------------------------------------------------
SMOKE = {
    "DMC-cheetah-run-v0": ("dm_control", {}),
    "Atari-MultiGame-v0": ("ale_py", dict(tstep_encoder="cnn", cnn_channels=(8, 8, 8))),
    "BabyAI-MT-Easy-v0": ("minigrid", dict(eval_interval=2, eval_episodes=4)),
    "Procgen-Memory-TwoShot-v0": ("procgen", dict(tstep_encoder="cnn", cnn_channels=(8, 8, 8))),
    "MetaWorld-ML1-reach-v0": ("metaworld", {}),
    "XLand-Trivial-R1-9x9-v0": ("xminigrid", dict(env_mode="already_vectorized", num_envs=16)),
}


@pytest.mark.parametrize("script", [SCRIPT, MULTITASK_SCRIPT], ids=lambda p: p.stem)
@pytest.mark.parametrize("env_id, extra", [pytest.param(i, x, marks=needs(m), id=i) for i, (m, x) in SMOKE.items()])
def test_smoke_suite(tmp_path, script, env_id, extra):
    args = dict(env_id=f"envs:{env_id}", traj_encoder="transformer", total_timesteps=192, timesteps_per_epoch=24,
                batches_per_epoch=2, eval_interval=0, run_name="r")  # fmt: skip
    run_script(tmp_path, script, **{**args, **extra})
    scalars = read_scalars(tmp_path / "runs" / "r")
    if env_id.startswith("BabyAI"):  # eval success comes out per level
        levels = {k.split("/")[1] for k in scalars if k.startswith("eval/BabyAI-") and k.endswith("/success")}
        assert levels and levels <= {"BabyAI-GoToRedBallNoDists", "BabyAI-GoToObj"}
