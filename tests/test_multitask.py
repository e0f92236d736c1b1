"""amago_multitask.py (AMAGO-2's MultiTaskAgent): the two-hot critic, one-hot action samples, the loss, and its
benchmark env, MultiScaleBandit-v0. Its short training run is in tests/test_training_run.py."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import make_agent, random_batch
from gymnasium.utils.env_checker import check_env

import amago_multitask as mt
from envs.multiscale import MultiScale


def make_critics(num_bins=128, return_range=(-1e5, 1e5), **kw):
    gammas = torch.tensor([0.9, 0.99, 0.999])
    return mt.CriticEnsemble(
        d_state=6,
        action_dim=2,
        gammas=gammas,
        num_critics=4,
        d_hidden=8,
        num_bins=num_bins,
        return_range=return_range,
        **kw,
    )


# ------------------------------------------------------ two-hot ------------------------------------------------------
def test_two_hot_encode_decode_is_exact_inside_the_range():
    critics = make_critics()
    y = torch.tensor([-99_000.0, -5000, -37.5, -1, -0.25, 0, 1e-3, 0.6, 9.99, 123.4, 6000, 99_999])
    labels = critics.two_hot(y)  # (12, 128)
    torch.testing.assert_close(labels.sum(-1), torch.ones(12))
    assert ((labels > 0).sum(-1) <= 2).all() and (labels >= 0).all()
    nz = [torch.nonzero(row).flatten() for row in labels]
    assert all(len(i) == 1 or i[1] - i[0] == 1 for i in nz)  # mass on one bin or two neighbours
    # decode(encode(y)) == y, up to float32 resolution on the symlog axis (|symlog y| <= 11.5)
    torch.testing.assert_close(critics.value(labels.log()), y, rtol=5e-5, atol=5e-5)
    # the bins are uniform in symlog space: +-1e5 at the edges, spacing 0.1813 (the reference's defaults)
    torch.testing.assert_close(critics.bins[[0, -1]], torch.tensor([-11.5129, 11.5129]), atol=1e-4, rtol=0)
    torch.testing.assert_close(critics.bins.diff(), torch.full((127,), 0.181306), atol=1e-5, rtol=0)


def test_two_hot_beyond_the_range_puts_all_mass_on_the_edge_bin():
    critics = make_critics(num_bins=16, return_range=(-100.0, 1000.0))
    labels = critics.two_hot(torch.tensor([1000.0, 5e3, 1e9, -100.0, -101.0, -1e9]))
    for row, edge in zip(labels, [15, 15, 15, 0, 0, 0]):
        torch.testing.assert_close(row, F.one_hot(torch.tensor(edge), 16).float())
    assert critics.value(labels[1].log()).item() == pytest.approx(1000.0, rel=1e-4)  # clipped to the edge


def test_batched_two_hot_critic_equals_per_critic_loop():
    """All critics, K action samples and G gammas in one pass equal one small MLP per (critic, sample, gamma)."""
    torch.manual_seed(0)
    critics = make_critics(num_bins=5)
    s, a = torch.randn(3, 4, 6), torch.rand(2, 3, 4, 3, 2) * 2 - 1  # (B, L, D), (K, B, L, G, A)
    out = critics(s, a)
    assert out.shape == (2, 3, 4, 4, 3, 5)  # (K, B, L, C, G, bins)
    W, b = critics.weights, critics.biases
    for k in range(2):
        for c in range(4):
            for g, gamma in enumerate([0.9, 0.99, 0.999]):
                x = torch.cat([s, torch.log1p(torch.tensor(1 / (1 - gamma))).expand(3, 4, 1), a[k, :, :, g]], -1)
                h = F.leaky_relu(F.leaky_relu(x @ W[0][c] + b[0][c]) @ W[1][c] + b[1][c])
                torch.testing.assert_close(out[k, :, :, c, g], h @ W[2][c] + b[2][c], atol=1e-5, rtol=1e-5)


# -------------------------------------------------- discrete actions --------------------------------------------------
def discrete_actor():
    return mt.Actor(d_state=4, action_dim=3, kind="discrete", num_gammas=2, d_hidden=8, discrete_clip=(1e-3, 0.99))


def test_straight_through_sample_is_one_hot_with_a_gradient_into_the_logits():
    torch.manual_seed(0)
    actor = discrete_actor()
    params = torch.randn(5, 7, 2, 3, requires_grad=True)  # (B, L, G, A) logits
    a = actor.sample_vectors(params, k=4, differentiable=True)  # (K, B, L, G, A)
    assert a.shape == (4, 5, 7, 2, 3)
    onehot = F.one_hot(a.argmax(-1), 3).float()
    torch.testing.assert_close(a, onehot, atol=1e-6, rtol=0)  # the forward value is a one-hot sample
    (a * torch.tensor([1.0, -2.0, 0.5])).sum().backward()  # any function of the sampled action
    assert params.grad is not None and params.grad.abs().sum(-1).gt(0).all()  # every logit row gets a gradient


def test_one_hot_samples_follow_the_clipped_policy():
    torch.manual_seed(0)
    actor = discrete_actor()
    params = torch.tensor([[[[2.0, 0.0, -1.0], [-9.0, 9.0, 0.0]]]])  # (1, 1, G=2, A=3)
    for differentiable in (False, True):
        a = actor.sample_vectors(params, k=20_000, differentiable=differentiable)
        torch.testing.assert_close(a, F.one_hot(a.argmax(-1), 3).float(), atol=1e-6, rtol=0)  # one-hot draws
        torch.testing.assert_close(a.mean(0), actor.probs(params), atol=0.015, rtol=0)


# -------------------------------------------------------- loss --------------------------------------------------------
def small_agent(kind, **overrides):
    return make_agent(kind, mt, traj_encoder="gru", num_bins=32, **overrides)[0]


def grads(module):
    return [p.grad for p in module.parameters() if p.grad is not None and p.grad.abs().max() > 0]


def test_defaults_are_amago2s():
    args = mt.Args()
    assert (args.online_coeff, args.offline_coeff, args.num_actions_value, args.num_bins) == (0.0, 1.0, 3, 128)
    assert args.return_range == (-1e5, 1e5)


@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_critic_loss_is_a_cross_entropy_that_trains_critics_and_encoders_only(kind):
    agent = small_agent(kind, offline_coeff=0.0)
    loss, metrics = agent(random_batch(agent, reward_scale=100.0))
    assert loss.item() == pytest.approx(10 * metrics["losses/critic_loss"].item())
    assert 0 < metrics["losses/critic_loss"].item() < np.log(32) + 1.0  # ~ log(num_bins) at init, never a squared error
    loss.backward()
    assert not grads(agent.actor) and grads(agent.critics) and grads(agent.tstep) and grads(agent.traj)


@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_filtered_bc_trains_the_actor_not_the_critics(kind):
    agent = small_agent(kind, critic_loss_weight=0.0)
    loss, metrics = agent(random_batch(agent, reward_scale=100.0))
    loss.backward()
    assert 0 < metrics["losses/bc_filter_frac"].item() < 1  # a real filter: some actions kept, some dropped
    assert not grads(agent.critics) and grads(agent.actor) and grads(agent.traj)


@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_online_term_reaches_the_actor_through_the_sampled_action_only(kind):
    """The optional DPG term: Gumbel straight-through (discrete) or rsample (Box) carries -Q's gradient to pi."""
    agent = small_agent(kind, online_coeff=1.0, offline_coeff=0.0, critic_loss_weight=0.0)
    loss, _ = agent(random_batch(agent, reward_scale=100.0))
    loss.backward()
    assert not grads(agent.critics) and grads(agent.actor)


