"""Faults and bad input: whatever a user does or an env emits, nothing saved is lost or corrupted, and the error says
what was wrong (the env id, step, key, file or flag) and what is accepted. The envs below are written for the purpose;
the scripts reach them as `--env-id tests.test_faults:<id>`."""

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))  # conftest, also when a script imports this module for its envs
from conftest import MULTITASK_SCRIPT, ROOT, SCRIPT, TINY_RUN, flags, make_agent, random_batch, run_script  # noqa: E402

import amago_agent  # noqa: E402
import amago_multitask  # noqa: E402
from common.args import resolve_env_id  # noqa: E402
from common.evaluate import evaluate  # noqa: E402
from common.guards import FileCache, UserError, read_trajectory  # noqa: E402
from common.logs import read_scalars  # noqa: E402
from common.rundir import claim_run  # noqa: E402


class FaultyEnv(gym.Env):
    """Box(4) observations, Discrete(3) actions, episodes of `length` steps (None: never ending; end_first: only the
    first episode of an instance ends). From step `bad_after` of an instance on, the reward is +inf or one observation
    entry is NaN, or step raises. reward "random": each step's reward is drawn from the env's seeded RNG."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, length=5, bad=None, bad_after=0, reward="one", end_first=None):
        self.length, self.bad, self.bad_after, self.reward, self.end_first = length, bad, bad_after, reward, end_first
        self.steps, self.episodes = 0, 0

    def obs(self):
        o = np.full(4, 0.1 * (self.t % 5), np.float32)
        if self.bad == "obs" and self.steps > self.bad_after:
            o[2] = np.nan
        return o

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.episodes += 1
        return self.obs(), {}

    def step(self, action):
        self.t += 1
        self.steps += 1
        r = float(self.np_random.random()) if self.reward == "random" else 1.0
        if self.bad == "reward" and self.steps > self.bad_after:
            r = float("inf")
        if self.bad == "huge" and self.steps > self.bad_after:
            r = 1e30  # finite, but its square overflows float32
        if self.bad == "raise" and self.steps > self.bad_after:
            raise RuntimeError("the simulator crashed")
        ends = self.end_first if self.end_first and self.episodes == 1 else self.length
        return self.obs(), r, ends is not None and self.t >= ends, False, {}


gym.register("FaultsInfReward-v0", entry_point=FaultyEnv, kwargs=dict(bad="reward", bad_after=60))
gym.register("FaultsHugeReward-v0", entry_point=FaultyEnv, kwargs=dict(bad="huge", bad_after=60))
gym.register("FaultsNanObs-v0", entry_point=FaultyEnv, kwargs=dict(bad="obs", bad_after=60))
gym.register("FaultsRandomReturn-v0", entry_point=FaultyEnv, kwargs=dict(length=3, reward="random"))
gym.register("FaultsStepRaises-v0", entry_point=FaultyEnv, kwargs=dict(bad="raise", bad_after=3))
gym.register("FaultsNeverEnds-v0", entry_point=FaultyEnv, kwargs=dict(length=None))
gym.register("FaultsEndsOnce-v0", entry_point=FaultyEnv, kwargs=dict(length=None, end_first=3))


class TextObsEnv(FaultyEnv):
    observation_space = gym.spaces.Text(8)


ENV = "tests.test_faults:"
SCRIPTS = pytest.mark.parametrize("module", [amago_agent, amago_multitask], ids=["agent", "multitask"])
RUN = dict(env_id=ENV + "FaultsRandomReturn-v0", run_name="r", num_workers=0, timesteps_per_epoch=10)
RUN.update(total_timesteps=40, batches_per_epoch=1, eval_interval=1, checkpoint_interval=1)


def ckpt(path):
    return torch.load(path / "runs/r/checkpoint.pt", weights_only=False)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished 2-epoch run named r (checkpoint, buffer files, 2 evals); tests copy it."""
    path = tmp_path_factory.mktemp("finished")
    run_script(path, **RUN)
    return path


def copy_run(src, dst):
    for d in ("runs", "buffers"):
        shutil.copytree(src / d, dst / d)
    return {p: p.read_bytes() for p in [*dst.glob("buffers/r/fifo/*"), dst / "runs/r/checkpoint.pt"]}


def unchanged(saved):
    return all(p.read_bytes() == b for p, b in saved.items())


# --------------------------------------------------- what an env emits ---------------------------------------------------
@pytest.mark.parametrize(
    "script, env, what",
    [
        (SCRIPT, "FaultsInfReward-v0", "non-finite reward inf"),
        (MULTITASK_SCRIPT, "FaultsNanObs-v0", "non-finite observation 'observation'"),
        (SCRIPT, "FaultsHugeReward-v0", "reward 1e+30 x --reward-multiplier 10 = 1e+31 exceeds 1e+14"),
        (MULTITASK_SCRIPT, "FaultsHugeReward-v0", "reward 1e+30 x --reward-multiplier 10 = 1e+31 exceeds 1e+14"),
    ],
    ids=["inf-reward", "nan-obs", "huge-reward", "huge-reward-multitask"],
)
def test_nonfinite_env_output_stops_before_the_buffer(tmp_path, script, env, what):
    """A bad step (at each actor's 61st step, in epoch 7) is a clear error; the checkpoint of epoch 6 and every file
    saved stay as they were, and hold only finite values."""
    out = run_script(
        tmp_path, script, check=False, **{**RUN, "env_id": ENV + env, "total_timesteps": 200, "eval_interval": 0}
    )
    assert out.returncode != 0
    assert f"env {env}, actor 0, env step 120" in out.stderr and what in out.stderr, out.stderr[-2000:]
    assert ckpt(tmp_path)["counters"]["epoch"] == 6
    files = list((tmp_path / "buffers/r/fifo").glob("*.npz"))
    data = [np.load(f) for f in files]
    assert files and all(np.isfinite(d[k]).all() for d in data for k in ("rewards", "obs_observation"))
    assert max(np.abs(d["rewards"]).max() for d in data) <= 1.0  # the bad step never reached a file


