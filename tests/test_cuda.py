"""On a CUDA device: each script's loss and gradients there equal the CPU's (in float64), for every trajectory
encoder; mamba-ssm's fused scan and flash-attn's attention, where they are installed, compute what the pure-PyTorch
paths compute; bf16 autocast trains. Skipped where torch sees no CUDA device (every test here needs one)."""

import copy
import importlib

import pytest
import torch
from conftest import make_agent, random_batch

from common.kernels import flash_attention, fused_mamba_scan, load_kernel, why_missing

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
ENCODERS = ["transformer", "gru", "mamba", "ff"]
randn, multinomial = torch.randn, torch.multinomial  # the originals, as the tests patch torch's


def cpu_and_cuda(module, kind, traj, dtype=torch.float32):
    """The same agent (weights and PopArt statistics) on the CPU and on CUDA, whose random generators differ: one
    critic (REDQ's random subset of critics is then the same) and no dropout."""
    mod = importlib.import_module(module)
    agent, _ = make_agent(kind, mod, traj_encoder=traj, num_critics=1, num_critics_td=1, dropout=0.0)
    agent = agent.to(dtype)
    return agent, copy.deepcopy(agent).cuda()


def batch_as(batch, dtype, device):  # the float tensors of a batch (obs included) in dtype, on device
    return {
        k: batch_as(v, dtype, device) if isinstance(v, dict) else v.to(device, dtype if v.is_floating_point() else None)
        for k, v in batch.items()
    }


@pytest.mark.parametrize("module", ["amago_agent", "amago_multitask"])
@pytest.mark.parametrize("kind", ["discrete", "box"])
@pytest.mark.parametrize("traj", ENCODERS)
def test_loss_and_gradients_on_cuda_equal_the_cpus(module, kind, traj, monkeypatch):
    """In float64: float32's rounding differs by device, and an untrained critic's advantages sit so near 0 that it
    flips the filtered-BC indicator 1[A > 0] of some samples, a step in the gradient. The transformer's sinusoidal time
    table stays float32 (sin and cos differ by device in the last bit), which moves its gradients by up to ~1e-6.
    Mamba runs its pure scan on both devices here: mamba-ssm's kernel has no float64 (its own test is below)."""
    cpu, gpu = cpu_and_cuda(module, kind, traj, torch.float64)
    batch = random_batch(cpu)
    results = []
    for agent, device in ((cpu, "cpu"), (gpu, "cuda")):
        # the actor's samples (Box: torch.randn_like; Discrete: torch.multinomial, for amago_multitask's V(s)) come
        # from each device's own generator: draw them from one CPU generator for both
        g = torch.Generator().manual_seed(0)
        monkeypatch.setattr(torch, "randn_like", lambda x, g=g: randn(x.shape, generator=g).to(x))
        monkeypatch.setattr(torch, "multinomial", lambda p, n, g=g: multinomial(p.cpu(), n, generator=g).to(p.device))
        loss, _ = agent(batch_as(batch, torch.float64, device))
        loss.backward()
        results.append(loss)
    torch.testing.assert_close(results[1].cpu(), results[0], rtol=1e-9, atol=1e-9)
    tol = dict(rtol=1e-4, atol=1e-6) if traj == "transformer" else dict(rtol=1e-7, atol=1e-9)
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        if p.grad is not None:
            torch.testing.assert_close(q.grad.cpu(), p.grad, **tol, msg=lambda m, n=name: f"{n}: {m}")


@pytest.mark.parametrize("traj", ENCODERS)
def test_bf16_autocast_update_is_finite_and_near_fp32(traj):
    """What --mixed-precision bf16 runs: the loss under bf16 autocast (mamba-ssm's and flash-attn's half-precision
    paths where installed) is finite and within a few percent of fp32's, and its gradients are finite."""
    _, gpu = cpu_and_cuda("amago_agent", "discrete", traj)
    half = copy.deepcopy(gpu)
    batch = batch_as(random_batch(gpu), torch.float32, "cuda")
    loss, _ = gpu(batch)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss_bf16, _ = half(batch)
    loss_bf16.backward()
    assert torch.isfinite(loss_bf16)
    torch.testing.assert_close(loss_bf16.float(), loss, rtol=5e-2, atol=5e-2)
    assert all(torch.isfinite(p.grad).all() for p in half.parameters() if p.grad is not None)