def test_bad_arguments_are_clear_errors():
    for flag, value, msg in [
        ("num_bins", 1, "--num-bins must be >= 2, got 1"),
        ("return_range", (5.0, -5.0), "--return-range (5.0, -5.0)"),
        ("num_actions_value", 0, "--num-actions-value must be >= 1, got 0"),
        ("gumbel_temperature", 0.0, "--gumbel-temperature must be > 0, got 0.0"),
    ]:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
            mt.check_args(mt.Args(**{flag: value}))


# ------------------------------------------------- MultiScaleBandit-v0 -------------------------------------------------
def test_multiscale_passes_the_gymnasium_env_checker():
    import envs  # noqa: F401  (registers the ids)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("MultiScaleBandit-v0")
        check_env(env.unwrapped, skip_render_check=True)
        env.reset(seed=0)
        env.action_space.seed(0)
        for t in range(6):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            assert obs in env.observation_space and isinstance(r, float) and term == (t == 5) and not trunc
        assert set(info) == {"AMAGO_LOG_METRIC success"}


def play(env, seed, policy):
    """One episode; policy(t, last reward, last action) -> arm."""
    env.reset(seed=seed)
    ret, r, a, t, done = 0.0, 0.0, None, 0, False
    while not done:
        a = policy(t, r, a)
        _, r, done, _, info = env.step(a)
        ret, t = ret + r, t + 1
    return env.unwrapped.env_name, env.unwrapped.scale, ret, info["AMAGO_LOG_METRIC success"]