@SCRIPTS
def test_nonfinite_loss_never_reaches_the_optimizer(module):
    agent, args = make_agent("box", module=module)
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-3)
    acc = __import__("accelerate").Accelerator(cpu=True)
    agent, opt = acc.prepare(agent, opt)
    batch = random_batch(agent)
    with torch.no_grad():  # a diverged weight (the data is checked before it is saved)
        agent.actor.net[-1].weight[0, 0] = float("inf")
    before = {k: v.clone() for k, v in agent.named_parameters()}
    with pytest.raises(FloatingPointError, match="non-finite loss .* at update 7"):
        module.train_step(agent, opt, acc, batch, args, 7)
    assert all(torch.equal(before[k], v) for k, v in agent.named_parameters())


def test_nonfinite_checkpoint_is_not_written_over_a_good_one(tmp_path):
    agent, _ = make_agent("discrete")
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-3)
    explore = amago_agent.EpsilonGreedy(2, gym.spaces.Discrete(3), 1.0, 0.05, 100, 0)
    amago_agent.save_checkpoint(tmp_path / "c.pt", agent, opt, explore, {"updates": 1})
    with torch.no_grad():
        agent.actor.net[0].weight[0, 0] = float("nan")
    with pytest.raises(FloatingPointError, match=r"non-finite values in 1 tensors, e.g. \['actor.net.0.weight'\]"):
        amago_agent.save_checkpoint(tmp_path / "c.pt", agent, opt, explore, {"updates": 2})
    assert amago_agent.load_checkpoint(tmp_path / "c.pt", agent, opt, explore) == {"updates": 1}


@SCRIPTS
def test_unsupported_observation_space_is_a_clear_error(module):
    with pytest.raises(ValueError, match=r"observation 'observation': Text\(.*use Box, Discrete, MultiBinary or Multi"):
        module.AmagoEnv(TextObsEnv(), "TextObs")
    space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "seq": gym.spaces.Sequence(gym.spaces.Discrete(2))})
    with pytest.raises(ValueError, match="observation 'seq': Sequence"):
        module.AmagoEnv(type("SeqEnv", (FaultyEnv,), {"observation_space": space})(), "SeqObs")


@SCRIPTS
def test_evaluation_of_an_env_that_never_ends_stops_at_the_cap(module):
    agent, _ = make_agent("discrete", module=module)
    envs = module.make_vec_env("FaultsNeverEnds-v0", 2, "sync", 0)
    with pytest.raises(RuntimeError, match="FaultsNeverEnds-v0: 0 of 2 episodes ended in 30 steps per actor"):
        evaluate(agent, envs, 2, True, "cpu", seed=0, max_steps=30)
    envs = module.make_vec_env("FaultsEndsOnce-v0", 2, "sync", 0)  # each actor's first episode ends, then none
    with pytest.warns(UserWarning, match="FaultsEndsOnce-v0: 2 of 4 episodes ended in 30 steps per actor"):
        returns, names, _ = evaluate(agent, envs, 4, True, "cpu", seed=0, max_steps=30)
    assert returns == [3.0, 3.0] and names == ["FaultsEndsOnce-v0"] * 2


def test_same_seed_runs_give_the_same_eval_returns(tmp_path, finished_run):
    """The env's rewards come from its own RNG, so equal returns need equally seeded eval envs."""
    run_script(tmp_path, **RUN)
    a, b = (read_scalars(p / "runs/r")["eval/return"] for p in (finished_run, tmp_path))
    assert len(a) == 2 and [v for _, _, v in a] == [v for _, _, v in b]


# ---------------------------------------------------- what a user does ----------------------------------------------------
def test_reused_run_name_without_resume_is_refused(tmp_path, finished_run):
    saved = copy_run(finished_run, tmp_path)
    out = run_script(tmp_path, check=False, **RUN)
    assert out.returncode != 0 and "run 'r' already exists (runs/r/checkpoint.pt holds its data)" in out.stderr
    assert "pass --resume to continue it, or another --run-name" in out.stderr
    assert unchanged(saved)


def test_another_envs_data_is_kept_out_of_a_buffer(tmp_path, finished_run):
    """--resume with another env id is refused before anything is written: by the run's saved flags, and without them
    (a run from before they were saved) by the buffer's spec.json."""
    saved = copy_run(finished_run, tmp_path)
    out = run_script(tmp_path, check=False, **{**RUN, "env_id": "CartPole-v1", "resume": True})
    assert out.returncode != 0 and "--resume: --env-id CartPole-v1 differs from run r's" in out.stderr
    assert unchanged(saved)
    (tmp_path / "runs/r/flags.json").unlink()
    out = run_script(tmp_path, check=False, **{**RUN, "env_id": "CartPole-v1", "resume": True})
    assert out.returncode != 0 and "holds data of env FaultsRandomReturn-v0" in out.stderr
    assert "this run's env is CartPole-v1" in out.stderr