MAMBA, FLASH = ("mamba_ssm.ops.selective_scan_interface", "selective_scan_fn"), ("flash_attn", "flash_attn_func")
needs_mamba = pytest.mark.skipif(load_kernel(*MAMBA) is None, reason=why_missing(*MAMBA, "mamba-ssm"))
needs_flash = pytest.mark.skipif(load_kernel(*FLASH) is None, reason=why_missing(*FLASH, "flash-attn"))


@needs_mamba
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mamba_kernel_equals_the_pure_scan(dtype):
    """mamba-ssm's fused selective scan against the script's pure-PyTorch scan, outputs and gradients."""
    import amago_agent as amago

    kernel = load_kernel(*MAMBA)
    g = torch.Generator().manual_seed(0)
    B, L, d, n = 3, 40, 16, 8
    u, z = torch.randn(B, L, d, generator=g), torch.randn(B, L, d, generator=g)
    dt = torch.nn.functional.softplus(torch.randn(B, L, d, generator=g) - 2)
    A = -torch.rand(d, n, generator=g) * 2 - 0.1
    Bm, Cm, D = torch.randn(B, L, n, generator=g), torch.randn(B, L, n, generator=g), torch.randn(d, generator=g)
    ins = [x.cuda().requires_grad_() for x in (u, dt, A, Bm, Cm, D, z)]
    ref = [x.detach().clone().requires_grad_() for x in ins]
    low = lambda x: x.to(dtype)  # noqa: E731
    y = fused_mamba_scan(kernel, low(ins[0]), ins[1], ins[2], low(ins[3]), low(ins[4]), ins[5], low(ins[6]))
    y_ref = amago.selective_scan(*ref)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(y.float(), y_ref, **tol)
    y.float().square().sum().backward()
    y_ref.square().sum().backward()
    for a, b, name in zip(ins, ref, ["u", "dt", "A", "B", "C", "D", "z"]):
        scale = b.grad.abs().max().item() + 1e-6  # relative to the largest gradient of each input
        assert (a.grad.float() - b.grad).abs().max().item() / scale < (1e-3 if dtype == torch.float32 else 5e-2), name


@needs_flash
@pytest.mark.parametrize("window", [None, 5])
def test_flash_attention_equals_the_pure_attention(window):
    """flash-attn's causal (and sliding-window) attention against the script's masked attention, in bf16."""
    import amago_agent as amago

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 33, 16, generator=g).cuda().to(torch.bfloat16) for _ in range(3))
    out = flash_attention(q, k, v, window)
    assert out is not None
    ref = amago.attention(q.float(), k.float(), v.float(), window)  # fp32: torch's SDPA, never flash-attn
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=2e-2)


# ------------------------------------- --compile: compiled and graphed against eager -------------------------------------
# The compiled update and acting step on CUDA are replayed CUDA graphs (common/compiled.py). Their random draws
# (the actor's samples, REDQ's subsets, dropout) come from the device's generator in the graph's own order, so these
# comparisons draw nothing at random: one critic, no dropout, and the actor's samples replaced by fixed functions of
# their shapes (the same on both sides). Most cases run torch.compile's aot_eager backend (Dynamo's graphs with eager
# kernels; inductor's code generation costs tens of seconds per case); test_inductor_graphed_* run inductor.


@pytest.fixture
def no_random_draws(monkeypatch):
    """torch.randn_like -> a fixed pattern in [-1, 1]; torch.multinomial -> action (row index) mod A, so the K samples
    of one state differ (AMAGO-2's V(s) then never ties exactly with Q(s, a_buffer))."""
    monkeypatch.setattr(
        torch, "randn_like", lambda x: torch.sin(torch.arange(x.numel(), device=x.device)).view_as(x).to(x)
    )
    monkeypatch.setattr(
        torch,
        "multinomial",
        lambda p, n: torch.remainder(torch.arange(p.shape[0], device=p.device), p.shape[1]).unsqueeze(1).repeat(1, n),
    )


