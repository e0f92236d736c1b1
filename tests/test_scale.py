"""Scaling out: a learner and collector processes on one buffer (common/launch.py), two learner processes (DDP over
gloo, on the CPU), offline runs from a buffer's files, --eval-only's trajectory files, several envs in one run, and
gradient accumulation (--batches-per-update)."""

import copy
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch
from conftest import ROOT, SCRIPT, TINY_RUN, flags, make_agent, random_batch, run_script

import amago_agent as amago
from common.guards import read_trajectory
from common.logs import read_scalars

CARTPOLE = dict(env_id="CartPole-v1", timesteps_per_epoch=30, batches_per_epoch=4, num_workers=0, eval_interval=0)
DISTRIBUTED = (sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")


def env():
    return {"PYTHONPATH": str(ROOT), "PATH": os.path.dirname(sys.executable), "OMP_NUM_THREADS": "1"}


def script_cmd(**args):
    return [sys.executable, str(SCRIPT), *flags(**{**TINY_RUN, **CARTPOLE, **args})]


def counters(tmp_path, run="r"):
    return torch.load(tmp_path / "runs" / run / "checkpoint.pt", weights_only=False)["counters"]


def npz(folder):
    return sorted(folder.glob("*.npz"))


def launch(tmp_path, launcher_flags, run):
    cmd = [sys.executable, "-m", "common.launch", *launcher_flags, str(SCRIPT)]
    cmd += flags(**{**TINY_RUN, **CARTPOLE, "run_name": "r", **run})
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env())
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out


def learner_json(run_dir, pid, state="running", updates=0):
    run_dir.mkdir(parents=True, exist_ok=True)
    status = {"pid": pid, "host": socket.gethostname(), "updates": updates, "state": state}
    (run_dir / "learner.json").write_text(json.dumps(status))


def wait_for_text(path, text, proc, timeout=120):
    deadline = time.time() + timeout  # a safety limit only
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in {path}: {path.read_text()[-2000:] if path.exists() else ''}")


