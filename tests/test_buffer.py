import itertools
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import amago_agent as amago
from amago_agent import collate
from common.guards import read_trajectory


def fake_obs(t, A=3):
    return {
        "obs": {"observation": np.array([t, -t], np.float32)},
        "rl2": np.full(A + 1, t, np.float32),
        "time": np.int64(t),
    }


def write_episode(buffer, T, terminal=True):
    writer = amago.TrajectoryWriter(1, buffer, save_len=10_000, max_seq_len=4, rng=np.random.default_rng(0))
    writer.start(0, fake_obs(0))
    for t in range(T):
        writer.step(0, t % 3, float(t), terminal and t == T - 1, fake_obs(t + 1), done=t == T - 1)


def windows(buffer, n):
    return list(itertools.islice(iter(buffer), n))


def test_round_trip(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=4, action_dim=3, discrete=True)
    write_episode(buffer, T=9)
    (path,) = buffer.files()
    data = read_trajectory(path, action_dim=3)
    assert (
        data["obs_observation"].shape == (10, 2)
        and data["rl2"].shape == (10, 4)
        and data["time"].tolist() == list(range(10))
    )
    np.testing.assert_array_equal(data["actions"], np.eye(3)[[t % 3 for t in range(9)]])  # one-hot
    assert data["rewards"].tolist() == list(range(9)) and data["terminated"].tolist() == [False] * 8 + [True]
    for w in windows(buffer, 20):  # every window: max_seq_len transitions, consistent with the file
        t0 = int(w["time"][0])
        assert len(w["time"]) == 5 and len(w["actions"]) == 4
        np.testing.assert_array_equal(w["obs_observation"][:, 0], np.arange(t0, t0 + 5))
        np.testing.assert_array_equal(w["rewards"], np.arange(t0, t0 + 4))
    batch = collate(windows(buffer, 3))
    assert batch["obs"]["observation"].shape == (3, 5, 2) and batch["mask"].all()


def test_short_episode_is_right_padded_with_mask(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=8, action_dim=3, discrete=True)
    write_episode(buffer, T=3)
    write_episode(buffer, T=20)
    batch = collate(windows(buffer, 16))
    assert batch["rl2"].shape[1] == 9 and batch["actions"].shape[1] == 8
    short = batch["mask"].sum(1) == 4
    assert short.any() and not batch["terminated"][short][:, 3:].any()  # padding is never terminal
    assert (batch["rewards"][short][:, 3:] == 0).all()


def test_snippets_overlap_by_one_step_and_bootstrap(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=100, max_seq_len=4, action_dim=3, discrete=True)
    writer = amago.TrajectoryWriter(1, buffer, save_len=8, max_seq_len=4, rng=np.random.default_rng(0))
    writer.start(0, fake_obs(0))
    for t in range(40):
        writer.step(0, 0, 1.0, t == 39, fake_obs(t + 1), done=t == 39)
    files = [read_trajectory(p, action_dim=3) for p in buffer.files()]
    files.sort(key=lambda d: d["time"][0])
    assert len(files) >= 3 and all(4 <= len(d["actions"]) <= 12 for d in files)
    for a, b in zip(files[:-1], files[1:]):
        assert a["time"][-1] == b["time"][0]  # the next snippet starts at the last timestep
        assert not a["terminated"].any()  # a cut is bootstrapped, not terminal
    assert files[-1]["terminated"][-1]
    assert files[-1]["time"][-1] == 40


def test_fifo_deletion_never_touches_protected(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=3, max_seq_len=4, action_dim=3, discrete=True)
    for _ in range(2):
        write_episode(buffer, T=5)
    for p in buffer.files():  # move them to protected/ (e.g. demonstrations)
        os.replace(p, buffer.protected / os.path.basename(p))
    protected = sorted(buffer.protected.glob("*.npz"))
    for _ in range(6):
        write_episode(buffer, T=5)
    fifo = sorted(buffer.fifo.glob("*.npz"))
    stats = buffer.delete_oldest()
    assert sorted(buffer.fifo.glob("*.npz")) == fifo[-3:]  # the 3 newest survive
    assert sorted(buffer.protected.glob("*.npz")) == protected
    assert stats == {"buffer/fifo_files": 3, "buffer/protected_files": 2}
    assert len(buffer.files()) == 5