@pytest.fixture
def compile_backend(monkeypatch):
    import common.compiled as compiled

    torch._dynamo.reset()
    monkeypatch.setattr(compiled, "BACKEND", "aot_eager")
    yield compiled
    torch._dynamo.reset()


def graphed_pair(module, kind, traj, dtype=torch.float64, **overrides):
    """(eager agent, its copy) on CUDA, both with one critic and no dropout; Discrete has 64 actions."""
    import gymnasium as gym
    from conftest import SMALL

    mod = importlib.import_module(module)
    space = {"discrete": gym.spaces.Discrete(64), "box": gym.spaces.Box(-1, 1, (2,))}[kind]
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (4,))})
    args = mod.Args(**{**SMALL, "traj_encoder": traj, "max_seq_len": 6, "num_critics": 1, "num_critics_td": 1,
                       "dropout": 0.0, **overrides})  # fmt: skip
    torch.manual_seed(0)
    agent = mod.Agent(args, obs_space, space).to("cuda", dtype)
    return mod, args, agent, copy.deepcopy(agent)


def run_updates(mod, compiled, agent, args, n, dtype, compile_):
    """n updates (the graph is recorded at the 4th) -> the metrics of each."""
    from accelerate import Accelerator

    args = copy.copy(args)
    args.compile = compile_
    opt = torch.optim.AdamW(
        agent.trainable_parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, fused=True
    )
    acc = Accelerator()
    agent, opt = acc.prepare(agent, opt)
    step = compiled.compiled_update(mod.train_step, agent, opt, acc, args) if compile_ else mod.train_step
    agent.train()
    out = []
    for u in range(n):
        batch = batch_as(random_batch(agent, seed=u), dtype, "cuda")
        out.append({k: v.detach().clone() for k, v in step(agent, opt, acc, batch, args, 40 + u).items()})
    return out


def run_acting(agent, act, steps=8):
    N = 3
    g = torch.Generator().manual_seed(0)
    dtype = next(agent.parameters()).dtype
    hidden, out = agent.traj.init_hidden(N, "cuda"), []  # the memory's float tensors in the agent's dtype
    if hidden is not None:
        as_dtype = lambda h: h.to(dtype) if h.is_floating_point() else h  # noqa: E731
        hidden = tuple(map(as_dtype, hidden)) if isinstance(hidden, tuple) else as_dtype(hidden)
    for t in range(steps):
        obs = {"observation": torch.randn(N, 4, generator=g).to("cuda", dtype)}
        rl2 = torch.randn(N, agent.A + 1, generator=g).to("cuda", dtype)
        greedy = [True, False, torch.tensor([True, False, True], device="cuda")][t % 3]
        a, hidden = act(obs, rl2, torch.full((N,), t, device="cuda"), hidden, greedy=greedy)
        out.append(a)
        if t == 4:
            hidden = agent.traj.reset_hidden(hidden, torch.tensor([False, True, False], device="cuda"))
    return out, hidden


def compare_graphed(module, kind, traj, compiled, tol, updates=6):
    from accelerate import Accelerator

    mod, args, eager, comp = graphed_pair(module, kind, traj, dtype=torch.float64)
    m_eager = run_updates(mod, compiled, eager, args, updates, torch.float64, False)
    m_comp = run_updates(mod, compiled, comp, args, updates, torch.float64, True)
    for u, (a, b) in enumerate(zip(m_eager, m_comp)):
        for k in a:
            torch.testing.assert_close(
                b[k].double(), a[k].double(), **tol, msg=lambda m, k=k, u=u: f"update {u} {k}: {m}"
            )
    for (name, p), q in zip(eager.state_dict().items(), comp.state_dict().values()):
        torch.testing.assert_close(q, p, **tol, msg=lambda m, n=name: f"{n}: {m}")
    comp.load_state_dict(eager.state_dict())  # acting from the same weights
    eager.eval(), comp.eval()
    act = compiled.compiled_acting(comp.get_actions, comp, Accelerator())
    (a_eager, h_eager), (a_comp, h_comp) = run_acting(eager, eager.get_actions), run_acting(comp, act)
    for x, y in zip(a_eager, a_comp):
        torch.testing.assert_close(y, x, **tol)
    torch.testing.assert_close(h_comp, h_eager, **tol)


