"""The transformer's attention options: sliding-window attention (against a naive per-query loop) and its bounded
rollout cache, and the learned position embedding. That a cached rollout equals the full forward for every variant is
checked in tests/test_sequence_models.py."""

import math

import pytest
import torch

import amago_agent as amago


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
    windowed = amago.attention(q, k, v, window_size=5)
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
        full = enc(x, time, window_size=20)
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