def test_loader_skips_files_of_other_shapes(tmp_path):
    space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (2,))})
    buffer = amago_agent.DiskReplayBuffer(tmp_path, 10, max_seq_len=4, action_dim=3, discrete=True, obs_space=space)
    for dim in (2, 5):  # ours, then another env's
        obs = [
            {"obs": {"observation": np.zeros(dim, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t}
            for t in range(9)
        ]
        buffer.save({"obs": obs, "actions": [0] * 8, "rewards": [0.0] * 8, "terminated": [False] * 8})
    with pytest.warns(UserWarning, match=r"differ from the run's \{'obs_observation': \(2,\)\}") as w:
        windows = [buffer.sample(buffer.files(), FileCache(100, 2**30), set()) for _ in range(20)]
    assert all(x["obs_observation"].shape[1:] == (2,) for x in windows) and len(w) >= 1


@contextlib.contextmanager
def run_held_by_another_process(tmp_path):
    """A process that claims run r (its buffer and run folder) and holds it while the block runs; -> its PID."""
    code = "import time; from common.rundir import claim_run; lock = claim_run('buffers/r', 'runs/r/checkpoint.pt', False); print('held', flush=True); time.sleep(60)"
    holder = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_two_learners_on_one_run_are_refused(tmp_path):
    """A second process on a run gets an error naming the PID that holds it; a rank > 0 of the same launch (or a
    process in another role) shares the run."""
    with run_held_by_another_process(tmp_path) as pid:
        out = run_script(tmp_path, check=False, **RUN)
        assert out.returncode != 0 and f"run 'r' is in use by another process (PID {pid}" in out.stderr
        assert claim_run(tmp_path / "buffers/r", tmp_path / "runs/r/checkpoint.pt", False, role="collector")
    assert claim_run(tmp_path / "buffers/r", tmp_path / "runs/r/checkpoint.pt", False)  # free once its holder is gone


def test_temp_files_of_killed_writers_are_removed_at_start(tmp_path, monkeypatch):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    fifo = tmp_path / "buffers/r/fifo"
    fifo.mkdir(parents=True)
    for name in [f".1_a.npz.{dead.stdout.strip()}.tmp", f".2_b.npz.{os.getpid()}.tmp", ".3_c.npz.tmp", "4_d.npz"]:
        (fifo / name).write_bytes(b"x")
    claim_run(tmp_path / "buffers/r", tmp_path / "runs/r/checkpoint.pt", resume=True)  # has data: resumes from 0
    assert sorted(p.name for p in fifo.iterdir()) == [f".2_b.npz.{os.getpid()}.tmp", "4_d.npz"]  # a live writer's stays
    tmps = []
    monkeypatch.setattr(amago_agent.os, "replace", lambda src, dst: tmps.append(Path(src).name))
    buffer = amago_agent.DiskReplayBuffer(tmp_path / "b", 10, max_seq_len=4, action_dim=3, discrete=True)
    obs = [
        {"obs": {"observation": np.zeros(2, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t} for t in range(3)
    ]
    buffer.save({"obs": obs, "actions": [0, 1], "rewards": [0.0, 1.0], "terminated": [False, True]})
    assert tmps[0].endswith(f".npz.{os.getpid()}.tmp")  # so that a later start knows whose it is


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_save_a_checkpoint_and_say_how_to_resume(tmp_path, sig):
    args = {**TINY_RUN, **RUN, "total_timesteps": 100_000, "timesteps_per_epoch": 50, "batches_per_epoch": 20}
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(SCRIPT), *flags(**{**args, "eval_interval": 0})]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / "runs/r/checkpoint.pt").exists() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)  # into the next epoch
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr[-2000:]
    state = ckpt(tmp_path)
    counters, steps = state["counters"], {s["step"].item() for s in state["optimizer"]["state"].values()}
    assert "Traceback" not in stderr
    assert f"checkpoint saved at epoch {counters['epoch']}; continue with --resume --run-name r" in stdout
    assert steps == {counters["updates"]}  # the weights and the counters are from the same moment
    rates = [v for _, _, v in read_scalars(tmp_path / "runs/r")["charts/updates_per_s"]]
    assert max(rates) <= 10 * min(rates)  # the epoch cut short logs the rate of the updates it made, or none
    # the unfinished epoch is done again on --resume, so its env steps are not in the checkpoint's count
    assert counters["global_step"] == counters["epoch"] * 100 == counters["frames"]["FaultsRandomReturn-v0"]
    # the bar's last line keeps the env steps it reached (never a step back); the line after it says what the
    # checkpoint keeps and what --resume collects again
    last = [line for line in stderr.replace("\r", "\n").splitlines() if " env steps [" in line][-1]
    shown = int(re.search(r"([\d,]+)/[\d,]+ env steps", last)[1].replace(",", ""))
    redone = shown - counters["global_step"]
    kept = f"(kept: {counters['global_step']:,} env steps, {counters['updates']:,} updates"
    # the signal lands mid-epoch (its steps are collected again), or before the next epoch's first step (none are)
    again = f"; collected again: the unfinished epoch's {redone:,} env steps)" if redone else ")"
    assert 0 <= redone <= 100 and kept + again in stdout, (last, stdout)


def test_discount_zero_is_accepted():
    for module in (amago_agent, amago_multitask):
        module.check_args(module.Args(gamma=0.0))
        with pytest.raises(ValueError, match=r"discounts must lie in \[0, 1\): --gamma 1.0"):
            module.check_args(module.Args(gamma=1.0))


def test_files_deleted_by_the_fifo_are_dropped_silently(tmp_path):
    buffer = amago_agent.DiskReplayBuffer(tmp_path, 10, max_seq_len=4, action_dim=3, discrete=True)
    gone = str(buffer.fifo / "0_deleted.npz")  # listed, then deleted by the FIFO before the worker read it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="no readable trajectory files"):
            buffer.sample([gone], FileCache(10, 2**30), set())
    (buffer.fifo / "1_corrupt.npz").write_bytes(b"not a zip")
    with pytest.warns(UserWarning, match="skipping replay file 1_corrupt.npz"), pytest.raises(RuntimeError):
        buffer.sample(buffer.files(), FileCache(10, 2**30), set())


def test_bad_env_module_and_misspelled_id_name_the_flag():
    with pytest.raises(ValueError, match="--env-id no_such_pkg.envs:Foo-v0: cannot import 'no_such_pkg.envs'"):
        resolve_env_id("no_such_pkg.envs:Foo-v0")
    with pytest.raises(UserError, match="--env-id 'CartPol-v1': .*Did you mean: `CartPole`"):
        resolve_env_id("CartPol-v1")


def test_unwritable_buffer_dir_names_the_flag(tmp_path):
    (tmp_path / "a_file").write_text("")
    out = run_script(tmp_path, check=False, **{**RUN, "buffer_dir": "a_file/buffers"})
    assert out.returncode != 0 and "--buffer-dir 'a_file/buffers': cannot write a_file/buffers/r" in out.stderr


def test_run_py_stops_its_training_run_when_stopped(tmp_path):
    name = f"test_faults_{os.getpid()}"
    cmd = [sys.executable, str(ROOT / "benchmarks/run.py"), "--minutes", "5", "--name", name, "--"]
    cmd += flags(**{**TINY_RUN, "total_timesteps": 100_000, "eval_interval": 0, "num_workers": 0})
    proc = subprocess.Popen(cmd, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL)
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        for _ in range(1200):  # its training run starts
            if children.read_text().split():
                break
            time.sleep(0.05)
        child = int(children.read_text().split()[0])
        time.sleep(3)  # the child sets up its signal handling as it starts
        proc.terminate()
        proc.wait(timeout=60)
        assert not Path(f"/proc/{child}").exists()  # stopped and reaped, not left running
    finally:
        proc.kill()
        shutil.rmtree(ROOT / "benchmarks/out" / name, ignore_errors=True)


def test_capture_video_writes_a_video(tmp_path):
    out = run_script(tmp_path, **{**RUN, "env_id": "CartPole-v1", "capture_video": True, "eval_interval": 0})
    assert list((tmp_path / "videos/r").glob("*.mp4")) and "Traceback" not in out.stderr


def test_replay_cache_is_bounded_by_bytes(tmp_path):
    buffer = amago_agent.DiskReplayBuffer(tmp_path, 100, max_seq_len=4, action_dim=3, discrete=True, cache_bytes=3000)
    obs = [
        {"obs": {"observation": np.zeros(16, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t} for t in range(9)
    ]
    for _ in range(10):
        buffer.save({"obs": obs, "actions": [0] * 8, "rewards": [0.0] * 8, "terminated": [False] * 8})
    size = sum(v.nbytes for v in read_trajectory(buffer.files()[0], action_dim=3).values())  # 928 bytes a file
    stream = iter(buffer)
    for _ in range(200):
        next(stream)
    cache = stream.gi_frame.f_locals["cache"]
    assert len(cache) == 3000 // size and cache.nbytes == len(cache) * size <= 3000


# ------------------------------------------------ weights files, disks, signals ------------------------------------------------
class RunsCode:
    """Pickled, calls os.system on load: what a crafted weights file does."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def small_run_state():
    agent, _ = make_agent("discrete")
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-3)
    return agent, opt, amago_agent.EpsilonGreedy(2, gym.spaces.Discrete(3), 1.0, 0.05, 100, 0)


def test_crafted_weights_files_are_refused_and_run_nothing(tmp_path):
    """checkpoint.pt (--resume), policy_latest.pt (every collector) and --load-from load tensors and plain data only."""
    from common.checkpoint import UnsafeFileError
    from common.scale import load_latest, load_weights

    agent, opt, explore = small_run_state()
    marker, evil = tmp_path / "ran", tmp_path / "evil.pt"
    torch.save({"agent": RunsCode(marker), "updates": 1}, evil)
    refused = f"refusing to load {evil}: it holds Python objects"
    with pytest.raises(UnsafeFileError, match=refused):
        amago_agent.load_checkpoint(evil, agent, opt, explore)
    with pytest.raises(UnsafeFileError, match=refused):
        load_latest(evil, agent, None)
    with pytest.raises(UnsafeFileError, match=refused):
        load_weights(evil, agent)
    assert not marker.exists()


def test_checkpoints_hold_plain_data_and_restore_every_rng(tmp_path):
    agent, opt, explore = small_run_state()
    explore.scale = explore.rng.random(2)
    amago_agent.save_checkpoint(tmp_path / "c.pt", agent, opt, explore, {"updates": 3})
    torch.load(tmp_path / "c.pt", weights_only=True)  # no allow-list needed
    draws = lambda: (random.random(), np.random.rand(), torch.rand(1).item(), explore.rng.random(), *explore.scale)  # noqa: E731
    expected = draws()
    fresh = small_run_state()[2]
    assert amago_agent.load_checkpoint(tmp_path / "c.pt", agent, opt, fresh) == {"updates": 3}
    explore = fresh
    assert draws() == expected


def test_a_corrupt_checkpoint_falls_back_to_the_one_before(tmp_path, capsys):
    from common.checkpoint import CorruptFileError

    agent, opt, explore = small_run_state()
    path, prev = tmp_path / "checkpoint.pt", tmp_path / "checkpoint.prev.pt"
    for updates in (1, 2):
        amago_agent.save_checkpoint(path, agent, opt, explore, {"updates": updates})
    assert amago_agent.load_checkpoint(path, agent, opt, explore) == {"updates": 2}
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    assert amago_agent.load_checkpoint(path, agent, opt, explore) == {"updates": 1}
    err = capsys.readouterr().err
    assert f"{path} is corrupt or truncated" in err and f"resuming from the checkpoint before it, {prev}" in err
    corrupt = tmp_path / "checkpoint.corrupt.pt"  # set aside, so that the next save cannot rotate it over prev
    assert f"({path} moved to {corrupt})" in err and len(corrupt.read_bytes()) == 1000
    amago_agent.save_checkpoint(path, agent, opt, explore, {"updates": 3})
    assert amago_agent.load_checkpoint(prev, agent, opt, explore) == {"updates": 1}  # the good one, kept
    path.write_bytes(path.read_bytes()[:1000])
    prev.unlink()
    with pytest.raises(CorruptFileError, match=f"{path} is corrupt or truncated .*no older checkpoint"):
        amago_agent.load_checkpoint(path, agent, opt, explore)


@pytest.mark.parametrize(
    "error",
    [
        OSError(28, "No space left on device"),
        RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos"),
    ],
    ids=["enospc", "torch-writer"],
)
def test_a_full_disk_during_a_checkpoint_says_so_and_keeps_the_last_one(tmp_path, monkeypatch, error):
    import common.checkpoint

    agent, opt, explore = small_run_state()
    path = tmp_path / "checkpoint.pt"
    amago_agent.save_checkpoint(path, agent, opt, explore, {"updates": 1})
    saved = path.read_bytes()

    def full(state, f):
        Path(f).write_bytes(b"partial")
        raise error

    monkeypatch.setattr(common.checkpoint.torch, "save", full)
    with pytest.raises(OSError, match=f"cannot write {path}: no space left on the device.*{path} is intact"):
        amago_agent.save_checkpoint(path, agent, opt, explore, {"updates": 2})
    assert path.read_bytes() == saved and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]


def test_a_full_disk_during_a_trajectory_write_names_the_file_and_keeps_the_others(tmp_path, monkeypatch):
    from common.guards import DiskFullError

    buffer = amago_agent.DiskReplayBuffer(tmp_path / "b", 10, max_seq_len=4, action_dim=3, discrete=True)
    obs = [
        {"obs": {"observation": np.zeros(2, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t} for t in range(3)
    ]
    traj = {"obs": obs, "actions": [0, 1], "rewards": [0.0, 1.0], "terminated": [False, True]}
    buffer.save(traj)
    before = sorted(os.listdir(buffer.fifo))

    def full(f, **arrays):
        f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(amago_agent.np, "savez", full)
    with pytest.raises(
        DiskFullError, match=rf"cannot write {buffer.fifo}/\S+\.npz: no space left on the device\. Nothing"
    ):
        buffer.save(traj)
    assert sorted(os.listdir(buffer.fifo)) == before  # no partial file, the earlier one whole


def test_a_full_disk_mid_run_is_one_line(tmp_path):
    """On a real 1-MB filesystem (a tmpfs; skipped where this process may not mount one): the run stops with one
    line that names the file, and no traceback."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = run_script(disk, check=False, **{**RUN, "total_timesteps": 100_000, "eval_interval": 0})
    finally:
        subprocess.run(["umount", str(disk)])
    lines = [line for line in out.stderr.splitlines() if line.strip() and " env steps [" not in line]  # not the bar
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert len(lines) == 1 and re.match(r"error: cannot write \S+: no space left on the device\. Nothing", lines[0])


def test_weights_of_other_sizes_name_the_flags(tmp_path):
    """A run without flags.json (a copy, or one made before it existed) resumed with other sizes: the error names the
    flags that differ, in one line, instead of torch's list of every tensor; nothing of the run is changed."""
    args = {**RUN, "d_model": 16, "n_layers": 1}
    assert run_script(tmp_path, **args).returncode == 0
    (tmp_path / "runs/r/flags.json").unlink()
    saved = (tmp_path / "runs/r/checkpoint.pt").read_bytes()
    out = run_script(tmp_path, check=False, **{**args, "d_model": 32, "n_layers": 2, "resume": True})
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
    assert "16 in the file (--d-model" in lines[0] and "2 layers here, 1 in the file (--n-layers" in lines[0]
    assert (tmp_path / "runs/r/checkpoint.pt").read_bytes() == saved and not (tmp_path / "runs/r/flags.json").exists()


def test_accelerate_launch_on_the_cpu_says_it_runs_one_process(tmp_path):
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    env = {"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    cmd = [launcher, "launch", "--cpu", "--num_processes", "2", str(SCRIPT), *flags(**{**TINY_RUN, **RUN})]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "note: accelerate launch --cpu starts one process, not 2" in out.stderr
    assert "torchrun --nproc_per_node 2 amago_agent.py" in out.stderr


def test_collectors_keep_their_weights_through_a_truncated_or_missing_policy_file(tmp_path, capsys):
    from common.scale import load_latest, save_latest

    agent, _ = make_agent("discrete")
    latest = tmp_path / "runs/r/policy_latest.pt"
    seen = load_latest(latest, agent, None)
    seen = load_latest(latest, agent, seen)
    out = capsys.readouterr().out
    assert out.count(f"collector: no policy at {latest} yet; acting with random initial weights until the learner") == 1
    save_latest(latest, agent, 5)
    seen = load_latest(latest, agent, seen)
    before = {k: v.clone() for k, v in agent.state_dict().items()}
    latest.write_bytes(latest.read_bytes()[:1000])  # e.g. copied in by hand, half-way
    assert load_latest(latest, agent, seen)["updates"] == 5
    assert f"collector: {latest} is corrupt or truncated" in capsys.readouterr().out
    assert all(torch.equal(before[k], v) for k, v in agent.state_dict().items())
    save_latest(latest, agent, 6)  # the learner's next one is read
    assert load_latest(latest, agent, seen)["updates"] == 6


def start_script(cwd, script=SCRIPT, **args):
    """The script in its own process group (as a scheduler or a shell job runs it), output piped."""
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(script), *flags(**{**TINY_RUN, **args})]
    return subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def finish(proc, timeout=120):
    """(stdout, stderr) once the process ends; a process that hangs is killed with its group, and the test fails."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"hung: still running {timeout} s after it should have ended")


def test_an_env_error_in_async_mode_exits_with_the_error(tmp_path):
    """The env workers leave SIGTERM to the main process: the exit-time clean-up that terminates them cannot hang."""
    proc = start_script(tmp_path, **{**RUN, "env_id": ENV + "FaultsStepRaises-v0", "env_mode": "async"})
    _, stderr = finish(proc)
    assert proc.returncode == 1 and "RuntimeError: the simulator crashed" in stderr, stderr[-2000:]
    assert re.search(r"env FaultsStepRaises-v0, env step \d+ \(all actors together\): the env raised", stderr)
    assert "no checkpoint was saved yet" in stderr


@pytest.mark.parametrize("env_mode", ["sync", "async"])
def test_sigterm_to_the_process_group_saves_a_checkpoint(tmp_path, env_mode):
    """kill -TERM -PGID (SLURM, systemd, a shell's job control) reaches the DataLoader and env workers too: they leave
    it to the main process, which saves and exits 143."""
    args = {**RUN, "total_timesteps": 100_000, "batches_per_epoch": 20, "num_workers": 1, "eval_interval": 0}
    proc = start_script(tmp_path, **args, env_mode=env_mode)
    while not (tmp_path / "runs/r/checkpoint.pt").exists() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)  # into the next epoch
    os.killpg(proc.pid, signal.SIGTERM)
    stdout, stderr = finish(proc)
    assert proc.returncode == 143 and "Traceback" not in stderr, stderr[-2000:]
    assert f"checkpoint saved at epoch {ckpt(tmp_path)['counters']['epoch']}; continue with --resume" in stdout


def test_sigterm_to_the_launcher_saves_the_learners_checkpoint(tmp_path, finished_run):
    """The launcher forwards SIGTERM to the learner's process group (its DataLoader worker included)."""
    copy_run(finished_run, tmp_path)
    args = {**RUN, "total_timesteps": 100_000, "batches_per_epoch": 20, "num_workers": 1, "resume": True}
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "common.launch", "--collectors", "0", str(SCRIPT), *flags(**{**TINY_RUN, **args})]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = (tmp_path / "runs/r/checkpoint.pt").stat().st_mtime_ns
    while (tmp_path / "runs/r/checkpoint.pt").stat().st_mtime_ns == first and proc.poll() is None:
        time.sleep(0.05)  # the learner trains: it wrote its first checkpoint
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = finish(proc)
    assert proc.returncode == 143 and "Traceback" not in stderr, stderr[-2000:]
    assert f"checkpoint saved at epoch {ckpt(tmp_path)['counters']['epoch']}; continue with --resume" in stdout


def test_a_learner_killed_under_the_launcher_is_reported(tmp_path):
    script = tmp_path / "fake.py"  # a learner and a collector that run until killed; the learner tells its PID
    script.write_text(
        "import os, sys, time\nif 'learn' in sys.argv: open('pid', 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    cmd = [sys.executable, "-m", "common.launch", str(script), "--run-name", "r"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
        time.sleep(0.05)
    pid = int((tmp_path / "pid").read_text())
    os.kill(pid, signal.SIGKILL)
    _, stderr = finish(proc)
    assert proc.returncode == 137
    assert f"the learner (PID {pid}) was killed by SIGKILL. Its last checkpoint (runs/r/checkpoint.pt" in stderr
    assert "is intact: add --resume to the same command to continue from it" in stderr


def test_two_runs_of_one_name_with_other_buffer_dirs_are_refused(tmp_path):
    """The run folder runs/<name>/ (its checkpoint) is locked like the buffer: a second run of the name is refused
    whatever its --buffer-dir, and writes nothing."""
    with run_held_by_another_process(tmp_path) as pid:
        out = run_script(tmp_path, check=False, **{**RUN, "buffer_dir": "other"})
        assert out.returncode != 0, out.stderr[-2000:]
        assert f"run 'r' is in use by another process (PID {pid} holds runs/r/learner.lock)" in out.stderr
        assert not (tmp_path / "runs/r/checkpoint.pt").exists() and not list(tmp_path.glob("other/r/fifo/*"))


def test_stale_temp_files_of_every_kind_are_removed_at_start(tmp_path, monkeypatch):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead, live = dead.stdout.strip(), os.getpid()
    run, buf = tmp_path / "runs/r", tmp_path / "buffers/r"
    (run / "collectors").mkdir(parents=True)
    buf.mkdir(parents=True)
    stale = [run / f".checkpoint.pt.{dead}.tmp", run / "checkpoint.pt.tmp", run / f".policy_latest.pt.{dead}.tmp"]
    stale += [run / f"collectors/.{dead}.json.{dead}.tmp", buf / f".spec.json.{dead}.tmp"]
    kept = [run / f".checkpoint.pt.{live}.tmp", buf / f".spec.json.{live}.tmp"]
    for p in stale + kept:
        p.write_bytes(b"x")
    claim_run(buf, run / "checkpoint.pt", resume=False)
    assert [p for p in stale if p.exists()] == [] and all(p.exists() for p in kept)
    for p in kept:
        p.unlink()
    import common.checkpoint

    tmps = []  # the checkpoint's temp file carries the writer's PID
    real = common.checkpoint.os.replace
    monkeypatch.setattr(common.checkpoint.os, "replace", lambda src, dst: (tmps.append(Path(src).name), real(src, dst)))
    agent, opt, explore = small_run_state()
    amago_agent.save_checkpoint(run / "checkpoint.pt", agent, opt, explore, {"updates": 1})
    assert tmps == [f".checkpoint.pt.{live}.tmp"]


# ------------------------------------------------------- guards -------------------------------------------------------
def test_a_huge_finite_reward_is_refused_naming_it():
    from common.guards import check_reward_scale

    check_reward_scale("E-v0", 8, np.array([1.0, -1e13]), 10.0)  # 1e14: at the bound
    with pytest.raises(FloatingPointError, match=r"env E-v0, actor 1, env step 8 .*: reward 1e\+30 x --reward-multi"):
        check_reward_scale("E-v0", 8, np.array([1.0, 1e30]), 10.0)
    with pytest.raises(FloatingPointError, match=r"= 1e\+15 exceeds 1e\+14, beyond which the critic"):
        check_reward_scale("E-v0", 8, np.array([-1e14, np.inf]), 10.0)  # inf is check_finite's


def test_an_env_error_names_the_env_the_step_and_the_saved_checkpoint():
    from common.guards import env_errors

    envs = gym.vector.SyncVectorEnv([lambda: FaultyEnv(bad="raise", bad_after=0)])
    envs.reset(seed=0)
    with pytest.raises(
        RuntimeError, match="env E-v0, env step 6 .*: the env raised RuntimeError: the simulator crash"
    ) as e:
        with env_errors("E-v0", 6, "runs/r/checkpoint.pt", saved_epoch=3):
            envs.step(np.array([0]))
    assert "the checkpoint of epoch 3 (runs/r/checkpoint.pt) is intact; --resume continues" in str(e.value)
    assert isinstance(e.value.__cause__, RuntimeError)  # the env's own traceback stays chained

    class Grows(FaultyEnv):  # the observation's shape changes mid-episode
        def obs(self):
            return np.zeros(4 + self.t, np.float32)

    envs = gym.vector.SyncVectorEnv([Grows])
    envs.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"an observation does not fit the env's observation space Box.*shape chan"):
        with env_errors("E-v0", 6, "runs/r/checkpoint.pt", obs_space=envs.single_observation_space):
            envs.step(np.array([0]))
    with pytest.raises(KeyboardInterrupt), env_errors("E-v0", 6, "c.pt"):  # Ctrl-C passes through
        raise KeyboardInterrupt


def test_buffer_folders_list_only_trajectory_files_and_name_the_rest(tmp_path):
    from common.guards import list_trajectory_files

    (tmp_path / "1_a.npz").write_bytes(b"x")
    (tmp_path / "2_dir.npz").mkdir()
    (tmp_path / "3_link.npz").symlink_to(tmp_path / "1_a.npz")
    (tmp_path / "4_notes.txt").write_text("")
    (tmp_path / ".5_b.npz.123.tmp").write_bytes(b"x")  # a writer in progress: silent
    with pytest.warns(UserWarning) as w:
        assert list_trajectory_files(tmp_path) == [str(tmp_path / "1_a.npz")]
    assert sorted(str(m.message).split(": ")[0] for m in w) == [
        f"skipping {tmp_path / n} in the replay buffer" for n in ("2_dir.npz", "3_link.npz", "4_notes.txt")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per name
        assert list_trajectory_files(tmp_path) == [str(tmp_path / "1_a.npz")]
        assert list_trajectory_files(tmp_path / "missing") == []


# ---------------------------------------------- faults of multi-process runs ----------------------------------------------
@pytest.mark.parametrize("skew_s", [3600, -3600], ids=["ahead", "behind"])
def test_a_writer_whose_clock_is_an_hour_off_never_gets_a_fresh_file_evicted(tmp_path, monkeypatch, skew_s):
    """FIFO eviction follows the order in which the learner first lists the files, never the writer's clock in their
    names. Ahead: a collector's files named an hour in the future, then a resumed learner with a true clock. Behind:
    its files written beside the learner's, named an hour in the past. In every epoch the files kept are the newest
    to arrive (a name-sorted FIFO keeps the stale +1h files and deletes each fresh one as it comes)."""
    real = time.time_ns

    def writer(offset_s):
        monkeypatch.setattr(amago_agent.time, "time_ns", lambda: real() + offset_s * 10**9)
        return amago_agent.DiskReplayBuffer(tmp_path, 4, max_seq_len=4, action_dim=3, discrete=True)

    def write(buffer):
        obs = [
            {"obs": {"observation": np.zeros(2, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t} for t in (0, 1)
        ]
        buffer.save({"obs": obs, "actions": [0], "rewards": [0.0], "terminated": [True]})
        return set(os.listdir(buffer.fifo))

    arrived = []  # file names in the order they were written
    if skew_s > 0:  # a skewed collector's files, then the learner (resumed) lists them first
        for _ in range(4):
            arrived += sorted(write(writer(skew_s)) - set(arrived))
    learner = writer(0)
    learner.delete_oldest()
    for epoch in range(6):
        for offset in (0, skew_s) if skew_s < 0 else (0,):  # behind: the skewed writer works beside the learner
            monkeypatch.setattr(amago_agent.time, "time_ns", lambda o=offset: real() + o * 10**9)
            arrived += sorted(write(learner) - set(arrived))
        learner.delete_oldest()
        kept = sorted(os.listdir(learner.fifo))
        assert kept == sorted(arrived[-4:]), f"epoch {epoch}: kept {kept}, the newest {arrived[-4:]}"


def test_a_missing_flags_file_is_refused_on_resume_when_the_buffer_holds_data(tmp_path, finished_run):
    """A run folder deleted by hand (its flags.json and checkpoint with it) while the buffer keeps the run's files:
    --resume names what is missing and how to go on, in one line, instead of rebuilding the default model."""
    saved = copy_run(finished_run, tmp_path)
    shutil.rmtree(tmp_path / "runs/r")
    out = run_script(tmp_path, check=False, **{**RUN, "resume": True})
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
    assert "runs/r/flags.json is missing" in lines[0] and "buffers/r holds" in lines[0] and "--dset-name r" in lines[0]
    saved = {p: b for p, b in saved.items() if p.exists()}
    assert unchanged(saved) and not (tmp_path / "runs/r/checkpoint.pt").exists()


def test_a_run_folder_deleted_mid_run_ends_with_one_line_and_a_checkpoint_to_resume(tmp_path):
    """rm -rf runs/r while the run goes on: no traceback (tensorboard's writer loses its folder too); the run writes
    its flags and a checkpoint there again and stops with one line; --resume then rebuilds the run's own model."""
    args = {**RUN, "total_timesteps": 100_000, "timesteps_per_epoch": 20, "batches_per_epoch": 20, "eval_interval": 0}
    small = {"d_model": 8, "n_heads": 2}  # not the default sizes: a resume from the defaults would build another model
    proc = start_script(tmp_path, **{**args, **small, "checkpoint_interval": 0})  # only the check writes one
    while not (tmp_path / "runs/r/flags.json").exists() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)  # mid-run
    while (tmp_path / "runs/r/flags.json").exists():  # rm -rf, again if the run wrote a file into it meanwhile
        shutil.rmtree(tmp_path / "runs/r", ignore_errors=True)
    stdout, stderr = finish(proc)
    lines = [ln for ln in stderr.replace("\r", "\n").splitlines() if ln.strip() and " env steps [" not in ln]
    assert proc.returncode == 2 and "Traceback" not in stderr and len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: the run folder runs/r was deleted") and "--resume --run-name r" in lines[0]
    epoch = ckpt(tmp_path)["counters"]["epoch"]
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    again = ["--run-name", "r", "--resume", "--total-timesteps", str((epoch + 1) * 40)]  # every other flag: the run's
    out = subprocess.run([sys.executable, str(SCRIPT), *again], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0 and f"resumed r at epoch {epoch}" in out.stdout, out.stderr[-2000:]
    built = [
        re.search(r"r: discrete actions, transformer memory, ([\d,]+) parameters", o)[1] for o in (stdout, out.stdout)
    ]
    assert built[0] == built[1] != "264,286"  # the run's model, not the default one


@pytest.mark.parametrize("where", ["buffers/r/fifo", "runs/r"])
def test_a_folder_that_turns_read_only_is_one_line_and_the_learner_is_not_left_running(tmp_path, where):
    """chattr +i on the buffer's fifo/ or on the run folder mid-run (skipped where chattr is not allowed): the run
    stops with one `error:` line naming the file, what is intact and the resume command; learner.json is not left
    "running", and after chattr -i the run resumes."""
    args = {**RUN, "total_timesteps": 100_000, "timesteps_per_epoch": 20, "batches_per_epoch": 20, "eval_interval": 0}
    proc = start_script(tmp_path, **args)
    while not (tmp_path / "runs/r/checkpoint.pt").exists() and proc.poll() is None:
        time.sleep(0.05)
    locked = tmp_path / where
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.skip("chattr +i is not allowed here")
    try:
        _, stderr = finish(proc)
        status = json.loads((tmp_path / "runs/r/learner.json").read_text())
    finally:
        subprocess.run(["chattr", "-i", str(locked)])
    lines = [ln for ln in stderr.replace("\r", "\n").splitlines() if ln.strip() and " env steps [" not in ln]
    assert proc.returncode == 1 and "Traceback" not in stderr and len(lines) == 1, stderr[-3000:]
    assert re.match(rf"error: cannot write {where}/\S+: (permission denied|read-only file system)\. Nothing", lines[0])
    assert f"make {where} writable again, then --resume --run-name r continues" in lines[0]
    assert status["state"] == "done"
    out = run_script(
        tmp_path, **{**args, "resume": True, "total_timesteps": (ckpt(tmp_path)["counters"]["epoch"] + 1) * 40}
    )
    assert "resumed r at epoch" in out.stdout


def test_an_unwritable_file_names_what_is_intact_and_how_to_continue(tmp_path, monkeypatch):
    """EACCES, EPERM and EROFS, like ENOSPC: a StorageError naming the file, the cause and the remedy."""
    import errno

    from common.guards import StorageError

    buffer = amago_agent.DiskReplayBuffer(tmp_path / "b", 10, max_seq_len=4, action_dim=3, discrete=True)
    obs = [{"obs": {"observation": np.zeros(2, np.float32)}, "rl2": np.zeros(4, np.float32), "time": t} for t in (0, 1)]
    traj = {"obs": obs, "actions": [0], "rewards": [0.0], "terminated": [True]}
    for code, cause in (
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.EROFS, "read-only file system"),
    ):

        def refuse(f, code=code, **arrays):
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(amago_agent.np, "savez", refuse)
        with pytest.raises(
            StorageError,
            match=rf"cannot write {buffer.fifo}/\S+\.npz: {cause}\. Nothing.*make {buffer.fifo} writable again",
        ):
            buffer.save(traj)
    assert os.listdir(buffer.fifo) == []  # no temp file left


def test_the_launchers_resume_gives_collectors_the_runs_flags(tmp_path):
    """A run of non-default sizes, continued with `python -m common.launch ... --resume` and no size flags: its
    collector takes the run's flags (runs/r/flags.json), so it acts with the learner's weights instead of dying."""
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    launch = [sys.executable, "-m", "common.launch", "--collectors", "1", "--steps-per-update", "0", str(SCRIPT)]
    first = {**TINY_RUN, **RUN, "d_model": 8, "n_heads": 2, "total_timesteps": 80, "eval_interval": 0}
    out = subprocess.run([*launch, *flags(**first)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (tmp_path / "runs/r/collector0.log").unlink()
    again = ["--run-name", "r", "--resume", "--total-timesteps", "400", "--batches-per-epoch", "50"]  # seconds long
    out = subprocess.run([*launch, *again], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    log = (tmp_path / "runs/r/collector0.log").read_text()
    assert out.returncode == 0 and "do not fit" not in log and "error:" not in log, out.stderr[-2000:] + log
    assert "acting with the policy of update" in log and "collector 0 ended (exit code 0)" in out.stdout


@pytest.mark.parametrize(
    "own, said",
    [("--d-model 32", "do not fit this agent"), ("--eps-floor 2", "--eps-floor must lie in [0, 1]")],
    ids=["weights-that-do-not-fit", "refused-flag"],
)
def test_a_collector_that_dies_early_stops_the_run_with_one_line(tmp_path, own, said):
    """A collector that exits while its learner runs stops the run at once with one line naming it, its exit code and
    its log's `error:` line. Model flags of its own fail on the learner's weights, which it reads only once the learner
    runs: the learner then saves its checkpoint and ends "done". A refused flag can end the collector before the
    learner has started: the run stops all the same, and the learner is never left "running"."""
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "common.launch", "--collectors", "1", "--collector-flags", own]
    cmd += [str(SCRIPT), *flags(**{**TINY_RUN, **RUN, "total_timesteps": 100_000})]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = finish(proc)
    launch = [ln for ln in stderr.splitlines() if ln.startswith("launch:")]
    assert proc.returncode == 1 and len(launch) == 1, stderr[-2000:]
    assert "collector 0" in launch[0] and "exit code 2" in launch[0] and said in launch[0]
    status = tmp_path / "runs/r/learner.json"
    if own.startswith("--d-model"):
        assert json.loads(status.read_text())["state"] == "done" and (tmp_path / "runs/r/checkpoint.pt").exists()
    else:
        assert not status.exists() or json.loads(status.read_text())["state"] == "done"


def test_a_second_launcher_on_a_live_run_is_refused_before_it_starts_anything(tmp_path):
    """One line naming the holder, no `add --resume` advice, and no collector appending to the live run's log."""
    with run_held_by_another_process(tmp_path) as pid:
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "common.launch", str(SCRIPT), *flags(**{**TINY_RUN, **RUN})]
        out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
    assert f"run 'r' is in use by another learner (PID {pid}" in lines[0] and "--resume" not in lines[0]
    assert not (tmp_path / "runs/r/collector0.log").exists() and out.stdout == ""


def test_a_learner_says_when_its_collectors_files_stop_and_come_again(monkeypatch, capsys):
    """--mode learn: one line after STALE_S seconds without a new trajectory file, one when they come again; a
    learner that collects itself says nothing."""
    from types import SimpleNamespace

    import common.scale as scale

    buffer = SimpleNamespace(fifo=Path("buffers/r/fifo"), last_arrival=time.monotonic())
    learn, both = SimpleNamespace(mode="learn"), SimpleNamespace(mode="both")
    scale.notice_stale_data(learn, buffer)
    assert capsys.readouterr().out == ""
    buffer.last_arrival -= scale.STALE_S + 1
    scale.notice_stale_data(both, buffer)
    assert capsys.readouterr().out == ""
    for _ in range(3):
        scale.notice_stale_data(learn, buffer)
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 1 and said[0].startswith("learner: no new trajectory files in buffers/r/fifo for 61 s")
    buffer.last_arrival = time.monotonic()
    scale.notice_stale_data(learn, buffer)
    assert capsys.readouterr().out == "learner: new trajectory files again\n"


def test_a_paused_collector_resumes_at_the_caps_rate_not_in_a_burst(tmp_path):
    """--max-steps-per-update 16, 200 updates an epoch: a collector paused while its learner made 2,000 updates may
    run ahead of the cap by one learner epoch's allowance (3,200 env steps), not collect the whole backlog (32,000)."""
    from types import SimpleNamespace

    sys.path.insert(0, str(Path(__file__).parent))
    from test_scale import StopAfter, learner_json

    from common.scale import wait_for_learner

    run = tmp_path / "run"
    args = SimpleNamespace(max_steps_per_update=16.0, batches_per_epoch=200, timesteps_per_epoch=100, num_envs=8)
    files = SimpleNamespace(files=lambda: ["a.npz"])
    learner_json(run, os.getpid(), "running", 200)
    step = 0
    while wait_for_learner(run, args, files, StopAfter(1), 1, step, poll_s=0.01):
        step += 800  # one epoch of 8 actors x 100 steps
    assert step == 3200  # the cap: 16 x 200 updates
    learner_json(run, os.getpid(), "running", 2200)  # the collector was paused (SIGSTOP) meanwhile
    resumed = step
    while wait_for_learner(run, args, files, StopAfter(1), 1, step, poll_s=0.01):
        step += 800
    assert step - resumed == 3200  # one epoch's allowance, then the cap's rate: it waits for updates
    learner_json(run, os.getpid(), "running", 2300)
    before = step
    while wait_for_learner(run, args, files, StopAfter(1), 1, step, poll_s=0.01):
        step += 800
    assert step - before == 1600  # 100 more updates: 1,600 more env steps
