"""The timestep encoders: the CNNs on pixels (channels first or last), DrQ-v2's random shift, dict observations (an
image beside a state vector), and the rl2 inputs (previous reward and action) that --hide-rl2 blanks."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from conftest import SMALL

import amago_agent as amago
from common.args import check_args

CNN_SIZES = {
    "nature": dict(cnn_channels=(8, 16), cnn_kernels=(3, 3), cnn_strides=(2, 1)),
    "impala": dict(cnn_channels=(4, 8)),
}


def small_args(cnn, **kw):
    return amago.Args(tstep_hidden=16, tstep_dim=16, cnn=cnn, **CNN_SIZES[cnn], **kw)


def image(shape):
    return gym.spaces.Box(0, 255, shape, np.uint8)


@pytest.mark.parametrize("cnn", ["nature", "impala"])
def test_channels_first_and_last_give_the_same_features(cnn):
    """A non-square 20x24 RGB image: (H, W, C) and (C, H, W) are told apart by shape, and the same weights on the same
    image in either layout give the same token."""
    torch.manual_seed(0)
    last = amago.make_tstep_encoder(small_args(cnn), gym.spaces.Dict({"im": image((20, 24, 3))}), 3)
    first = amago.make_tstep_encoder(small_args(cnn), gym.spaces.Dict({"im": image((3, 20, 24))}), 3)
    assert isinstance(last, amago.CNNTstepEncoder) and last.hwc == [True] and first.hwc == [False]
    first.load_state_dict(last.state_dict())
    img = torch.randint(0, 256, (2, 5, 20, 24, 3), dtype=torch.uint8)  # (B, L, H, W, C)
    rl2 = torch.randn(2, 5, 3)
    out = last({"im": img}, rl2)
    assert out.shape == (2, 5, 16)
    torch.testing.assert_close(first({"im": img.permute(0, 1, 4, 2, 3)}, rl2), out, rtol=0, atol=1e-6)
    assert not torch.allclose(last({"im": 255 - img}, rl2), out, atol=1e-3)  # the image does reach the token


def test_image_layout_ambiguous_shape_needs_the_flag():
    space = gym.spaces.Dict({"im": image((12, 16, 12))})
    with pytest.raises(ValueError, match=r"cannot tell the channel axis of image shape \(12, 16, 12\).*--image-layout"):
        amago.make_tstep_encoder(small_args("impala"), space, 2)
    for layout in ["chw", "hwc"]:
        enc = amago.make_tstep_encoder(small_args("impala", image_layout=layout), space, 2)
        assert enc.hwc == [layout == "hwc"]
        assert enc({"im": torch.zeros(1, 1, 12, 16, 12, dtype=torch.uint8)}, torch.zeros(1, 1, 2)).shape == (1, 1, 16)


def test_bad_encoder_choices_are_clear_errors():
    vec = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (4,), np.float32)})
    with pytest.raises(ValueError, match="--tstep-encoder 'cnn'.*needs an image key"):
        amago.make_tstep_encoder(amago.Args(tstep_encoder="cnn"), vec, 3)
    with pytest.raises(ValueError, match=r"a 12x12 image is too small for --cnn nature.*the defaults run from 15x15"):
        amago.make_tstep_encoder(amago.Args(), gym.spaces.Dict({"im": image((12, 12, 3))}), 3)
    pix = gym.spaces.Dict({"im": image((24, 24, 3))})
    # flag-only mistakes are caught by check_args, before anything is built
    with pytest.raises(ValueError, match=r"one entry per conv layer"):
        check_args(amago.Args(cnn_channels=(8, 16), cnn_kernels=(3, 3, 3)))
    with pytest.raises(ValueError, match=r"one entry per conv layer"):
        check_args(amago.Args(cnn_strides=(2, 1)))  # against the default three convs
    with pytest.raises(ValueError, match=r"divisible by 4.*\(6, 8\)"):
        check_args(amago.Args(cnn="impala", cnn_channels=(6, 8)))
    with pytest.raises(ValueError, match=r"--aug-frac must lie in \[0, 1\].*got 1.5"):
        check_args(small_args("impala", aug_frac=1.5))
    with pytest.raises(ValueError, match=r"--d-model 60 must be even and divisible by --n-heads 8"):
        check_args(amago.Args(d_model=60))
    for ok in (small_args("nature"), small_args("impala", aug_frac=0.75), amago.Args(d_model=60, traj_encoder="gru")):
        check_args(ok)
    assert isinstance(amago.make_tstep_encoder(amago.Args(tstep_encoder="ff"), pix, 3), amago.TstepEncoder)  # flattens


@pytest.mark.parametrize("side", [16, 24, 64, 84])
def test_the_default_cnn_fits_the_frame(side):
    """With no CNN flags, any frame from 16x16 up runs; from 36 pixels up it is DQN's stack, so 84x84 frames get the
    reference's Nature CNN exactly: (8, 4, 3) kernels, (4, 2, 1) strides, 32/64/64 channels, a 7x7 map. A smaller
    frame gets 3x3 convs at strides (2, 2, 1) with a quarter of the widths, 8/16/16."""
    enc = amago.make_tstep_encoder(
        amago.Args(tstep_hidden=16, tstep_dim=16), gym.spaces.Dict({"im": image((side, side, 3))}), 3
    )
    convs = [m for m in enc.cnns[0] if isinstance(m, torch.nn.Conv2d)]
    sizes = [(c.out_channels, c.kernel_size[0], c.stride[0]) for c in convs]
    assert sizes == ([(32, 8, 4), (64, 4, 2), (64, 3, 1)] if side >= 36 else [(8, 3, 2), (16, 3, 2), (16, 3, 1)])
    out = enc.cnns[0](torch.zeros(1, 3, side, side))
    if side == 84:
        assert out.shape == (1, 64, 7, 7)
    img = torch.randint(0, 256, (2, 3, side, side, 3), dtype=torch.uint8)
    assert enc({"im": img}, torch.zeros(2, 3, 3)).shape == (2, 3, 16)


def shifted(frame, dy, dx, pad):
    """Reference DrQ-v2 shift written independently: edge-pad by `pad`, crop at offset (pad + dy, pad + dx)."""
    H, W = frame.shape[-2:]
    padded = np.pad(frame, [(0, 0), (pad, pad), (pad, pad)], mode="edge")
    return padded[:, pad + dy : pad + dy + H, pad + dx : pad + dx + W]


def find_shift(before, after, pad):
    """The (dy, dx) shifts that turn `before` (C, H, W) into `after`."""
    return [
        (dy, dx)
        for dy in range(-pad, pad + 1)
        for dx in range(-pad, pad + 1)
        if np.array_equal(shifted(before, dy, dx, pad), after)
    ]


def test_random_shift_gives_each_frame_its_own_integer_shift():
    torch.manual_seed(0)
    B, L, C, H, W, pad = 4, 6, 2, 10, 12, 3
    img = torch.arange(B * L * C * H * W, dtype=torch.int32).view(B, L, C, H, W)  # every pixel unique
    out = amago.RandomShift(pad, 1.0).train()(img)
    assert out.shape == img.shape and out.dtype == img.dtype
    shifts = []
    for b in range(B):
        for t in range(L):
            (s,) = find_shift(img[b, t].numpy(), out[b, t].numpy(), pad)  # exactly one integer shift explains the frame
            shifts.append(s)
    per_seq = [set(shifts[b * L : (b + 1) * L]) for b in range(B)]
    assert all(len(s) > 1 for s in per_seq)  # frames of one sequence are not shifted together
    assert len(set(shifts)) > 10 and {dy for dy, _ in shifts} == set(range(-pad, pad + 1))


@pytest.mark.parametrize("frac, n_aug", [(0.05, 1), (0.25, 2), (0.75, 6), (1.0, 8)])
def test_random_shift_changes_only_its_fraction_of_the_batch(frac, n_aug):
    """The last ceil(frac * B) sequences (at least one, as the reference) are shifted; the others are untouched."""
    torch.manual_seed(1)
    img = torch.randint(0, 256, (8, 6, 3, 12, 12), dtype=torch.uint8)
    out = amago.RandomShift(4, frac).train()(img)
    changed = [not torch.equal(out[b], img[b]) for b in range(8)]
    assert changed == [False] * (8 - n_aug) + [True] * n_aug


def test_random_shift_is_identity_in_eval_and_when_off():
    img = torch.randint(0, 256, (4, 3, 3, 12, 12), dtype=torch.uint8)
    assert torch.equal(amago.RandomShift(4, 0.75).eval()(img), img)
    assert torch.equal(amago.RandomShift(4, 0.0).train()(img), img)


def test_encoder_augments_in_training_only_and_keeps_images_out_of_input_norm():
    """Dict obs: image + state vector. Eval mode: the augmented encoder equals its unaugmented twin (rollouts never see
    shifts); train mode: it does not. InputNorm covers the state and rl2 only, and both inputs reach the token."""
    torch.manual_seed(0)
    space = gym.spaces.Dict({"image": image((12, 12, 3)), "state": gym.spaces.Box(-1, 1, (5,), np.float32)})
    aug = amago.make_tstep_encoder(small_args("nature", aug_frac=1.0, aug_pad=2), space, 3)
    plain = amago.make_tstep_encoder(small_args("nature"), space, 3)
    plain.load_state_dict(aug.state_dict())
    assert aug.img_keys == ["image"] and aug.vec.keys == ["state"] and aug.vec.norm.mu.shape == (5 + 3,)
    obs = {"image": torch.randint(0, 256, (4, 6, 12, 12, 3), dtype=torch.uint8), "state": torch.randn(4, 6, 5)}
    rl2 = torch.randn(4, 6, 3)
    aug.eval(), plain.eval()
    torch.testing.assert_close(aug(obs, rl2), plain(obs, rl2), rtol=0, atol=0)
    aug.train(), plain.train()
    assert not torch.allclose(aug(obs, rl2), plain(obs, rl2), atol=1e-4)
    plain(obs, rl2, torch.ones(4, 6, dtype=torch.bool))  # a training forward updates InputNorm on state + rl2
    assert plain.vec.norm.t == 2 and torch.isfinite(plain.vec.norm.mu).all() and plain.vec.norm.mu.abs().max() < 5
    plain.eval()
    base = plain(obs, rl2)
    assert not torch.allclose(plain({**obs, "state": obs["state"] + 1}, rl2), base, atol=1e-4)
    assert not torch.allclose(plain({**obs, "image": 255 - obs["image"]}, rl2), base, atol=1e-4)


def test_hide_rl2_makes_the_agent_blind_to_previous_reward_and_action():
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (3,))})
    small = dict(**SMALL, max_seq_len=6, traj_encoder="gru")
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
