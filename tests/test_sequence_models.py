"""The sequence models. A rollout, one token at a time with each encoder's cache / recurrent state, must compute
exactly what the full-sequence forward computes on each episode, including episodes longer than max_seq_len and actors
that reset in the middle of the batch; every attention variant is covered (tests/test_attention.py tests the variants
themselves). Also: the Mamba scan against a plain recurrence and mamba-ssm's kernel interface, and SigmaReparam."""

import pytest
import torch

import amago_agent as amago
from common.kernels import fused_mamba_scan

MAX_SEQ_LEN = 12
D_IN = 10


# encoder name -> (traj_encoder, extra Args): full causal attention, a sliding window shorter than max_seq_len, and a
# learned position table smaller than the longest episode (45 steps), so its clamp is exercised too
VARIANTS = {
    "transformer": ("transformer", {}),
    "transformer-window": ("transformer", {"window_size": 5}),
    "transformer-learned-pos": ("transformer", {"pos_emb": "learned", "max_time_idx": 16}),
    "gru": ("gru", {}),
    "mamba": ("mamba", {}),
    "ff": ("ff", {}),
    "custom-lstm": ("docs.examples.custom_traj_encoder:make", {}),  # the guide's worked example of your own
}


def make_encoder(kind):
    traj, extra = VARIANTS[kind]
    args = amago.Args(
        traj_encoder=traj, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=MAX_SEQ_LEN, d_state=8, **extra
    )
    torch.manual_seed(0)
    return amago.make_traj_encoder(args, D_IN).eval()


def episode_layout():
    """3 actors, 45 steps; actor 0 resets after steps 9 and 30, actor 1 after step 19, actor 2 never (45 > 12)."""
    steps = 45
    ends = {0: [9, 30], 1: [19], 2: []}
    time = torch.zeros(3, steps, dtype=torch.long)
    for i in range(3):
        t = 0
        for s in range(steps):
            time[i, s] = t
            t = 0 if s in ends[i] else t + 1
    return steps, ends, time


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_cached_rollout_equals_full_forward(kind):
    enc = make_encoder(kind)
    steps, ends, time = episode_layout()
    x = torch.randn(3, steps, D_IN)
    with torch.inference_mode():  # as the agent acts (SigmaReparam then reuses its weights; the forward recomputes)
        hidden = enc.init_hidden(3, "cpu")
        rollout = []
        for s in range(steps):
            out, hidden = enc.step(x[:, s : s + 1], time[:, s : s + 1], hidden)
            rollout.append(out)
            done = torch.tensor([s in ends[i] for i in range(3)])
            hidden = enc.reset_hidden(hidden, done)
        rollout = torch.cat(rollout, dim=1)  # (3, steps, d)

    with torch.no_grad():
        worst = 0.0
        for i in range(3):
            bounds = [-1] + ends[i] + [steps - 1]
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                seg = slice(lo + 1, hi + 1)
                kwargs = {"window_size": enc.cache_len} if kind.startswith("transformer") else {}  # the cache's span
                full = enc(x[i : i + 1, seg], time[i : i + 1, seg], **kwargs)
                worst = max(worst, (full[0] - rollout[i, seg]).abs().max().item())
    assert worst < 1e-5, f"{kind}: cached rollout differs from the full forward by {worst}"
    assert steps - 1 - ends[1][0] > MAX_SEQ_LEN  # at least one episode is longer than the context


def test_transformer_window_matters():
    """Sanity check of the test above: past max_seq_len steps the rolling window really drops old steps."""
    enc = make_encoder("transformer")
    x, time = torch.randn(1, 30, D_IN), torch.arange(30).unsqueeze(0)
    with torch.no_grad():
        windowed, full = enc(x, time, window_size=MAX_SEQ_LEN), enc(x, time)
    assert torch.allclose(windowed[:, :MAX_SEQ_LEN], full[:, :MAX_SEQ_LEN], atol=1e-6)
    assert (windowed[:, MAX_SEQ_LEN:] - full[:, MAX_SEQ_LEN:]).abs().max() > 1e-3


