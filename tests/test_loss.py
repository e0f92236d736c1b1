"""AMAGO's loss and its parts: n-step TD targets, PopArt, the critic ensemble, the actor's distributions, which
parameters each loss term trains, padding, and the target networks' EMA."""

import copy

import pytest
import torch
from conftest import make_agent, random_batch

import amago_agent as amago


def test_nstep_td_target_hand_worked():
    """Row 0: a terminal at t=2, then padding. Row 1: a window that ends at a truncation (bootstrapped)."""
    r = torch.tensor([[1.0, 2, 3, 4], [1, 1, 1, 1]])
    d = torch.tensor([[0.0, 0, 1, 0], [0, 0, 0, 0]])
    mask = torch.tensor([[1.0, 1, 1, 0], [1, 1, 1, 1]])
    q_next = torch.tensor([[[10.0, 20], [30, 40], [50, 60], [70, 80]], [[1, 2], [3, 4], [5, 6], [7, 8]]])
    gammas = torch.tensor([0.5, 0.9])
    y1 = amago.nstep_td_target(r, d, mask, q_next, gammas, n=1)
    expect1 = [[[6, 19], [17, 38], [3, 3], [0, 0]], [[1.5, 2.8], [2.5, 4.6], [3.5, 6.4], [4.5, 8.2]]]
    torch.testing.assert_close(y1, torch.tensor(expect1))
    y2 = amago.nstep_td_target(r, d, mask, q_next, gammas, n=2)
    # y[0,0] = 1 + g*2 + g^2 * Q(s_2); y[0,1] = 2 + g*3 (terminal); y[1,2] = 1 + g*1 + g^2 Q(s_4); y[1,3] falls back to 1 step
    expect2 = [[[9.5, 35.2], [3.5, 4.7], [3, 3], [0, 0]], [[2.25, 5.14], [2.75, 6.76], [3.25, 8.38], [4.5, 8.2]]]
    torch.testing.assert_close(y2, torch.tensor(expect2))


def test_popart_update_preserves_raw_outputs():
    popart = amago.PopArt(num_gammas=3)
    q = torch.randn(5, 7, 4, 3)  # (B, T, C, G) critic outputs
    raw_before = popart.raw(q).clone()
    state_before = {k: v.clone() for k, v in popart.state_dict().items()}
    y = 50 + 20 * torch.randn(5, 7, 3)
    popart.update(y, torch.ones(5, 7))
    for k in ("mu", "nu", "w", "b"):
        assert not torch.allclose(popart.state_dict()[k], state_before[k]), k
    torch.testing.assert_close(popart.raw(q), raw_before, atol=1e-4, rtol=1e-5)
    # normalized targets are (y - mu) / sigma with the new statistics
    torch.testing.assert_close(popart.normalize_target(y), (y - popart.mu) / popart.sigma)


def test_popart_ignores_padding():
    a, b = amago.PopArt(1), amago.PopArt(1)
    y = torch.randn(2, 3, 1)
    mask = torch.tensor([[1.0, 1, 0], [1, 0, 0]])
    a.update(y, mask)
    b.update(torch.where(mask.bool().unsqueeze(-1), y, torch.full_like(y, 1e6)), mask)
    torch.testing.assert_close(a.mu, b.mu)


@pytest.mark.parametrize("discrete", [True, False])
def test_critic_ensemble_equals_per_critic_loop(discrete):
    torch.manual_seed(0)
    gammas = torch.tensor([0.9, 0.99, 0.999])
    critics = amago.CriticEnsemble(d_state=6, action_dim=2, discrete=discrete, gammas=gammas, num_critics=4, d_hidden=8)
    s = torch.randn(3, 5, 6)
    a = torch.rand(3, 5, 3, 2) * 2 - 1
    out = critics(s) if discrete else critics(s, a)
    W, b = critics.weights, critics.biases
    for c in range(4):
        for g in range(3):
            if discrete:
                x = s
            else:
                feat = torch.log1p(1 / (1 - gammas[g])).expand(3, 5, 1)  # symlog(1/(1-gamma))
                x = torch.cat([s, feat, a[:, :, g]], -1)
            h = torch.nn.functional.leaky_relu(x @ W[0][c] + b[0][c])
            h = torch.nn.functional.leaky_relu(h @ W[1][c] + b[1][c])
            q = h @ W[2][c] + b[2][c]
            expect = q[..., g * 2 : (g + 1) * 2] if discrete else q[..., 0]
            torch.testing.assert_close(out[:, :, c, g], expect, atol=1e-5, rtol=1e-5)


def test_tanh_gaussian_log_prob_matches_torch_distributions():
    actor = amago.Actor(d_state=4, action_dim=2, kind="box", num_gammas=3, d_hidden=8, discrete_clip=(1e-3, 0.99))
    params = torch.randn(2, 5, 3, 4)
    a = torch.rand(2, 5, 1, 2) * 1.8 - 0.9
    mu, std = actor.mu_std(params)
    dist = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(mu, std), torch.distributions.TanhTransform()
    )
    torch.testing.assert_close(actor.log_prob(params, a), dist.log_prob(a.expand_as(mu)).sum(-1), atol=1e-4, rtol=1e-4)
    assert (std.log() >= -5 - 1e-5).all() and (std.log() <= 2 + 1e-5).all()


