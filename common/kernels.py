"""Optional GPU kernels, imported on first use: flash-attn's attention and mamba-ssm's fused selective scan. Each runs
when its package is installed and the input is on CUDA; otherwise the script's pure-PyTorch path runs."""

import importlib
import importlib.util

import torch

_loaded = {}  # (module, name) -> the kernel, or None when it cannot be imported
_failed = {}  # (module, name) -> why an installed package failed to import (e.g. a dependency's API changed)
_noticed = set()  # fallbacks already announced (once per process)


def load_kernel(module, name):
    if (module, name) not in _loaded:
        try:
            _loaded[module, name] = getattr(importlib.import_module(module), name)
        except ImportError as e:
            _loaded[module, name] = None
            if importlib.util.find_spec(module.split(".")[0]) is not None:  # installed, yet its import failed
                _failed[module, name] = f"{type(e).__name__}: {e}"
    return _loaded[module, name]


def why_missing(module, name, package):
    """Why load_kernel(module, name) gave None: the package is not installed, or it is and its import failed."""
    err = _failed.get((module, name))
    return f"{package} is installed but its import fails: {err}" if err else f"{package} is not installed"


def flash_attention(q, k, v, window_size=None):
    """q, k, v: (B, H, L, E) -> causal attention (B, H, L, E), each query over its last `window_size` keys incl. itself
    (None: all), through flash-attn; None when it cannot run (not installed, not CUDA, not half precision)."""
    if not (q.is_cuda and q.dtype in (torch.float16, torch.bfloat16)):
        return None
    kernel = load_kernel("flash_attn", "flash_attn_func")
    if kernel is None:
        return None
    left = -1 if window_size is None else window_size - 1  # flash-attn's window: (keys left, keys right), -1: all
    out = kernel(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=True, window_size=(left, 0))
    return out.transpose(1, 2)  # flash-attn works in (B, L, H, E)


@torch.compiler.disable  # under --compile: the pure scan, a loop over L, would unroll into a graph L times as long
def mamba_scan(pure_scan, u, dt, A, Bm, Cm, D, z):
    """Mamba's gated selective scan (arguments as `fused_mamba_scan`'s) through mamba-ssm's fused kernel on CUDA when
    it is installed, else through `pure_scan(u, dt, A, Bm, Cm, D, z)`, announced once with how to get the kernel."""
    where = "mamba_ssm.ops.selective_scan_interface", "selective_scan_fn"
    fits = u.is_cuda and u.dtype in (torch.float32, torch.float16, torch.bfloat16)  # the kernel's dtypes
    kernel = load_kernel(*where) if fits else None
    if kernel is not None:
        return fused_mamba_scan(kernel, u, dt, A, Bm, Cm, D, z)
    if not u.is_cuda:
        why, hint = "the model is not on a CUDA device", True
    elif not fits:
        why, hint = f"mamba-ssm's kernel has no {u.dtype}", False
    else:
        why, hint = why_missing(*where, "mamba-ssm"), where not in _failed  # a broken install: its error says more
    if why not in _noticed:
        _noticed.add(why)
        get = "; for mamba-ssm's fused kernel, train on a CUDA GPU after `pip install -r requirements-cuda.txt`"
        print(f"note: mamba runs its pure-PyTorch scan, slow on long windows ({why}{get if hint else ''})", flush=True)
    return pure_scan(u, dt, A, Bm, Cm, D, z)


def fused_mamba_scan(kernel, u, dt, A, Bm, Cm, D, z):
    """u, dt, z (B, L, d_inner), A (d_inner, n), Bm, Cm (B, L, n), D (d_inner,) -> (C_t h_t + D u_t) * silu(z_t):
    (B, L, d_inner), through `kernel` = mamba-ssm's selective_scan_fn."""
    # the kernel wants (B, channels, L), one dtype (u's) for u, dt, B, C and z, and fp32 A and D (under autocast,
    # softplus gives dt in fp32 while u is bf16); dt is already softplus'd, hence delta_softplus=False
    t = lambda x: x.to(u.dtype).transpose(1, 2)
    return kernel(t(u), t(dt), A.float(), t(Bm), t(Cm), D.float(), z=t(z), delta_softplus=False).transpose(1, 2)
