"""Interleaved speed comparison of amago_agent.py and reference AMAGO 3.3 on this machine, at equal sizes.

Set up the reference once, in its own venv (AMAGO 3.3 wants gymnasium <= 0.29.1; ours runs on 1.x):

    python -m venv ~/amago-ref && . ~/amago-ref/bin/activate
    pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu   # first: the CPU build (PyPI's is CUDA, GBs)
    pip install gymnasium==0.29.1 box2d pygame     # the box2d wheel (gymnasium[box2d] builds box2d-py with swig)
    git clone https://github.com/UT-Austin-RPL/amago && git -C amago checkout 2d85600 && pip install -e amago

Then, from this project's venv:

    OMP_NUM_THREADS=1 python benchmarks/compare_reference.py --ref-python ~/amago-ref/bin/python \\
        --bench collect update_small update_paper --pairs 3 --seconds 60

Each pair runs the reference, then ours, back to back in fresh processes (one thread each; `--threads 2` gives each
worker both cores, as a run alone gets them by default), so slow drifts of a shared machine hit both sides of a ratio
alike; the table gives the median ratio and its range over pairs. Sizes match exactly in trainable parameters
(printed by both sides). The reference runs with `TORCH_COMPILE_DISABLE=1` (torch.compile fails on CPU) and
`VanillaAttention` (its FlashAttention default needs CUDA), bound through gin.
What is timed:
- collect: env steps/s of the rollout loop with 8 sync LunarLander actors (policy inference, exploration and
  trajectory files included). Reference: `Experiment.collect_new_training_data()`; ours: the script's own main loop
  (collection only), read back from its `charts/collect_SPS` log.
- update_*: updates/s of one optimizer step (forward, backward, clip, step, target EMA) on a full-length synthetic
  batch (B sequences of L+1 timesteps). Reference: `Experiment.train_step`; ours: `train_step`. update_small is
  the CPU size (274,084 trainable parameters, 24 x 32), update_paper the reference's own size (3,536,560, 24 x 128).
- ctx_L32 ... ctx_L1024: context scaling, the small transformer with 3,072 tokens per batch at every length
  (96 x 32, 24 x 128, 12 x 256, 6 x 512, 3 x 1,024): updates/s and peak RSS as the window grows.
- update_box, update_multitask, update_multitask_box: the CPU size's update on Pendulum's Box action (AMAGO's
  action-conditioned critic) and AMAGO-2's (ours: amago_multitask.py; the reference: amago.agent.MultiTaskAgent, its
  two-hot critic over 128 bins and V(s) from 3 sampled actions) on LunarLander's Discrete(4) and on Pendulum.
- `--mixed-precision bf16`: both sides' updates under accelerate's bf16 autocast (a CPU with native bf16, or a GPU).
- `--device cuda`: the update benches on one GPU, timed between CUDA synchronizations. The reference runs as it does
  on a GPU: its torch.compile'd functions compiled, flash-attn's FlashAttention if that package imports (else its
  VanillaAttention; the RESULT says which); `--compile` runs ours with the scripts' --compile (CUDA graphs).
Every worker also reports its peak RSS. One `RESULT {json}` line per benchmark at the end; `--record` also writes it
to benchmarks/results/compare_reference/<bench>_<threads>t_<date>.json.

The recorded pairs, every file pooled per bench and thread count (ratios are ours / reference, per pair):

    python benchmarks/compare_reference.py --summarize      # a Markdown table: median [min-max] and the pair count
    python benchmarks/compare_reference.py --summarize --since 2026-11-28   # only the files of that day or later
    python benchmarks/compare_reference.py --summarize --before 2026-11-28  # only the files of earlier days
    python benchmarks/compare_reference.py --summarize --commit 1e14595     # only the files recorded at that commit

A new day's pairs are new JSON files in that folder (any name): the summary reads them all, or those whose `date`
(`--since`, `--before`) or `commit` (`--commit`, a prefix) passes, and names every file it leaves out, so a file that comes back
(a merge, a copy) is seen. `--record` writes both fields; a file with neither passes no filter.
"""

