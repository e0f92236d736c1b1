"""The variants of issue 3 beyond the default agent: sliding-window attention and its bounded rollout cache, the
learned position embedding, mamba-ssm's kernel interface, multi-binary actions end to end, and already-vectorized
environments (a numpy batch env and gymnax). The rollout-equals-forward checks of every encoder and attention variant
live in tests/test_sequence_models.py."""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import amago_agent as amago
from tests.dummy_envs import BitsEnv, CountingEnv

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "amago_agent.py"
TINY = [
    "--total-timesteps",
    "64",
    "--timesteps-per-epoch",
    "8",
    "--batches-per-epoch",
    "2",
    "--batch-size",
    "4",
    "--eval-episodes",
    "2",
    "--eval-interval",
    "2",
    "--max-seq-len",
    "8",
    "--traj-save-len",
    "16",
    "--d-model",
    "16",
    "--n-layers",
    "1",
    "--n-heads",
    "2",
    "--d-ff",
    "32",
    "--tstep-hidden",
    "16",
    "--tstep-dim",
    "16",
    "--actor-hidden",
    "16",
    "--critic-hidden",
    "16",
]


def transformer(**kw):
    args = amago.Args(traj_encoder="transformer", d_model=16, n_layers=2, n_heads=2, d_ff=32, max_seq_len=12, **kw)
    torch.manual_seed(0)
    return amago.make_traj_encoder(args, 6).eval()


# ------------------------------------------------ sliding-window attention ------------------------------------------------
def naive_window_attention(q, k, v, w):
    """One query at a time: softmax over the keys j with i - w < j <= i, scaled by 1/sqrt(E)."""
    out = torch.zeros_like(q)
    for i in range(q.shape[2]):
        keys = slice(max(0, i - w + 1), i + 1)
        scores = q[:, :, i : i + 1] @ k[:, :, keys].transpose(-1, -2) / math.sqrt(q.shape[-1])  # (B, H, 1, n)
        out[:, :, i : i + 1] = scores.softmax(-1) @ v[:, :, keys]
    return out


def test_sliding_window_attention_equals_naive_loop_and_differs_from_full():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 3, 2, 20, 8).unbind(0)  # L = 20 > w = 5
    windowed = amago.attention(q, k, v, window=5)
    torch.testing.assert_close(windowed, naive_window_attention(q, k, v, 5), atol=1e-5, rtol=0)
    full = amago.attention(q, k, v)
    torch.testing.assert_close(full, naive_window_attention(q, k, v, 20), atol=1e-5, rtol=0)
    torch.testing.assert_close(
        windowed[:, :, :5], full[:, :, :5], atol=1e-6, rtol=0
    )  # the first w queries see all keys
    assert (windowed[:, :, 5:] - full[:, :, 5:]).abs().amax(dim=(0, 1, 3)).min() > 1e-3  # every later query differs


def test_windowed_transformer_equals_naive_per_query_loop():
    """The whole encoder with --window-size 4 on 20 steps, against the same layers with the naive attention loop."""
    enc = transformer(window_size=4)
    x, time = torch.randn(2, 20, 6), torch.arange(20).repeat(2, 1)
    with torch.no_grad():
        out = enc(x, time)
        h = enc.embed(x, time)
        for layer in enc.layers:
            q, k, v = layer.split_heads(layer.norm1(h))
            h = layer.mlp_block(h, naive_window_attention(q, k, v, 4))
        ref = enc.out_norm(h)
        full = enc(x, time, window=20)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)
    assert (out[:, 4:] - full[:, 4:]).abs().max() > 1e-3  # the window really drops old steps


def test_window_bounds_the_rollout_cache():
    """The KV cache holds window_size steps (max_seq_len without a window) and does not grow over a long rollout."""
    enc, default = transformer(window_size=4), transformer()
    hidden = enc.init_hidden(3, "cpu")
    sizes = [t.numel() for t in hidden]
    assert hidden[0].shape == (2, 3, 2, 4, 8)  # (layers, N, heads, window, head dim)
    assert default.init_hidden(3, "cpu")[0].shape[3] == 12
    with torch.no_grad():
        for t in range(100):  # 25x the window
            _, hidden = enc.step(torch.randn(3, 1, 6), torch.full((3, 1), t), hidden)
            assert [h.numel() for h in hidden] == sizes
    assert hidden[2].tolist() == [100] * 3


def test_window_size_is_checked():
    with pytest.raises(ValueError, match="--window-size 40 must lie in 1 .. --max-seq-len 32"):
        amago.check_args(amago.Args(window_size=40, max_seq_len=32))
    amago.check_args(amago.Args(window_size=0))  # 0 means full attention