def test_mamba_scan_matches_naive_recurrence():
    """The selective scan against a plainly written per-channel recurrence (discretized SSM)."""
    torch.manual_seed(1)
    block = amago.MambaBlock(d_model=8, d_state=4).eval()
    x = torch.randn(2, 7, 8)
    with torch.no_grad():
        out = block(x)
        u, z = block.in_proj(x).chunk(2, dim=-1)
        u = torch.nn.functional.silu(block.conv(u.transpose(1, 2))[..., :7].transpose(1, 2))
        dt, Bm, Cm = block.ssm_params(u)
        A = -torch.exp(block.A_log)
        y = torch.zeros_like(u)
        for b in range(2):
            for c in range(block.d_inner):
                h = torch.zeros(block.d_state)
                for t in range(7):
                    h = torch.exp(dt[b, t, c] * A[c]) * h + dt[b, t, c] * Bm[b, t] * u[b, t, c]
                    y[b, t, c] = (h * Cm[b, t]).sum() + block.D[c] * u[b, t, c]
        ref = block.out_proj(y * torch.nn.functional.silu(z))
    assert (out - ref).abs().max() < 1e-5


def test_sigma_reparam_normalizes_spectral_norm():
    torch.manual_seed(0)
    lin = amago.SigmaReparam(16, 24)
    for _ in range(30):  # power iterations converge in training mode
        lin(torch.randn(4, 16))
    w_hat = lin.gamma / (lin.u @ lin.weight @ lin.v) * lin.weight
    assert abs(torch.linalg.matrix_norm(w_hat, ord=2).item() - 1.0) < 1e-3


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
def test_mamba_kernel_gets_the_scans_parameters_in_its_layout(dtype):
    """No GPU here: the fused path is checked against mamba-ssm's documented interface. Under bf16 autocast, u, B, C
    and z are bf16 while softplus keeps dt in fp32: the adapter must hand the kernel one dtype."""
    torch.manual_seed(0)
    block = amago.MambaBlock(d_model=8, d_state=4).eval()
    x = torch.randn(2, 7, 8)
    with torch.no_grad():
        u, z = block.in_proj(x).chunk(2, dim=-1)
        u = torch.nn.functional.silu(block.conv(u.transpose(1, 2))[..., :7].transpose(1, 2))
        dt, Bm, Cm = block.ssm_params(u)
        A = -torch.exp(block.A_log)
        y = fused_mamba_scan(
            selective_scan_like_mamba_ssm, u.to(dtype), dt, A, Bm.to(dtype), Cm.to(dtype), block.D, z.to(dtype)
        )
        assert y.shape == u.shape
        torch.testing.assert_close(
            block.out_proj(y.float()), block(x), atol=1e-5 if dtype == torch.float32 else 5e-2, rtol=0
        )


def test_sigma_reparam_acting_cache_follows_weight_changes():
    """While acting (eval, no grad) SigmaReparam reuses gamma / sigma(W) * W. The training loop's round trip (train(),
    an update with fused AdamW as the scripts use, eval()) and a loaded state dict must each replace it."""
    torch.manual_seed(0)
    layer, x = amago.SigmaReparam(6, 4).eval(), torch.randn(3, 6)

    def acting():
        with torch.inference_mode():
            return layer(x).clone()

    def recomputed():  # grad enabled: no cache
        return layer(x).detach()

    first = acting()
    torch.testing.assert_close(first, recomputed(), rtol=0, atol=0)
    opt = torch.optim.AdamW(layer.parameters(), lr=0.1, fused=True)
    layer.train()
    layer(x).square().sum().backward()
    opt.step()  # (fused: the weights' version counters do not move)
    layer.eval()
    assert (acting() - first).abs().max() > 1e-3, "the cached weights outlived an optimizer step"
    torch.testing.assert_close(acting(), recomputed(), rtol=0, atol=0)
    layer.load_state_dict(amago.SigmaReparam(6, 4).state_dict())
    torch.testing.assert_close(acting(), recomputed(), rtol=0, atol=0)
    with torch.no_grad():
        layer.train()
        layer(x)  # one power-iteration step moves u and v
        layer.eval()
    torch.testing.assert_close(acting(), recomputed(), rtol=0, atol=0)