def test_truncated_file_and_killed_writer_are_never_sampled(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=4, action_dim=3, discrete=True)
    write_episode(buffer, T=9)
    (good,) = buffer.files()
    raw = Path(good).read_bytes()
    (buffer.fifo / "0000_truncated.npz").write_bytes(raw[: len(raw) // 2])  # planted half-file
    (buffer.fifo / ".1111_killed.npz.tmp").write_bytes(raw[:100])  # a writer killed before its rename
    assert len(buffer.files()) == 2  # the temp file is invisible
    with pytest.warns(UserWarning, match="0000_truncated"):
        ws = windows(buffer, 50)
    assert all(w["obs_observation"].shape == (5, 2) for w in ws)  # only the good file was sampled


def test_only_unreadable_files_raise_clearly(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=4, action_dim=3, discrete=True)
    (buffer.fifo / "0_bad.npz").write_bytes(b"not a zip")
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="no readable trajectory files"):
        windows(buffer, 1)


def test_dataloader_worker_streams_batches(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, max_size=10, max_seq_len=4, action_dim=3, discrete=True)
    write_episode(buffer, T=9)
    loader = iter(torch.utils.data.DataLoader(buffer, 6, collate_fn=collate, num_workers=1, persistent_workers=True))
    for _ in range(3):
        batch = next(loader)
        assert batch["rl2"].shape == (6, 5, 4)


@pytest.mark.parametrize("mode", ["none", "right", "left", "both"])
def test_padded_sampling_modes(tmp_path, mode):
    """none: every window is max_seq_len steps inside the file, so the terminal step is in 1 of T-l+1 windows;
    right/both: windows may run past the end (>= 2 steps left), so the terminal step is sampled about as often as any
    step; left/both: windows may start before t=0 (>= 1 step, from t=0). Every window stays consistent with the file."""
    random_state = amago.random.getstate()
    amago.random.seed(0)
    L, T = 4, 40
    buffer = amago.DiskReplayBuffer(
        tmp_path, max_size=10, max_seq_len=L, action_dim=3, discrete=True, padded_sampling=mode
    )
    write_episode(buffer, T=T)
    ws = windows(buffer, 2000)
    amago.random.setstate(random_state)
    lens = np.array([len(w["actions"]) for w in ws])
    t0 = np.array([int(w["time"][0]) for w in ws])
    for w in ws:  # obs/rl2/time have one more step than actions/rewards, and match the file
        assert len(w["time"]) == len(w["actions"]) + 1 >= 2
        np.testing.assert_array_equal(w["rewards"], np.arange(int(w["time"][0]), int(w["time"][0]) + len(w["rewards"])))
    ends = np.array([w["terminated"][-1] for w in ws])
    overhang_right, overhang_left = (lens < L) & (t0 > 0), (lens < L) & (t0 == 0)
    assert overhang_right.any() == (mode in ("right", "both"))
    assert overhang_left.any() == (mode in ("left", "both"))
    assert (lens[t0 > 0] >= 2).all() and (lens <= L).all()
    if mode == "none":
        assert (lens == L).all() and ends.mean() < 2.5 / (T - L + 1)  # ~1/37
    if mode == "right":
        assert ends.mean() > 0.07  # the last step is in windows starting at T-4 .. T-2: 3 of 39 starts (~0.077)
    with pytest.raises(ValueError, match="padded_sampling='middle'"):
        amago.DiskReplayBuffer(
            tmp_path, max_size=10, max_seq_len=L, action_dim=3, discrete=True, padded_sampling="middle"
        )


def test_collate_hands_small_batches_over_as_numpy_and_large_ones_as_torch():
    rng = np.random.default_rng(0)

    def window(T, frame):  # T transitions, T+1 observations of shape `frame`
        return {
            "obs_pixels": rng.integers(0, 255, (T + 1, *frame), dtype=np.uint8),
            "rl2": rng.random((T + 1, 3), np.float32),
            "time": np.arange(T + 1),
            "actions": rng.random((T, 2), np.float32),
            "rewards": rng.random(T, np.float32),
            "terminated": np.zeros(T, bool),
        }

    small = collate([window(8, (4,)), window(5, (4,))])
    large = collate([window(32, (64, 64, 3)) for _ in range(12)] + [window(20, (64, 64, 3))])  # ~5.2 MB
    assert isinstance(small["rl2"], np.ndarray) and isinstance(small["obs"]["pixels"], np.ndarray)
    assert isinstance(large["rl2"], torch.Tensor) and isinstance(large["obs"]["pixels"], torch.Tensor)
    for batch in (small, large):  # the same padded content either way, as torch after to_device
        on_device = amago.to_device(batch, "cpu")
        assert all(
            isinstance(v, torch.Tensor) for v in [*on_device["obs"].values(), on_device["rl2"], on_device["mask"]]
        )
        np.testing.assert_array_equal(np.asarray(on_device["mask"]).sum(1)[-1], 6 if batch is small else 21)
        assert on_device["obs"]["pixels"].dtype == torch.uint8 and not on_device["terminated"].any()