import argparse
import datetime
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "benchmarks" / "results" / "compare_reference"
ENV_ID = "LunarLander-v2"  # the reference's gymnasium 0.29 has v2; ours resolves it to v3
# name -> (trajectory encoder, sizes, batch size, max_seq_len)
SMALL = dict(tstep_hidden=128, tstep_dim=64, actor_hidden=128, critic_hidden=128, d_model=64, n_layers=2, d_ff=256)
PAPER = dict(tstep_hidden=512, tstep_dim=256, actor_hidden=256, critic_hidden=256, d_model=256, n_layers=3, d_ff=1024)
BENCHES = {
    "collect": ("transformer", SMALL, 24, 32),
    "update_small": ("transformer", SMALL, 24, 32),
    "update_gru": ("gru", SMALL, 24, 32),
    "update_L128": ("transformer", SMALL, 24, 128),
    "update_L512": ("transformer", SMALL, 6, 512),
    "update_paper": ("transformer", PAPER, 24, 128),
}
# context scaling: the small transformer at max_seq_len 32 -> 1,024 with the same 3,072 tokens per batch
BENCHES.update({f"ctx_L{L}": ("transformer", SMALL, 3072 // L, L) for L in (32, 128, 256, 512, 1024)})
# what an update trains, where not AMAGO on LunarLander's Discrete(4): (agent, env id, obs dim, action dim, discrete)
TASK = ("amago", ENV_ID, 8, 4, True)
TASKS = {
    "update_box": ("amago", "Pendulum-v1", 3, 1, False),
    "update_multitask": ("multitask", ENV_ID, 8, 4, True),
    "update_multitask_box": ("multitask", "Pendulum-v1", 3, 1, False),
}
BENCHES.update({name: ("transformer", SMALL, 24, 32) for name in TASKS})


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ----------------------------------------------- reference side (its venv) -----------------------------------------------
def reference_attention():
    """The reference's attention: its FlashAttention (flash-attn's kernels) on CUDA where that package imports, else
    its VanillaAttention (its FlashAttention default needs both)."""
    import amago
    import torch

    flash = amago.nets.transformer.flash_attn is not None and torch.cuda.is_available()
    return amago.nets.transformer.FlashAttention if flash else amago.nets.transformer.VanillaAttention


def reference_experiment(enc, sizes, batch_size, L, workdir, steps_per_epoch, task=TASK):
    import amago
    import gin
    import gymnasium as gym
    from amago.envs import AMAGOEnv

    agent, env_id = task[:2]
    agent_cls = "amago.agent.MultiTaskAgent" if agent == "multitask" else "amago.agent.Agent"
    tf = "amago.nets.traj_encoders.TformerTrajEncoder"
    bindings = {
        "amago.nets.tstep_encoders.FFTstepEncoder.n_layers": 2,
        "amago.nets.tstep_encoders.FFTstepEncoder.d_hidden": sizes["tstep_hidden"],
        "amago.nets.tstep_encoders.FFTstepEncoder.d_output": sizes["tstep_dim"],
        "amago.nets.actor_critic.Actor.d_hidden": sizes["actor_hidden"],
        "amago.nets.actor_critic.NCritics.d_hidden": sizes["critic_hidden"],
        "amago.nets.actor_critic.NCriticsTwoHot.d_hidden": sizes["critic_hidden"],
        f"{agent_cls}.num_critics": 4,
        "amago.nets.policy_dists.Discrete.clip_prob_high": 1.0,
        "amago.nets.policy_dists.Discrete.clip_prob_low": 1e-6,
        f"{tf}.d_model": sizes["d_model"],
        f"{tf}.n_layers": sizes["n_layers"],
        f"{tf}.n_heads": 8,
        f"{tf}.d_ff": sizes["d_ff"],
        f"{tf}.attention_type": reference_attention(),
        "amago.nets.traj_encoders.GRUTrajEncoder.d_hidden": sizes["d_model"],
        "amago.nets.traj_encoders.GRUTrajEncoder.d_output": sizes["d_model"],
        "amago.nets.traj_encoders.GRUTrajEncoder.n_layers": sizes["n_layers"],
    }
    with gin.unlock_config():
        for k, v in bindings.items():
            gin.bind_parameter(k, v)
    traj = {"transformer": amago.nets.traj_encoders.TformerTrajEncoder, "gru": amago.nets.traj_encoders.GRUTrajEncoder}
    make_env = lambda: AMAGOEnv(gym.make(env_id), env_name=env_id)  # noqa: E731
    exp = amago.Experiment(
        run_name="ref",
        ckpt_base_dir=workdir,
        max_seq_len=L,
        dataset=amago.loading.DiskTrajDataset(dset_root=workdir, dset_name="ref", dset_max_size=20_000),
        tstep_encoder_type=amago.nets.tstep_encoders.FFTstepEncoder,
        traj_encoder_type=traj[enc],
        agent_type=amago.agent.MultiTaskAgent if agent == "multitask" else amago.agent.Agent,
        make_train_env=make_env,
        make_val_env=make_env,
        val_timesteps_per_epoch=100,
        parallel_actors=8,
        env_mode="sync",
        traj_save_len=max(256, L),  # as ours (--traj-save-len), at least one window
        log_to_wandb=False,
        verbose=False,
        dloader_workers=0,
        batch_size=batch_size,
        train_timesteps_per_epoch=steps_per_epoch,
        mixed_precision=os.environ.get("COMPARE_MIXED_PRECISION", "no"),
    )
    exp.start()
    return exp


def reference_worker(bench, seconds, workdir):
    enc, sizes, B, L = BENCHES[bench]
    task = TASKS.get(bench, TASK)
    import importlib.machinery
    import sys
    import types

    import torch

    try:
        import wandb  # noqa: F401
    except ImportError:  # amago.agent imports it for logging, which no worker does (a GPU machine may lack it)
        sys.modules["wandb"] = types.ModuleType("wandb")
        sys.modules["wandb"].__spec__ = importlib.machinery.ModuleSpec("wandb", None)  # for find_spec's callers
    import amago

    exp = reference_experiment(enc, sizes, B, L, workdir, steps_per_epoch=100, task=task)
    pol = exp.policy  # trainable: the encoders, actor and critics (not its target or "maximized" copies)
    params = sum(
        p.numel() for m in (pol.tstep_encoder, pol.traj_encoder, pol.actor, pol.critics) for p in m.parameters()
    )
    if bench == "collect":
        exp.collect_new_training_data()  # warm-up
        t0, steps = time.time(), 0
        while time.time() - t0 < seconds:
            exp.collect_new_training_data()
            steps += 8 * exp.train_timesteps_per_epoch
        return {"env_steps_per_s": steps / (time.time() - t0), "params": params}
    T, (_, _, obs_dim, A, discrete) = L + 1, task
    batch = amago.loading.Batch(
        obs={"observation": torch.randn(B, T, obs_dim)},
        rl2s=torch.randn(B, T, A + 1),
        rews=torch.randn(B, L, 1),
        dones=torch.zeros(B, L, 1, dtype=torch.bool),
        actions=synthetic_actions(B, L, A, discrete),
        time_idxs=torch.randint(0, 500, (B, T, 1)),
    ).to(exp.DEVICE)
    exp.policy_aclr.train()
    sync = torch.cuda.synchronize if exp.DEVICE.type == "cuda" else (lambda: None)
    for _ in range(5 if exp.DEVICE.type == "cuda" else 3):  # on CUDA, its torch.compile'd functions compile here
        exp.train_step(batch, log_step=False)
    sync()
    t0, n = time.time(), 0
    while time.time() - t0 < seconds:
        exp.train_step(batch, log_step=False)
        n += 1
        if n % 10 == 0:
            sync()
    sync()
    attention = reference_attention().__name__ if enc == "transformer" else None
    return {"updates_per_s": n / (time.time() - t0), "params": params, "attention": attention}


def synthetic_actions(B, L, A, discrete):
    import torch

    if discrete:
        return torch.nn.functional.one_hot(torch.randint(0, A, (B, L)), A).float()
    return torch.rand(B, L, A) * 2 - 1


# --------------------------------------------------- our side ---------------------------------------------------
def our_flags(enc, sizes, B, L):
    flags = ["--traj-encoder", enc, "--batch-size", str(B), "--max-seq-len", str(L)]
    for k, v in sizes.items():
        flags += [f"--{k.replace('_', '-')}", str(v)]
    return flags


def our_worker(bench, seconds, workdir):
    enc, sizes, B, L = BENCHES[bench]
    sys.path.insert(0, str(ROOT))
    if bench == "collect":  # the real main loop, collection only; one epoch = 100 steps of 8 actors
        epochs = max(4, int(seconds * 4))  # ~4 epochs/s at ~3k env steps/s, at most `seconds` long
        cmd = [sys.executable, str(ROOT / "amago_agent.py"), "--env-id", ENV_ID, *our_flags(enc, sizes, B, L)]
        cmd += ["--total-timesteps", str(800 * epochs), "--start-learning-at-epoch", "1000000", "--eval-interval", "0"]
        cmd += ["--checkpoint-interval", "0", "--run-name", "ours", "--buffer-dir", f"{workdir}/buffers"]
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            proc.terminate()  # saves and exits at the next step; the epochs logged so far are kept
            out, err = proc.communicate()
        from common.logs import read_scalars

        sps = [v for _, _, v in read_scalars(Path(workdir) / "runs" / "ours").get("charts/collect_SPS", [])][1:]
        if not sps:
            raise RuntimeError(f"our collection logged nothing: {err[-2000:]}")
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        params = re.search(r"([\d,]+) parameters", out)  # the script's first line: "..., 274,084 parameters, cpu"
        return {
            "env_steps_per_s": statistics.median(sps),
            "peak_rss_mb": rss,
            "params": int(params[1].replace(",", "")),
        }
    import importlib

    import torch
    import tyro
    from accelerate import Accelerator

    from common.args import resolve_env_id
    from common.compiled import compiled_update

    agent_kind, env_id, obs_dim, A, discrete = TASKS.get(bench, TASK)
    amago = importlib.import_module("amago_multitask" if agent_kind == "multitask" else "amago_agent")
    device, compile_ = os.environ.get("COMPARE_DEVICE", "cpu"), os.environ.get("COMPARE_COMPILE") == "1"
    args = tyro.cli(amago.Args, args=["--env-id", env_id, *our_flags(enc, sizes, B, L)])
    args.compile = compile_
    amago.keep_freed_memory()  # as main does
    envs = amago.make_vec_env(resolve_env_id(args.env_id), 1, "sync", args.seed)
    agent = amago.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
    params = agent.trainable_parameters()
    opt = torch.optim.AdamW(params, lr=args.learning_rate, weight_decay=args.weight_decay, fused=True)  # as main
    args.mixed_precision = os.environ.get("COMPARE_MIXED_PRECISION", "no")
    acc = Accelerator(cpu=device == "cpu", mixed_precision=args.mixed_precision)
    agent, opt = acc.prepare(agent, opt)
    train_step = compiled_update(amago.train_step, agent, opt, acc, args) if compile_ else amago.train_step
    T = L + 1
    batch = {
        "obs": {"observation": torch.randn(B, T, obs_dim)},
        "rl2": torch.randn(B, T, A + 1),
        "time": torch.randint(0, 500, (B, T)),
        "mask": torch.ones(B, T, dtype=torch.bool),
        "actions": synthetic_actions(B, L, A, discrete),
        "rewards": torch.randn(B, L),
        "terminated": torch.zeros(B, L, dtype=torch.bool),
    }
    batch = amago.to_device(batch, acc.device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    agent.train()
    for _ in range(6 if compile_ else 3):  # --compile: the compilation, the graph's warm-up and its recording
        train_step(agent, opt, acc, [batch], args, 1000)
    sync()
    t0, n = time.time(), 0
    while time.time() - t0 < seconds:
        train_step(agent, opt, acc, [batch], args, 1000)
        n += 1
        if n % 10 == 0:
            sync()
    sync()
    params = sum(p.numel() for p in acc.unwrap_model(agent).trainable_parameters())
    return {"updates_per_s": n / (time.time() - t0), "params": params}


def worker(side, bench, seconds):
    with tempfile.TemporaryDirectory() as workdir:
        out = (reference_worker if side == "reference" else our_worker)(bench, seconds, workdir)
    out.setdefault("peak_rss_mb", peak_rss_mb())
    print("WORKER " + json.dumps(out), flush=True)


# --------------------------------------------- the recorded pairs, pooled ---------------------------------------------
def left_out(r, since=None, commits=(), before=None):
    """Why a recorded RESULT fails the filter (None: it passes): its `date` before `since` or not before `before`
    (ISO dates compare as text), or its `commit` not one of `commits` (prefixes). A file without the field fails a
    filter on it."""
    if since and (r.get("date") or "") < since:
        return f"date {r.get('date')}, before {since}"
    if before and not (r.get("date") or "9") < before:
        return f"date {r.get('date')}, not before {before}"
    if commits and not any((r.get("commit") or "").startswith(c) for c in commits):
        return f"commit {r.get('commit')}, not {' '.join(commits)}"
    return None


def pooled(folder=RECORDED, since=None, commits=(), before=None, skipped=None):
    """{(bench, threads): {"ratio": [...], "rss": [...], "files": [...]}}: every pair of every RESULT JSON under
    `folder` that passes the filter (`left_out`), whatever its file name; a pair's ratio is ours / reference (its
    metric, and its peak RSS). `skipped`, a list, gets "name: why" for each file the filter leaves out."""
    out = {}
    for f in sorted(Path(folder).rglob("*.json")):
        r = json.loads(f.read_text())
        if "bench" not in r or "ours" not in r:
            continue
        why = left_out(r, since, commits, before)
        if why:
            if skipped is not None:
                skipped.append(f"{f.name}: {why}")
            continue
        variant = [r.get("device", "cpu"), "compile" if r.get("compile") else "", r.get("mixed_precision", "no")]
        name = r["bench"] + "".join(f"_{v}" for v in variant if v not in ("cpu", "", "no"))  # e.g. update_paper_bf16
        g = out.setdefault((name, r["threads"]), {"ratio": [], "rss": [], "files": []})
        g["ratio"] += [o / ref for o, ref in zip(r["ours"], r["reference"], strict=True)]
        g["rss"] += [o / ref for o, ref in zip(r["peak_rss_mb_ours"], r["peak_rss_mb_reference"], strict=True)]
        g["files"].append(f.name)
    order = list(BENCHES)
    return dict(sorted(out.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else 99, kv[0][1])))


def summary_table(groups):
    """The pooled pairs as a Markdown table, one row per bench: each thread count's median [range] of the ratio and its
    pairs, and the peak-memory ratio over all of the bench's pairs (README.md's speed table shows four rows of it)."""

    def spread(xs):
        return f"{statistics.median(xs):.2f} [{min(xs):.2f}–{max(xs):.2f}]"

    def pooled_cell(ratios):
        return f"{spread(ratios)}, {len(ratios)} pair{'s' * (len(ratios) != 1)}"

    threads = sorted({t for _, t in groups})
    head = [f"{t} thread{'s' * (t > 1)}: ours / reference" for t in threads]
    lines = [
        "| bench | " + " | ".join(head) + " | peak memory, ours / reference |",
        "|---|" + "---|" * (len(threads) + 1),
    ]
    for bench in dict.fromkeys(b for b, _ in groups):
        cells = [pooled_cell(groups[bench, t]["ratio"]) if (bench, t) in groups else "" for t in threads]
        rss = [x for (b, _), g in groups.items() if b == bench for x in g["rss"]]
        lines.append(f"| `{bench}` | " + " | ".join(cells) + f" | {spread(rss)} |")
    return "\n".join(lines)


# ---------------------------------------------------- driver ----------------------------------------------------
def git_commit():
    """This checkout's commit, with "-dirty" when its scripts differ from it; None outside git."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "*.py"], cwd=ROOT).returncode
    except OSError:
        return None
    return (sha.stdout.strip() + "-dirty" * (dirty == 1)) if sha.returncode == 0 else None


def run_worker(python, side, bench, seconds, threads, device="cpu", compile_=False, mixed_precision="no"):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), COMPARE_DEVICE=device)
    env["COMPARE_MIXED_PRECISION"] = mixed_precision
    if device == "cpu":  # the reference's torch.compile fails on the CPU
        env["TORCH_COMPILE_DISABLE"] = "1"
    if compile_:
        env["COMPARE_COMPILE"] = "1"
    cmd = [python, __file__, "--worker", side, "--bench", bench, "--seconds", str(seconds)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("WORKER ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{side} {bench} failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("WORKER ") :])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref-python", help="the reference venv's python (see the setup steps above)")
    p.add_argument("--bench", nargs="+", default=["collect", "update_small", "update_paper"], choices=list(BENCHES))
    p.add_argument("--pairs", type=int, default=3, help="interleaved (reference, ours) pairs per benchmark")
    p.add_argument("--seconds", type=float, default=60.0, help="timed seconds per worker")
    p.add_argument("--threads", type=int, default=1, help="torch threads per worker (2: what each gets alone here)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the update benches run")
    p.add_argument("--compile", action="store_true", help="ours with the scripts' --compile (on CUDA: CUDA graphs)")
    p.add_argument(
        "--mixed-precision", default="no", choices=["no", "bf16"], help="both sides' autocast (accelerate's)"
    )
    p.add_argument("--record", action="store_true", help=f"also write each RESULT to {RECORDED.relative_to(ROOT)}/")
    p.add_argument("--summarize", action="store_true", help="print the recorded pairs, pooled per bench and threads")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="--summarize: only the files recorded on that day or later")
    p.add_argument("--before", metavar="YYYY-MM-DD", help="--summarize: only the files recorded before that day")
    p.add_argument("--commit", nargs="+", default=[], metavar="SHA", help="--summarize: only files of these commits")
    p.add_argument("--worker", choices=["reference", "ours"], help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, a.bench[0], a.seconds)
    for flag, day in (("--since", a.since), ("--before", a.before)):
        if day and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
            p.error(f"{flag} {day!r}: give a date as YYYY-MM-DD")
    if a.summarize:
        skipped = []
        groups = pooled(since=a.since, commits=a.commit, before=a.before, skipped=skipped)
        if not groups:
            given = " ".join(f"{k} {v}" for k, v in (("--since", a.since), ("--before", a.before)) if v)
            given += f" --commit {' '.join(a.commit)}" if a.commit else ""
            p.error(f"no recorded pairs pass {given.strip()} in {RECORDED.relative_to(ROOT)}/")
        print(summary_table(groups))
        kept = len({f for g in groups.values() for f in g["files"]})
        print(f"\n{sum(len(g['ratio']) for g in groups.values())} pairs in {kept} files", end="")
        print(f"; left out, {len(skipped)}:\n" + "\n".join(f"  {s}" for s in skipped) if skipped else "")
        return
    if a.threads < 1:
        p.error(f"--threads {a.threads}: give a positive number of torch threads per worker")
    if not a.ref_python or not Path(a.ref_python).exists():
        p.error(f"--ref-python {a.ref_python!r}: give the reference venv's python (setup steps: --help)")
    from run import cpu_model  # benchmarks/run.py, beside this file (not imported by the workers: the reference venv)

    for bench in a.bench:
        metric = "env_steps_per_s" if bench == "collect" else "updates_per_s"
        pairs = []
        for i in range(a.pairs):
            ref = run_worker(a.ref_python, "reference", bench, a.seconds, a.threads, a.device, False, a.mixed_precision)
            ours = run_worker(
                sys.executable, "ours", bench, a.seconds, a.threads, a.device, a.compile, a.mixed_precision
            )
            pairs.append((ref, ours))
            print(
                f"{bench} pair {i + 1}: reference {ref[metric]:.2f} ours {ours[metric]:.2f} "
                f"ratio {ours[metric] / ref[metric]:.2f}  peak RSS {ref['peak_rss_mb']:.0f} / {ours['peak_rss_mb']:.0f} MB"
                f"  params {ref.get('params')} / {ours.get('params')}",
                flush=True,
            )
        ratios = [o[metric] / r[metric] for r, o in pairs]
        rss = [o["peak_rss_mb"] / r["peak_rss_mb"] for r, o in pairs]
        enc, sizes, B, L = BENCHES[bench]
        agent_kind, env_id = TASKS.get(bench, TASK)[:2]
        result = {
            "env_id": env_id,
            "agent": agent_kind,
            "traj_encoder": enc,
            "bench": bench,
            "device": a.device,
            "compile": a.compile,
            "mixed_precision": a.mixed_precision,
            "reference_attention": pairs[0][0].get("attention"),
            "batch_size": B,
            "max_seq_len": L,
            "trainable_params": pairs[0][1].get("params"),
            "threads": a.threads,
            "metric": metric,
            "reference": [round(r[metric], 2) for r, _ in pairs],
            "ours": [round(o[metric], 2) for _, o in pairs],
            "ratio_median": round(statistics.median(ratios), 3),
            "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
            "peak_rss_mb_reference": [round(r["peak_rss_mb"]) for r, _ in pairs],
            "peak_rss_mb_ours": [round(o["peak_rss_mb"]) for _, o in pairs],
            "rss_ratio_median": round(statistics.median(rss), 3),
            "seconds_per_worker": a.seconds,
            "env_steps": None,
            "updates": None,
            "wall_s": None,
            "env_steps_per_s": round(statistics.median(o[metric] for _, o in pairs), 1) if bench == "collect" else None,
            "updates_per_s": round(statistics.median(o[metric] for _, o in pairs), 2) if bench != "collect" else None,
            "peak_rss_mb": round(statistics.median(o["peak_rss_mb"] for _, o in pairs)),
            "final_eval_return": None,
            "date": datetime.date.today().isoformat(),
            "commit": git_commit(),  # the code the pairs ran on (--summarize --commit)
            "cpu": cpu_model(),  # pairs of one day share a machine; days may not
        }
        print("RESULT " + json.dumps(result), flush=True)
        if a.record:
            stem, n = f"{bench}_{a.threads}t_{result['date']}", 1
            while (RECORDED / f"{stem}.json").exists():  # never replace a recorded file: number a second session
                stem, n = f"{bench}_{a.threads}t_{result['date']}_{n}", n + 1
            (RECORDED / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
