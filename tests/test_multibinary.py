"""MultiBinary actions end to end: the env wrapper and the replay buffer carry the bits unchanged, and the agent's
loss uses a Bernoulli BC term without the (non-differentiable) online term."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from conftest import SMALL

import amago_agent as amago
from amago_agent import collate
from common.guards import read_trajectory
from tests.dummy_envs import BitsEnv


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
    data = read_trajectory(path, action_dim=3)
    np.testing.assert_array_equal(data["actions"], np.stack(sent))
    np.testing.assert_array_equal(data["rl2"][1:, 1:], np.stack(sent))
    window = next(iter(buffer))
    batch = collate([window])
    assert batch["actions"].dtype == np.float32 and batch["actions"].shape == (1, 6, 3)
    np.testing.assert_array_equal(batch["actions"][0], np.stack(sent))


def test_multibinary_agent_defaults_and_bc_term():
    space, obs_space = gym.spaces.MultiBinary(4), gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (3,))})
    small = dict(**SMALL, max_seq_len=6)
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