# ------------------------------------------------ gradient accumulation ------------------------------------------------
def test_gradient_accumulation_equals_one_big_batch():
    """k batches of B windows per update (--batches-per-update k) step as one batch of k*B windows. The loss is a masked
    mean over valid timesteps, so the two agree when every window holds as many valid steps: no padded rows here.
    Running statistics (InputNorm, PopArt) move once per forward pass, as in the reference, so they are frozen here;
    one critic makes REDQ's subset draw deterministic, and dropout is off. SGD without clipping: a step proportional
    to the gradient, so a wrong scale (a sum of the k gradients) fails too."""
    from accelerate import Accelerator

    agent, args = make_agent(
        "discrete", popart=False, num_critics=1, num_critics_td=1, dropout=0.0, warmup_steps=1, grad_clip=1e9
    )
    agent.tstep.norm.update = lambda x, mask: None
    k, acc = 3, Accelerator(cpu=True)
    batches = [random_batch(agent, B=4, L=7, seed=s) for s in range(k)]
    for b in batches:
        b["mask"][:] = True
    big = {key: torch.cat([b[key] for b in batches]) for key in batches[0] if key != "obs"}
    big["obs"] = {"observation": torch.cat([b["obs"]["observation"] for b in batches])}

    def step(batch_list):
        a = copy.deepcopy(agent)
        a.tstep.norm.update = lambda x, mask: None
        opt = torch.optim.SGD(a.trainable_parameters(), lr=0.1)  # unlike Adam's, its step scales with the gradient
        metrics = amago.train_step(a, opt, acc, batch_list, args, updates=10)
        return torch.cat([p.detach().flatten() for p in a.parameters()]), metrics["losses/grad_norm"]

    accumulated, norm_k = step(batches)
    one_big, norm_big = step([big])
    first_only, _ = step(batches[:1])
    before = torch.cat([p.detach().flatten() for p in agent.parameters()])
    torch.testing.assert_close(accumulated, one_big, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(norm_k, norm_big, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(accumulated, before) and not torch.allclose(accumulated, first_only, atol=1e-6)


# --------------------------------------------- learner + collectors ---------------------------------------------
def test_learner_and_two_collectors_share_one_buffer(tmp_path):
    """`python -m common.launch`: 2 collectors fill the buffer with the learner's latest weights (their version rises);
    the learner trains on their files and is the only process that deletes (--buffer-max-size 6)."""
    run = dict(total_timesteps=10 * 30 * 2, batches_per_epoch=20, buffer_max_size=6, checkpoint_interval=1)
    launch(tmp_path, ["--collectors", "2", "--steps-per-update", "0"], run)  # uncapped: collectors never wait
    c = counters(tmp_path)
    assert c["epoch"] == 10 and c["updates"] == 200  # every epoch trained: the learner waited for the first file
    assert c["global_step"] > 0 and c["frames"] == {}  # env steps: the collectors' (the learner collects none)
    latest = torch.load(tmp_path / "runs/r/policy_latest.pt", weights_only=False)
    assert latest["updates"] == 200
    versions = []  # the update counts each collector acted with, in order
    for i in range(2):
        log = (tmp_path / f"runs/r/collector{i}.log").read_text()
        versions.append([int(line.rsplit(" ", 1)[1]) for line in log.splitlines() if "acting with the policy" in line])
        assert versions[i] and versions[i] == sorted(set(versions[i])) and versions[i][-1] > 0, log[-2000:]
    assert max(len(v) for v in versions) >= 2  # a collector picked up new weights while it ran
    learner = read_scalars(tmp_path / "runs/r")
    assert max(v for _, _, v in learner["buffer/fifo_files"]) == 6  # trimmed to 6 by the learner
    for seed in (1001, 2001):  # collectors log the update count they act with, and no buffer size (they never trim)
        scalars = read_scalars(tmp_path / f"runs/r/collector_seed{seed}")
        assert scalars["charts/policy_updates"][-1][2] > 0 and "buffer/fifo_files" not in scalars


def test_killed_collector_and_killed_learner_lose_at_most_an_epoch(tmp_path):
    """A collector never deletes and loses only unfinished trajectories to kill -9 (files are written whole); a learner
    killed with kill -9 and restarted with --resume goes on from its last epoch's checkpoint."""
    learner_json(tmp_path / "runs/r", os.getpid())  # this test stands for a live learner: the collector collects
    collector = subprocess.Popen(
        script_cmd(mode="collect", total_timesteps=10**8, buffer_max_size=2, run_name="r"),
        cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    fifo = tmp_path / "buffers/r/fifo"
    deadline = time.time() + 60
    while len(npz(fifo)) < 8 and time.time() < deadline and collector.poll() is None:
        time.sleep(0.1)
    collector.kill()
    collector.wait()
    files = npz(fifo)
    assert len(files) >= 8, collector.stderr.read()[-2000:]  # > --buffer-max-size: a collector deletes nothing
    assert all(len(read_trajectory(f, action_dim=2)["actions"]) >= 1 for f in files)  # every file whole

    bpe = 5
    learn = dict(mode="learn", batches_per_epoch=bpe, checkpoint_interval=1, buffer_max_size=2, run_name="r")
    learner = subprocess.Popen(
        script_cmd(**learn, total_timesteps=10**6), cwd=tmp_path, env=env(),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    ckpt = tmp_path / "runs/r/checkpoint.pt"
    while not ckpt.exists() and time.time() < deadline + 60 and learner.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    learner.send_signal(signal.SIGKILL)
    learner.wait()
    assert not list(fifo.glob("*.tmp"))  # the learner removed the killed collector's partial file
    assert len(npz(fifo)) == 2  # and trimmed the buffer to its size
    saved = counters(tmp_path)
    latest = torch.load(tmp_path / "runs/r/policy_latest.pt", weights_only=False)["updates"]
    assert saved["epoch"] >= 1 and latest - saved["updates"] <= bpe  # at most the epoch in progress is lost
    steps = (saved["epoch"] + 2) * 30 * 2
    out = run_script(tmp_path, **{**CARTPOLE, **learn, "resume": True, "total_timesteps": steps})
    assert f"resumed r at epoch {saved['epoch']}" in out.stdout
    assert counters(tmp_path)["updates"] == saved["updates"] + 2 * bpe


# ------------------------------------------------- two learner processes -------------------------------------------------
DDP_WORKER = """
import sys, torch
sys.path[:0] = [{root!r}, {tests!r}]
from accelerate import Accelerator
from conftest import make_agent, random_batch
import amago_agent as amago
acc = Accelerator(cpu=True)
agent, args = make_agent("discrete", warmup_steps=1)
opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-2)
agent, opt = acc.prepare(agent, opt)
r = acc.process_index
for u in range(3):  # each rank its own batches; 2 batches per update (no_sync on the first backward)
    batches = [random_batch(acc.unwrap_model(agent), seed=100 * r + 10 * u + j) for j in range(2)]
    amago.train_step(agent, opt, acc, batches, args, u + 1)
torch.save([p.detach() for p in acc.unwrap_model(agent).trainable_parameters()], f"rank{{r}}.pt")
if r == 0:  # one line, not two ranks' output interleaved
    print("world", acc.num_processes, acc.distributed_type)
"""


def test_two_learner_processes_stay_bit_equal_on_different_batches(tmp_path):
    """2 processes (torch.distributed.run, gloo): DDP keeps the trainable weights bit-equal after updates on
    different batches, with gradient accumulation; the script under the same launcher samples different windows on
    each rank (each rank's DataLoader worker is seeded from that rank's seed) and logs the evaluation gathered over
    both."""
    (tmp_path / "worker.py").write_text(DDP_WORKER.format(root=str(ROOT), tests=str(ROOT / "tests")))
    out = subprocess.run(
        [*DISTRIBUTED, "worker.py"], cwd=tmp_path, capture_output=True, text=True, env=env(), timeout=120
    )
    assert out.returncode == 0 and "world 2 DistributedType.MULTI_CPU" in out.stdout, out.stderr[-3000:]
    w0, w1 = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    init = make_agent("discrete", warmup_steps=1)[0].trainable_parameters()
    assert all(torch.equal(a, b) for a, b in zip(w0, w1))
    assert not all(torch.equal(a, b) for a, b in zip(w0, init))

    ddp = dict(total_timesteps=120, batches_per_update=2, eval_interval=2, eval_episodes=4, dropout=0.0, run_name="r")
    run_script(tmp_path, launcher=DISTRIBUTED, **{**CARTPOLE, **ddp, "num_workers": 1})  # a DataLoader worker per rank
    rank0, rank1 = read_scalars(tmp_path / "runs/r"), read_scalars(tmp_path / "runs/r/process1")
    # with equal weights and no dropout, the mean Q of a batch depends on its windows only (not on REDQ's draws)
    assert [v for _, _, v in rank0["losses/q_mean"]] != [v for _, _, v in rank1["losses/q_mean"]]
    assert [v for _, _, v in rank0["eval/return"]] == [v for _, _, v in rank1["eval/return"]]
    assert counters(tmp_path)["updates"] > 0


# ------------------------------------------------ offline and --eval-only ------------------------------------------------
def test_eval_only_files_train_a_fully_offline_run(tmp_path):
    """--eval-only evaluates a checkpoint (JSON metrics, nothing saved) and writes its episodes as trajectory files
    into another run's protected/; that run trains fully offline on them (--start-collecting-at-epoch: never), and a
    third trains on the first run's buffer through --dset-name."""
    run_script(tmp_path, **CARTPOLE, total_timesteps=120, run_name="a")
    ckpt = tmp_path / "runs/a/checkpoint.pt"
    stamps = [f.stat().st_mtime_ns for f in (ckpt, tmp_path / "runs/a/policy_latest.pt")]
    out = run_script(
        tmp_path, **CARTPOLE, eval_only=True, run_name="a", eval_episodes=4, save_trajs_to="buffers/b/protected"
    )
    metrics = json.loads(out.stdout.strip().splitlines()[-1])
    assert metrics["eval/return"] == metrics["eval/CartPole-v1/return"] > 0
    assert [f.stat().st_mtime_ns for f in (ckpt, tmp_path / "runs/a/policy_latest.pt")] == stamps  # nothing saved
    run_script(tmp_path, **CARTPOLE, eval_only=True, run_name="e", load_from=str(ckpt), eval_episodes=2)
    assert not (tmp_path / "buffers/e").exists()  # evaluating leaves no empty buffer folder behind
    files = npz(tmp_path / "buffers/b/protected")
    data = [read_trajectory(f, action_dim=2) for f in files]
    assert len(files) >= 4 and sum(len(d["actions"]) for d in data) >= 4 * 8  # CartPole episodes last >= 8 steps

    offline = dict(**CARTPOLE, total_timesteps=120, start_collecting_at_epoch=10**6)
    run_script(tmp_path, **offline, run_name="b")
    c = counters(tmp_path, "b")
    assert c["epoch"] == 2 and c["global_step"] == 0 and c["updates"] == 2 * 4
    assert not npz(tmp_path / "buffers/b/fifo") and len(npz(tmp_path / "buffers/b/protected")) == len(files)

    run_script(tmp_path, **offline, run_name="c", dset_name="a")
    assert counters(tmp_path, "c")["updates"] == 2 * 4 and not (tmp_path / "buffers/c").exists()

    # weights of another size (a collector or --eval-only given other model flags): the flags are named
    out = run_script(tmp_path, check=False, **CARTPOLE, eval_only=True, run_name="a", d_model=24)
    assert out.returncode != 0 and "do not fit this agent" in out.stderr and "--d-model" in out.stderr


# ------------------------------------------------------- several envs -------------------------------------------------------
def test_multi_env_run_logs_per_env_and_evaluates_its_own_set(tmp_path):
    """--env-id a,b: actors take the ids round-robin (steps counted per env); --eval-env-id: a separate eval set;
    --start-learning-at-epoch 1: no updates in epoch 0."""
    envs = dict(env_id="CartPole-v1,CartPole-v0", eval_env_id="CartPole-v0", eval_interval=2, run_name="r")
    run_script(tmp_path, **{**CARTPOLE, **envs, "total_timesteps": 120, "start_learning_at_epoch": 1})
    c = counters(tmp_path)
    assert c["frames"] == {"CartPole-v1": 60, "CartPole-v0": 60} and c["updates"] == 4
    scalars = read_scalars(tmp_path / "runs/r")
    assert "eval/CartPole-v0/return" in scalars and "eval/CartPole-v1/return" not in scalars
    out = run_script(tmp_path, check=False, env_id="CartPole-v1,Acrobot-v1", run_name="bad")
    assert out.returncode != 0 and "envs CartPole-v1 and Acrobot-v1 differ in their spaces" in out.stderr


def test_bad_scale_flags_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="--batches-per-update must be >= 1, got 0"):
        amago.check_args(amago.Args(batches_per_update=0))
    with pytest.raises(ValueError, match="--max-steps-per-update must be > 0"):
        amago.check_args(amago.Args(max_steps_per_update=0))
    with pytest.raises(ValueError, match="--load-from and --save-trajs-to go with --eval-only"):
        amago.check_args(amago.Args(save_trajs_to="x"))
    with pytest.raises(ValueError, match="--eval-only evaluates in one process"):
        amago.check_args(amago.Args(eval_only=True, mode="learn"))
    offline = dict(env_id="CartPole-v1", total_timesteps=64, timesteps_per_epoch=16, start_collecting_at_epoch=99)
    out = run_script(tmp_path, check=False, **offline, run_name="empty")
    assert out.returncode != 0 and "--start-collecting-at-epoch 99 >= the run's 2 epochs" in out.stderr


@pytest.mark.parametrize("flag", ["--mode", "--eval-only"])
def test_launcher_sets_the_roles(flag):
    from common.launch import commands, flag_value

    with pytest.raises(ValueError, match=flag):
        commands("amago_agent.py", [flag, "learn"] if flag == "--mode" else [flag], 1, None)
    shared = ["--seed", "3", "--resume", "--run-name", "r", "--total-timesteps", "500"]
    name, collect, learner = commands("s.py", shared, 2, "torchrun --nproc_per_node 2", "--no-cuda", 16.0)
    assert name == "r" and [c[-1] for c in collect] == ["1003", "2003"] and all("--resume" in c for c in collect)
    assert learner[:3] == ["torchrun", "--nproc_per_node", "2"] and "--resume" in learner
    assert learner[-2:] == ["--mode", "learn"] and flag_value(learner, "--total-timesteps") == "500"
    for c in collect:  # the learner's end ends a collector, not its --total-timesteps; the cap and their own flags
        assert int(flag_value(c, "--total-timesteps")) > 10**12 and c.count("--total-timesteps") == 1
        assert flag_value(c, "--max-steps-per-update") == "16" and "--no-cuda" in c
    assert "--max-steps-per-update" not in commands("s.py", shared, 1, None, "", 0)[1][0]  # 0: no cap


class StopAfter:
    """A stop signal that comes after n checks."""

    def __init__(self, n):
        self.n = n

    def __bool__(self):
        self.n -= 1
        return self.n < 0


def test_a_collector_follows_its_learner_and_the_ratio_cap(tmp_path, capsys):
    """wait_for_learner: before its first epoch a collector waits for a live learner (none, or a learner.json left
    "done"); later, a learner that is done or whose pid is dead has ended; with --max-steps-per-update c it collects
    an epoch only while the run's steps (other collectors' reports + its own) stay within c * max(updates,
    batches_per_epoch), and always while the buffer holds no file."""
    from types import SimpleNamespace

    from common.scale import report, wait_for_learner

    run = tmp_path / "run"
    args = SimpleNamespace(max_steps_per_update=2.0, batches_per_epoch=5, timesteps_per_epoch=5, num_envs=2)
    files = SimpleNamespace(files=lambda: ["a.npz"])

    def check(epoch, step, buffer=files, n=1):
        return wait_for_learner(run, args, buffer, StopAfter(n), epoch, step, poll_s=0.01)

    assert not check(0, 0) and "waiting for the learner" in capsys.readouterr().out  # no learner.json: waits
    learner_json(run, os.getpid(), "done", 7)  # an earlier run's learner
    assert not check(0, 0) and "to start" in capsys.readouterr().out
    learner_json(run, os.getpid(), "running", 0)
    assert check(0, 0)  # 0 + 10 steps <= 2 * max(0, 5)
    assert not check(1, 10, n=2) and "10 env steps for 0 updates" in capsys.readouterr().out  # 20 > 10: waits
    assert check(1, 10, buffer=SimpleNamespace(files=list))  # a buffer without a file: the learner waits for one
    learner_json(run, os.getpid(), "running", 10)
    assert check(1, 10)  # 20 <= 2 * 10
    (run / "collectors").mkdir(parents=True, exist_ok=True)
    (run / "collectors/1.json").write_text(json.dumps({"global_step": 5, "updates": 0}))  # another collector's
    assert not check(1, 10) and "15 env steps for 10 updates" in capsys.readouterr().out
    learner_json(run, os.getpid(), "done", 10)
    assert not check(2, 30) and "the learner ended; stopping" in capsys.readouterr().out
    report(run, 40)  # its final steps are reported when it ends
    assert json.loads((run / f"collectors/{os.getpid()}.json").read_text())["global_step"] == 40
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    learner_json(run, int(dead.stdout), "running", 10)  # a learner killed with kill -9
    assert not check(2, 30) and "the learner ended" in capsys.readouterr().out
    args.max_steps_per_update = None  # no cap
    learner_json(run, os.getpid(), "running", 0)
    assert check(5, 10**6)


def test_a_collector_without_a_learner_waits_and_ends_on_sigterm(tmp_path):
    """A collector started before its learner, here with a learner.json of an earlier run that is done, collects
    nothing and ends on SIGTERM."""
    learner_json(tmp_path / "runs/r", os.getpid(), "done", 50)
    log = tmp_path / "collector.log"
    with open(log, "w") as f:
        cmd = script_cmd(mode="collect", total_timesteps=10**8, run_name="r")
        collector = subprocess.Popen(cmd, cwd=tmp_path, env=env(), stdout=f, stderr=subprocess.STDOUT)
    try:
        wait_for_text(log, "waiting for the learner", collector)
        time.sleep(3)  # past a poll or two of learner.json
        assert collector.poll() is None and not npz(tmp_path / "buffers/r/fifo")
        collector.send_signal(signal.SIGTERM)
        assert collector.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if collector.poll() is None:
            collector.kill()


def test_collectors_stop_when_the_learner_stops(tmp_path):
    """A collector given a --total-timesteps it never reaches ends, exit code 0, once its learner has ended; the
    learner's learner.json says "done" with its update count."""
    run = dict(total_timesteps=4 * 30 * 2, batches_per_epoch=4)
    out = launch(tmp_path, ["--collectors", "1", "--collector-flags", "--total-timesteps 1000000000"], run)
    assert "collector 0 ended (exit code 0)" in out.stdout, out.stdout[-2000:]
    assert "collector: the learner ended; stopping" in (tmp_path / "runs/r/collector0.log").read_text()
    status = json.loads((tmp_path / "runs/r/learner.json").read_text())
    assert status["state"] == "done" and status["updates"] == 4 * 4


def test_the_ratio_cap_holds(tmp_path):
    """--steps-per-update 1 on a learner + collector run: the run's env steps stay within 1 per learner update (the
    allowance of one learner epoch, 20 updates, is below the 400 here). Whether the collector had to wait depends on
    the two processes' speeds: test_a_collector_waits_for_updates_beyond_the_cap makes it wait."""
    cap, run = 1, dict(total_timesteps=20 * 30 * 2, batches_per_epoch=20)
    out = launch(tmp_path, ["--collectors", "1", "--steps-per-update", str(cap)], run)
    assert "collector 0 ended (exit code 0)" in out.stdout, out.stdout[-2000:]
    assert "the learner ended; stopping" in (tmp_path / "runs/r/collector0.log").read_text()
    from common.scale import collector_steps

    updates = json.loads((tmp_path / "runs/r/learner.json").read_text())["updates"]
    steps = collector_steps(tmp_path / "runs/r")
    assert updates == 20 * 20 and 0 < steps <= cap * updates <= 1.1 * cap * updates


def test_a_collector_waits_for_updates_beyond_the_cap(tmp_path):
    """A collector process with --max-steps-per-update 1, its learner played by this test through learner.json:
    it collects one epoch (60 steps: the allowance of one learner epoch, --batches-per-epoch 60), waits at 60 steps
    for 0 updates, collects one more when the learner reports 120 updates, waits, and ends when the learner is done."""
    from common.scale import collector_steps

    run_dir, log = tmp_path / "runs/r", tmp_path / "collector.log"
    learner_json(run_dir, os.getpid(), "running", 0)
    with open(log, "w") as f:
        cmd = script_cmd(mode="collect", total_timesteps=10**8, run_name="r", max_steps_per_update=1)
        cmd += ["--batches-per-epoch", "60"]
        collector = subprocess.Popen(cmd, cwd=tmp_path, env=env(), stdout=f, stderr=subprocess.STDOUT)
    try:
        wait_for_text(log, "waiting for the learner's updates (60 env steps for 0 updates", collector)
        learner_json(run_dir, os.getpid(), "running", 120)
        wait_for_text(log, "waiting for the learner's updates (120 env steps for 120 updates", collector)
        learner_json(run_dir, os.getpid(), "done", 120)
        assert collector.wait(timeout=60) == 0, log.read_text()[-2000:]
    finally:
        if collector.poll() is None:
            collector.kill()
    assert "the learner ended; stopping" in log.read_text() and collector_steps(run_dir) == 120


def test_a_learner_counts_its_collectors_steps_and_writes_the_latest_weights(tmp_path):
    """--mode learn logs at its collectors' env steps (every rank reads their reports, so all log alike); the owner
    writes policy_latest.pt with the update count."""
    from common.scale import collector_steps, save_latest

    agent, _ = make_agent("discrete")
    reports = tmp_path / "run" / "collectors"
    assert collector_steps(tmp_path / "run") == 0  # no collector has reported yet
    reports.mkdir(parents=True)
    for pid, steps in ((11, 300), (12, 500)):
        (reports / f"{pid}.json").write_text(json.dumps({"global_step": steps, "updates": 0}))
    assert collector_steps(tmp_path / "run") == 800
    latest = tmp_path / "run" / "policy_latest.pt"
    save_latest(latest, agent, 7)
    assert torch.load(latest)["updates"] == 7