# ---------------------------------------------- learned position embedding ----------------------------------------------
def test_learned_position_embedding_is_a_table_of_absolute_timesteps():
    enc = transformer(pos_emb="learned", max_time_idx=10)
    assert enc.pos.weight.shape == (10, 16)
    x = torch.zeros(1, 14, 6)
    with torch.no_grad():
        emb = enc.embed(x, torch.arange(14)[None]) - enc.inp(x)  # dropout is off in eval mode
    torch.testing.assert_close(emb[0, :10], enc.pos.weight)  # row t for timestep t
    torch.testing.assert_close(emb[0, 10:], enc.pos.weight[9].expand(4, -1))  # t >= max_time_idx: the last row (clamp)
    with pytest.raises(ValueError, match="--pos-emb 'rope'"):
        transformer(pos_emb="rope")


# --------------------------------------------------------- mamba ---------------------------------------------------------
def selective_scan_like_mamba_ssm(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    """mamba-ssm's selective_scan_fn contract (its selective_scan_ref, variable B and C): u, delta, z (B, D, L),
    A (D, N), B and C (B, N, L), D (D,); with the dtype rules of its CUDA kernel: u, delta, B, C, z share one dtype,
    A and D are fp32. Returns (y + D u) * silu(z) as (B, D, L)."""
    assert u.dtype == delta.dtype == B.dtype == C.dtype == z.dtype and A.dtype == D.dtype == torch.float32
    assert u.shape == delta.shape == z.shape and B.shape == C.shape == (u.shape[0], A.shape[1], u.shape[2])
    assert delta_bias is None and not delta_softplus  # our dt arrives already softplus'd
    u, delta, B, C, z = (t.float() for t in (u, delta, B, C, z))
    x = u.new_zeros(u.shape[0], A.shape[0], A.shape[1])
    ys = []
    for i in range(u.shape[2]):
        x = torch.exp(delta[:, :, i, None] * A) * x + delta[:, :, i, None] * B[:, None, :, i] * u[:, :, i, None]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, :, i]))
    return (torch.stack(ys, dim=2) + u * D[:, None]) * torch.nn.functional.silu(z)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mamba_kernel_gets_the_scans_parameters_in_its_layout(monkeypatch, dtype):
    """No GPU here: the fused path is checked against mamba-ssm's documented interface. Under bf16 autocast, u, B, C
    and z are bf16 while softplus keeps dt in fp32: the adapter must hand the kernel one dtype."""
    monkeypatch.setattr(amago, "_selective_scan", selective_scan_like_mamba_ssm)
    torch.manual_seed(0)
    block = amago.MambaBlock(d_model=8, d_state=4).eval()
    x = torch.randn(2, 7, 8)
    with torch.no_grad():
        u, z = block.in_proj(x).chunk(2, dim=-1)
        u = torch.nn.functional.silu(block.conv(u.transpose(1, 2))[..., :7].transpose(1, 2))
        dt, Bm, Cm = block.ssm_params(u)
        A = -torch.exp(block.A_log)
        assert amago._mamba_kernel() is amago._mamba_fused_scan
        y = amago._mamba_fused_scan(u.to(dtype), dt, A, Bm.to(dtype), Cm.to(dtype), block.D, z.to(dtype))
        assert y.shape == u.shape
        torch.testing.assert_close(
            block.out_proj(y.float()), block(x), atol=1e-5 if dtype == torch.float32 else 5e-2, rtol=0
        )


# ------------------------------------------------- multi-binary actions -------------------------------------------------
def test_multibinary_actions_round_trip_through_env_and_buffer(tmp_path):
    """Bits chosen by the agent reach the env as int8, come back in rl2, and are stored and sampled unchanged."""
    inner = BitsEnv(n=3, length=6)
    env = amago.AmagoEnv(inner, "bits")
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=6, action_dim=3, discrete=False)
    writer = amago.TrajectoryWriter(1, buffer, save_len=100, max_seq_len=6, rng=np.random.default_rng(0))
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    writer.start(0, obs)
    sent = []
    for _t in range(6):
        a = rng.integers(0, 2, 3).astype(np.float32)  # what Actor.sample / the bit-flip exploration hand over
        sent.append(a)
        obs, r, term, trunc, _ = env.step(a)
        np.testing.assert_array_equal(obs["rl2"][1:], a)
        writer.step(0, a, r, term, obs, term or trunc)
    assert all(rec.dtype == np.int8 for rec in inner.received)
    np.testing.assert_array_equal(np.stack(inner.received), np.stack(sent))
    (path,) = buffer.files()
    data = buffer.load(path)
    np.testing.assert_array_equal(data["actions"], np.stack(sent))
    np.testing.assert_array_equal(data["rl2"][1:, 1:], np.stack(sent))
    window = next(iter(buffer))
    batch = amago.collate([window])
    assert batch["actions"].dtype == np.float32 and batch["actions"].shape == (1, 6, 3)
    np.testing.assert_array_equal(batch["actions"][0], np.stack(sent))