def test_multiscale_scales_hide_the_same_task():
    """Scales are drawn per episode and only scale the reward; the in-context policy (try arms in order, stay on
    the one that pays) succeeds at every scale, while a policy that does not adapt succeeds ~1/arms of the time."""
    env = MultiScale(arms=3, pulls=6)
    adapt = lambda t, r, a: a if r > 0 else (0 if a is None else (a + 1) % 3)  # noqa: E731
    fixed = lambda t, r, a: 0  # noqa: E731
    seen = {}
    for seed in range(300):
        name, scale, ret, success = play(env, seed, adapt)
        assert name == f"MultiScaleBandit-x{scale:g}" and success == 1.0
        assert ret in {scale * k for k in (4, 5, 6)}  # the good arm is found within 3 pulls
        seen[scale] = seen.get(scale, 0) + 1
    assert set(seen) == {1.0, 10.0, 100.0} and min(seen.values()) > 70  # scales drawn uniformly
    fixed_success = np.mean([play(env, seed, fixed)[3] for seed in range(300)])
    assert 0.25 < fixed_success < 0.42


def test_multiscale_observation_shows_hit_or_miss_at_every_scale():
    env = MultiScale(scales=(1.0,))
    env.reset(seed=0)
    miss = env.step((env.good + 1) % env.arms)[0]
    hit = env.step(env.good)[0]
    assert miss[0] == 0.0 and hit[0] == pytest.approx(np.log(2.0))


def test_multiscale_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="arms must be >= 2, got 1"):
        MultiScale(arms=1)
    with pytest.raises(ValueError, match=r"pulls must be >= arms \(4\)"):
        MultiScale(arms=4, pulls=3)
    with pytest.raises(ValueError, match="scales must be"):
        MultiScale(scales=(1.0, -10.0))
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 3\)"):
        env = MultiScale()
        env.reset(seed=0)
        env.step(3)


def test_one_scale_bandit_ids_share_their_spaces_and_hold_one_scale():
    """MultiScaleBandit-x1/-x10/-x100-v0 run side by side in one multi-env run: the same spaces, one scale each."""
    import envs  # noqa: F401  (registers the ids)

    made = {s: gym.make(f"MultiScaleBandit-x{s}-v0") for s in (1, 10, 100)}
    assert len({(repr(e.observation_space), repr(e.action_space)) for e in made.values()}) == 1
    assert made[1].observation_space == gym.make("MultiScaleBandit-v0").observation_space
    for s, env in made.items():
        names = set()
        for seed in range(5):
            env.reset(seed=seed)
            names.add(env.unwrapped.env_name)
            _, r, *_ = env.step(env.unwrapped.good)
            assert r == s
        assert names == {f"MultiScaleBandit-x{s}"}
