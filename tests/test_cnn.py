"""Pixels and dict observations: the CNN timestep encoders (channels first or last), DrQ-v2's random shift, the
pixel T-Maze (same rules as T-Maze, cue in the first frame only), and short runs of the agent on pixels and dicts."""

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import amago_agent as amago
import envs  # noqa: F401  (registers the ids)
from envs.pixel_tmaze import PixelTMaze
from envs.tmaze import TMaze

SCRIPT = Path(__file__).resolve().parents[1] / "amago_agent.py"
SMALL = {
    "nature": dict(cnn_channels=(8, 16), cnn_kernels=(3, 3), cnn_strides=(2, 1)),
    "impala": dict(cnn_channels=(4, 8)),
}


def small_args(cnn, **kw):
    return amago.Args(tstep_hidden=16, tstep_dim=16, cnn=cnn, **SMALL[cnn], **kw)


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
    pix = gym.spaces.Dict({"im": image((24, 24, 3))})
    with pytest.raises(ValueError, match=r"a 24x24 image is too small for --cnn nature"):
        amago.make_tstep_encoder(amago.Args(), pix, 3)  # DQN's kernels and strides want 84x84
    with pytest.raises(ValueError, match=r"one entry per conv layer"):
        amago.make_tstep_encoder(amago.Args(cnn_channels=(8, 16)), pix, 3)
    with pytest.raises(ValueError, match=r"divisible by 4.*\(6, 8\)"):
        amago.make_tstep_encoder(amago.Args(cnn="impala", cnn_channels=(6, 8)), pix, 3)
    with pytest.raises(ValueError, match=r"--aug-frac must lie in \[0, 1\].*got 1.5"):
        amago.make_tstep_encoder(small_args("impala", aug_frac=1.5), pix, 3)
    assert isinstance(amago.make_tstep_encoder(amago.Args(tstep_encoder="ff"), pix, 3), amago.TstepEncoder)  # flattens


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


def test_pixel_tmaze_has_tmazes_rules():
    """Same seed, same actions: the same goal, rewards, ends and infos as T-Maze (corridor 10), on 24x24 uint8 frames.
    Half the episodes walk the corridor and turn at random (successes and failures), half act at random."""
    rng = np.random.default_rng(0)
    for seed in range(40):
        pix, ref = PixelTMaze(), TMaze(10)
        acts = [0] * 10 + [int(rng.choice([1, 3]))] if seed % 2 else rng.integers(0, 4, 11).tolist()
        frame, _ = pix.reset(seed=seed)
        ref.reset(seed=seed)
        assert pix.goal == ref.goal and frame.shape == (24, 24, 3) and frame.dtype == np.uint8
        for t, a in enumerate(acts):
            frame, r, term, trunc, info = pix.step(a)
            assert (r, term, trunc, info) == ref.step(a)[1:]
            assert term == (t == 10)  # H + 1 steps


def test_pixel_tmaze_shows_the_cue_in_the_first_frame_only():
    """Episodes with opposite goals and the same actions differ only in frame 0, where a yellow mark sits on the cell
    above (goal up) or below (goal down) the start."""
    episodes = {}
    for seed in range(20):
        env = PixelTMaze()
        frames = [env.reset(seed=seed)[0]] + [env.step(a)[0] for a in [0] * 10 + [1]]
        episodes.setdefault(env.goal, frames)
    up, down = episodes[1], episodes[-1]
    assert all(np.array_equal(a, b) for a, b in zip(up[1:], down[1:]))
    c, x0, y0 = env.cell, env.x0, env.y0
    above, below = (slice(y0 - c, y0), slice(x0, x0 + c)), (slice(y0 + c, y0 + 2 * c), slice(x0, x0 + c))
    assert (up[0][above] == (255, 255, 0)).all() and (down[0][below] == (255, 255, 0)).all()
    diff = up[0] != down[0]
    diff[above] = diff[below] = False
    assert not diff.any()


def run_agent(tmp_path, env_id, *extra):
    from common.logs import read_scalars

    cmd = [
        sys.executable,
        str(SCRIPT),
        "--env-id",
        env_id,
        "--run-name",
        "r",
        "--num-envs",
        "2",
        "--total-timesteps",
        "88",
        "--timesteps-per-epoch",
        "11",
        "--batches-per-epoch",
        "2",
        "--batch-size",
        "4",
        "--max-seq-len",
        "11",
        "--traj-save-len",
        "11",
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
        "--eval-interval",
        "2",
        "--eval-episodes",
        "2",
        "--traj-encoder",
        "transformer",
        *extra,
    ]
    out = subprocess.run(
        cmd,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SCRIPT.parent), "PATH": ""},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    weights = torch.load(tmp_path / "runs" / "r" / "checkpoint.pt", weights_only=False)["agent"]
    assert any(k.startswith("tstep.cnns.0.") for k in weights)  # --tstep-encoder auto picked the CNN
    return read_scalars(tmp_path / "runs" / "r"), tmp_path / "buffers" / "r" / "fifo"


def test_agent_learns_from_pixels_smoke(tmp_path):
    """The pixel T-Maze end to end: CNN + random shift in training, uint8 frames in the buffer, success logged."""
    tags, fifo = run_agent(
        tmp_path,
        "envs:PixelTMaze-v0",
        "--cnn-channels",
        "8",
        "16",
        "--cnn-kernels",
        "3",
        "3",
        "--cnn-strides",
        "2",
        "2",
        "--aug-frac",
        "0.75",
        "--aug-pad",
        "2",
    )
    assert len(tags["eval/PixelTMaze-v0/success"]) == 2  # epochs 2 and 4
    data = np.load(next(fifo.glob("*.npz")))
    assert data["obs_observation"].dtype == np.uint8 and data["obs_observation"].shape[1:] == (24, 24, 3)


def test_agent_runs_on_dict_observations_smoke(tmp_path):
    """An image (grayscale, channels first) beside a state vector, through the IMPALA backbone."""
    tags, fifo = run_agent(tmp_path, "envs:PixelTMazeDict-v0", "--cnn", "impala", "--cnn-channels", "4", "8")
    assert "eval/PixelTMazeDict-v0/success" in tags
    data = np.load(next(fifo.glob("*.npz")))
    assert data["obs_image"].shape[1:] == (1, 24, 24) and data["obs_state"].shape[1:] == (2,)