def test_multibinary_agent_defaults_and_bc_term():
    space, obs_space = gym.spaces.MultiBinary(4), gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (3,))})
    small = dict(
        d_model=16,
        n_layers=1,
        n_heads=2,
        d_ff=32,
        tstep_hidden=16,
        tstep_dim=16,
        actor_hidden=16,
        critic_hidden=16,
        max_seq_len=6,
    )
    agent = amago.Agent(amago.Args(**small), obs_space, space)
    assert agent.online_coeff == 0.0 and agent.kind == "multibinary"  # the DPG term is off by default
    assert amago.Agent(amago.Args(**small), obs_space, gym.spaces.Discrete(3)).online_coeff == 1.0
    with pytest.raises(ValueError, match="--online-coeff 0.5: MultiBinary actions are not differentiable"):
        amago.Agent(amago.Args(online_coeff=0.5, **small), obs_space, space)

    # BC term: the mean over bits of Bernoulli log-probs
    params, a = torch.randn(2, 5, agent.actor.G, 4), torch.randint(0, 2, (2, 5, 1, 4)).float()
    expect = torch.distributions.Bernoulli(logits=params).log_prob(a.expand_as(params)).mean(-1)
    torch.testing.assert_close(agent.actor.log_prob(params, a), expect)

    # the whole loss: critics see the bits, the actor learns from the filtered BC term alone
    g = torch.Generator().manual_seed(0)
    B, L = 3, 6
    batch = {
        "obs": {"observation": torch.randn(B, L, 3, generator=g)},
        "rl2": torch.randn(B, L, 5, generator=g),
        "time": torch.arange(L).repeat(B, 1),
        "mask": torch.ones(B, L, dtype=torch.bool),
        "actions": torch.randint(0, 2, (B, L - 1, 4), generator=g).float(),
        "rewards": torch.randn(B, L - 1, generator=g),
        "terminated": torch.zeros(B, L - 1, dtype=torch.bool),
    }
    loss, _ = agent(batch)
    loss.backward()
    assert torch.isfinite(loss)
    assert any(p.grad is not None and p.grad.abs().max() > 0 for p in agent.actor.parameters())
    assert any(p.grad is not None and p.grad.abs().max() > 0 for p in agent.critics.parameters())


def test_hide_rl2_makes_the_agent_blind_to_previous_reward_and_action():
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (3,))})
    small = dict(
        d_model=16,
        n_layers=1,
        n_heads=2,
        d_ff=32,
        tstep_hidden=16,
        tstep_dim=16,
        actor_hidden=16,
        critic_hidden=16,
        max_seq_len=6,
        traj_encoder="gru",
    )
    g = torch.Generator().manual_seed(0)
    obs, time = {"observation": torch.randn(4, 3, generator=g)}, torch.zeros(4, dtype=torch.long)
    rl2s = [torch.zeros(4, 4), torch.randn(4, 4, generator=g)]  # a rollout's first step vs. an informative one
    for hide in (False, True):
        torch.manual_seed(0)
        agent = amago.Agent(amago.Args(hide_rl2=hide, **small), obs_space, gym.spaces.Discrete(3))
        s = [
            agent.traj.step(
                agent.embed({k: v.unsqueeze(1) for k, v in obs.items()}, r.unsqueeze(1)),
                time.unsqueeze(1),
                agent.traj.init_hidden(4, "cpu"),
            )[0]
            for r in rl2s
        ]
        assert torch.equal(s[0], s[1]) == hide


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


# ------------------------------------------------------ smoke runs ------------------------------------------------------
def run_script(tmp_path, *flags):
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "",
        "OMP_NUM_THREADS": "1",
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    }  # one thread for jax as well
    cmd = [sys.executable, str(SCRIPT), *TINY, *flags]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "checkpoint.pt").exists()
    return [np.load(f) for f in (tmp_path / "buffers" / run.name / "fifo").glob("*.npz")]


def test_smoke_multibinary_with_window_and_learned_positions(tmp_path):
    files = run_script(
        tmp_path,
        "--env-id",
        "tests.dummy_envs:DummyMultiBinary-v0",
        "--num-envs",
        "2",
        "--window-size",
        "4",
        "--pos-emb",
        "learned",
        "--max-time-idx",
        "4",
    )
    assert files and all(f["actions"].shape[1] == 3 and set(np.unique(f["actions"])) <= {0.0, 1.0} for f in files)


@pytest.mark.skipif(importlib.util.find_spec("gymnax") is None, reason="gymnax is not installed (requirements.txt)")
def test_smoke_gymnax_already_vectorized_64_actors(tmp_path):  # (not imported here: jax's threads and fork do not mix)
    files = run_script(
        tmp_path,
        "--env-id",
        "envs.gymnax_env:gymnax-MemoryChain-bsuite",
        "--env-mode",
        "already_vectorized",
        "--num-envs",
        "64",
        "--total-timesteps",
        "512",
        "--eval-interval",
        "1",
    )
    assert len(files) >= 64  # every actor finished its 6-step episode and saved it
    for f in files:
        np.testing.assert_array_equal(f["time"], np.arange(len(f["time"])))  # whole episodes, from the reset obs on
        assert f["obs_observation"].shape == (len(f["time"]), 3) and f["terminated"][-1]
        # obs[0] = 1 - t/5: the stored last obs is gymnax's true final obs (0), not the next episode's reset obs (1)
        assert f["obs_observation"][0, 0] == 1 and abs(f["obs_observation"][-1, 0]) < 1e-6