@pytest.mark.parametrize("module", ["amago_agent", "amago_multitask"])
@pytest.mark.parametrize("kind", ["discrete", "box"])
@pytest.mark.parametrize("traj", ENCODERS)
def test_graphed_update_and_acting_equal_eager(module, kind, traj, no_random_draws, compile_backend):
    """Six updates (three eager warm-ups, the recording, two replays) and eight acting steps (greedy, sampled, mixed;
    a memory reset) of the CUDA-graphed compiled path against eager, in float64. The transformer's time table is
    float32 on both sides (the graph replays the same kernels), hence the same tolerance for all."""
    compare_graphed(module, kind, traj, compile_backend, dict(rtol=1e-7, atol=1e-9))


@pytest.mark.parametrize(
    "module, kind, traj", [("amago_agent", "discrete", "transformer"), ("amago_multitask", "box", "ff")]
)
def test_inductor_graphed_update_and_acting_equal_eager(
    module, kind, traj, no_random_draws, compile_backend, monkeypatch
):
    """The scripts' backend, inductor's Triton kernels, inside the CUDA graphs. Its sin and cos of the transformer's
    float32 time table differ from eager's in the last bit: 1e-5 relative there (test_loss_and_gradients_... above)."""
    monkeypatch.setattr(compile_backend, "BACKEND", "inductor")
    tol = dict(rtol=1e-5, atol=1e-7) if traj == "transformer" else dict(rtol=1e-7, atol=1e-9)
    compare_graphed(module, kind, traj, compile_backend, tol)


def test_graphed_bf16_update_is_finite_and_near_fp32(no_random_draws, compile_backend):
    """--compile with --mixed-precision bf16 (autocast inside the CUDA graph): the losses of six updates are finite
    and within a few percent of eager fp32's from the same start."""
    mod, args, eager, comp = graphed_pair("amago_agent", "discrete", "transformer", dtype=torch.float32)
    m_eager = run_updates(mod, compile_backend, eager, args, 6, torch.float32, False)
    args_bf16 = copy.copy(args)
    args_bf16.mixed_precision = "bf16"
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state()
    acc = Accelerator(mixed_precision="bf16")
    args_bf16.compile = True
    opt = torch.optim.AdamW(
        comp.trainable_parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, fused=True
    )
    comp, opt = acc.prepare(comp, opt)
    step = compile_backend.compiled_update(mod.train_step, comp, opt, acc, args_bf16)
    comp.train()
    for u in range(6):
        m = step(comp, opt, acc, batch_as(random_batch(comp, seed=u), torch.float32, "cuda"), args_bf16, 40 + u)
        assert torch.isfinite(m["losses/critic_loss"]) and torch.isfinite(m["losses/actor_loss"])
        torch.testing.assert_close(m["losses/critic_loss"], m_eager[u]["losses/critic_loss"], rtol=5e-2, atol=5e-2)
    AcceleratorState._reset_state()


def test_graphed_update_skips_a_nonfinite_step_and_raises_soon(compile_backend):
    """After the graph is recorded, a diverged weight: its update and every later one skip the optimizer step on the
    device, and FloatingPointError comes within a few updates, the trained weights still those from before it."""
    from accelerate import Accelerator

    mod, args, agent, _ = graphed_pair("amago_agent", "box", "ff", dtype=torch.float32)
    args.compile = True
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=args.learning_rate, fused=True)
    acc = Accelerator()
    agent, opt = acc.prepare(agent, opt)
    step = compile_backend.compiled_update(mod.train_step, agent, opt, acc, args)
    agent.train()
    for u in range(5):  # warm-ups, the recording, a replay
        step(agent, opt, acc, batch_as(random_batch(agent, seed=u), torch.float32, "cuda"), args, u)
    with torch.no_grad():
        agent.actor.net[-1].weight[0, 0] = float("inf")
    before = [p.clone() for p in agent.trainable_parameters()]
    with pytest.raises(FloatingPointError, match="non-finite loss at an update after"):
        for u in range(5, 12):
            step(agent, opt, acc, batch_as(random_batch(agent, seed=u), torch.float32, "cuda"), args, u)
            torch.cuda.synchronize()  # the flag's copy lands before the next check
    assert all(torch.equal(b, p) for b, p in zip(before, agent.trainable_parameters()))