def test_discrete_probs_are_clipped():
    actor = amago.Actor(d_state=4, action_dim=4, kind="discrete", num_gammas=1, d_hidden=8, discrete_clip=(1e-3, 0.99))
    p = actor.probs(torch.tensor([[[[100.0, 0, 0, 0]]]]))
    assert p.min() > 9e-4 and abs(p.sum().item() - 1) < 1e-6


@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_online_actor_term_never_trains_the_critics(kind):
    """The DPG term's gradient reaches the actor and (through the actor's input) the encoders, never the critics."""
    agent, _ = make_agent(kind, online_coeff=1.0, offline_coeff=0.0, critic_loss_weight=0.0)
    loss, _ = agent(random_batch(agent))
    loss.backward()
    assert all(p.grad is None or p.grad.abs().max() == 0 for p in agent.critics.parameters())
    assert any(p.grad is not None and p.grad.abs().max() > 0 for p in agent.actor.parameters())
    assert any(p.grad is not None and p.grad.abs().max() > 0 for p in agent.traj.parameters())


@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_critic_loss_trains_critics_and_encoders_not_actor(kind):
    agent, _ = make_agent(kind, online_coeff=0.0, offline_coeff=0.0, critic_loss_weight=1.0)
    loss, _ = agent(random_batch(agent))
    loss.backward()
    assert all(p.grad is None or p.grad.abs().max() == 0 for p in agent.actor.parameters())
    assert any(p.grad.abs().max() > 0 for p in agent.critics.parameters())
    assert any(p.grad.abs().max() > 0 for p in agent.tstep.parameters())


def test_padding_does_not_change_the_loss():
    """Whatever sits in padded positions, the loss and the statistics are the same."""
    agent, _ = make_agent("discrete")
    batch = random_batch(agent)
    other = copy.deepcopy(batch)
    other["obs"]["observation"][0, 4:] = 1e3
    other["rewards"][0, 3:] = -1e3
    a2 = copy.deepcopy(agent)
    torch.manual_seed(1)
    l1, _ = agent(batch)
    torch.manual_seed(1)
    l2, _ = a2(other)
    torch.testing.assert_close(l1, l2)
    torch.testing.assert_close(agent.tstep.norm.mu, a2.tstep.norm.mu)
    torch.testing.assert_close(agent.popart.mu, a2.popart.mu)


def test_target_networks_follow_by_ema():
    agent, args = make_agent("discrete", tau=0.5)
    before = [p.clone() for p in agent.target_critics.parameters()]
    with torch.no_grad():
        for p in agent.critics.parameters():
            p.add_(1.0)
    agent.update_targets()
    for b, t, o in zip(before, agent.target_critics.parameters(), agent.critics.parameters()):
        torch.testing.assert_close(t, 0.5 * b + 0.5 * o)


@pytest.mark.parametrize("module", ["amago_agent", "amago_multitask"])
def test_box_actor_health_shows_a_saturated_actor_as_saturated(module):
    """actor/*: a greedy action pinned in tanh's corner reads |a| ~ 1 with no spread over states; a healthy one does
    not. Each scalar is checked against its definition on the same parameters, padding left out."""
    import importlib

    agent, _ = make_agent("box", importlib.import_module(module))
    agent.eval()  # no dropout: the second agent below must compute the same states
    batch = random_batch(agent)
    out = agent.actor.net[-1]  # the last layer: (G * 2A) outputs, per gamma [mu (A), raw std (A)]
    with torch.no_grad():
        _, healthy = agent(batch)
        out.weight.zero_()
        out.bias.view(-1, 2, agent.A)[:, 0] = torch.tensor([6.0, -6.0])  # mu = +6, -6 in every state
        out.bias.view(-1, 2, agent.A)[:, 1] = 10.0  # raw std -> tanh 1: the largest std, e^2
        _, pinned = agent(batch)
    assert pinned["actor/greedy_abs_action"] > 0.9999 and pinned["actor/greedy_action_spread"] < 1e-6
    torch.testing.assert_close(pinned["actor/pre_tanh_std"], torch.tensor(2.0).exp())
    assert healthy["actor/greedy_abs_action"] < 0.5 and healthy["actor/greedy_action_spread"] > 1e-3
    # the healthy values are the definitions' over the real (unpadded) transitions, for the acting (last) gamma
    with torch.no_grad():
        agent2, _ = make_agent("box", importlib.import_module(module))
        agent2.eval()
        s = agent2.traj(agent2.embed(batch["obs"], batch["rl2"], batch["mask"]), batch["time"])
        mu, std = agent2.actor.mu_std(agent2.actor(s)[:, :-1, -1])
    real = batch["mask"][:, 1:]
    a = torch.tanh(mu)[real]  # (n, A)
    torch.testing.assert_close(healthy["actor/greedy_abs_action"], a.abs().mean())
    torch.testing.assert_close(healthy["actor/greedy_action_spread"], a.std(0, unbiased=False).mean())
    torch.testing.assert_close(healthy["actor/pre_tanh_std"], std[real].mean())
