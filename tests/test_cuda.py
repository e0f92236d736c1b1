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
