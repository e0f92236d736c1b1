"""Time a script's update and rollout step, per trajectory encoder, on this machine.

    python benchmarks/speed.py                                  # CartPole, every encoder
    python benchmarks/speed.py --env-id Pendulum-v1 --encoders transformer --set critic_hidden=64
    python benchmarks/speed.py --script amago_multitask         # AMAGO-2's update (or --script PATH: any copy of one)
    python benchmarks/speed.py --encoders transformer --compile   # the scripts' --compile (on CUDA: CUDA graphs too)
    python benchmarks/speed.py --device cuda --mixed-precision bf16 --tf32   # on a GPU, as the script's flags
    python benchmarks/speed.py --encoders transformer --profile 15   # + the update's 15 costliest ops (torch.profiler)
    python benchmarks/speed.py --loader                         # the replay loader's hand-off, numpy vs torch batches
    python benchmarks/speed.py --env-id envs:Procgen-Memory-TwoShot-v0 --encoders transformer --updates 1 --warmup 1 \
        --set tstep_encoder=cnn cnn=impala max_seq_len=256 num_envs=24 d_model=256 n_layers=3 --budget 50000000

The update is timed on a fixed batch shaped like a real one (B sequences of max_seq_len+1 steps), the rollout on the
real vector env with the default number of actors (after one untimed step). Run it alone: a second torch process on
the same cores halves both figures. --budget N adds the arithmetic for a run of N env steps at these settings: its
updates (N / (timesteps_per_epoch * num_envs) epochs of batches_per_epoch) and the hours its updates and its acting take
at the measured speeds, one core each (budget_* keys in the RESULT); with --device cuda the update and the policy run on
the GPU (the envs on one core), timed between CUDA synchronizations. --compile times what the scripts' --compile runs
(common/compiled.py: the loss compiled; on one CUDA device the whole update and the acting step as CUDA graphs); its
warm-up (--warmup, at least 5 with it) holds the compilation, reported as warmup_s. One `RESULT {json}` line per
encoder (final_eval_return is null: nothing is trained here; peak_rss_mb is the process's peak so far, so it grows
with each encoder timed after the first; peak_gpu_mb is each encoder's own).
"""

import argparse
import ast
import functools
import importlib.util
import json
import math
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import amago_agent as amago  # noqa: E402
from amago_agent import collate  # noqa: E402
from common.args import resolve_env_id  # noqa: E402
from common.compiled import compiled_acting, compiled_update  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load_script(name):
    """amago_agent, amago_multitask, or the path of a copy of either (e.g. an older version, for a before/after)."""
    path = Path(name) if name.endswith(".py") else ROOT / f"{name}.py"
    if not path.exists():
        sys.exit(f"--script {name}: no such script (amago_agent, amago_multitask, or a path to a .py copy of one)")
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_") + "_timed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_batch(agent, obs_space, B, L):
    obs = {k: torch.randn(B, L, *space.shape) for k, space in obs_space.spaces.items()}
    A = agent.A
    if agent.kind == "discrete":
        actions = torch.nn.functional.one_hot(torch.randint(0, A, (B, L - 1)), A).float()
    else:
        actions = torch.rand(B, L - 1, A) * 2 - 1
    return {
        "obs": obs,
        "rl2": torch.randn(B, L, A + 1),
        "time": torch.randint(0, 500, (B, L)),
        "mask": torch.ones(B, L, dtype=torch.bool),
        "actions": actions,
        "rewards": torch.randn(B, L - 1),
        "terminated": torch.zeros(B, L - 1, dtype=torch.bool),
    }


def with_overrides(args, pairs):  # --set k=v ...: a value of the field's type (a tuple or an Optional None: a literal)
    for kv in pairs:
        k, v = kv.split("=")
        now = getattr(args, k)
        literal = now is None or isinstance(now, tuple)  # e.g. multigammas=() or multigammas=(0.9,0.99)
        setattr(args, k, ast.literal_eval(v) if literal else type(now)(v))
    return args


def collate_torch(samples):  # the script's batches as torch tensors, whatever their size
    batch = collate(samples)
    return {
        k: {kk: torch.as_tensor(vv) for kk, vv in v.items()} if isinstance(v, dict) else torch.as_tensor(v)
        for k, v in batch.items()
    }


def collate_numpy(samples):  # the script's batches as numpy arrays, whatever their size
    batch = collate(samples)
    return {
        k: {kk: np.asarray(vv) for kk, vv in v.items()} if isinstance(v, dict) else np.asarray(v)
        for k, v in batch.items()
    }


class RepeatWindow(torch.utils.data.IterableDataset):  # one fixed window of T steps with (T+1, *frame) uint8 pixels
    def __init__(self, frame, T):
        self.frame, self.T = frame, T

    def __iter__(self):
        T = self.T
        w = {
            "obs_pixels": np.random.default_rng(0).integers(0, 255, (T + 1, *self.frame), dtype=np.uint8),
            "rl2": np.zeros((T + 1, 3), np.float32),
            "time": np.arange(T + 1),
            "actions": np.zeros((T, 2), np.float32),
            "rewards": np.zeros(T, np.float32),
            "terminated": np.zeros(T, bool),
        }
        while True:
            yield w


def handoff_ms(dataset, batch_size, collate, batches, pause_s, warmup=20):
    """The main process's cost of one next(loader) + to_device, with one DataLoader worker as in the script; a pause
    between batches stands in for the update (so the worker keeps up)."""
    loader = iter(
        torch.utils.data.DataLoader(
            dataset, batch_size, collate_fn=collate, num_workers=1, persistent_workers=True, prefetch_factor=4
        )
    )
    for _ in range(warmup):  # the worker starts (and fills its file cache)
        amago.to_device(next(loader), "cpu")
    spent = 0.0
    for _ in range(batches):
        time.sleep(pause_s)
        t0 = time.perf_counter()
        amago.to_device(next(loader), "cpu")
        spent += time.perf_counter() - t0
    return round(spent / batches * 1000, 2)


def time_loader(args, batches=400, files=2000, pause_s=0.02):
    """Batch hand-off, numpy vs torch: over a buffer of CartPole-shaped episodes at args.batch_size, then for pixel
    batches of growing size (24 windows of 33 steps), which is where collate's size threshold comes from."""
    rng, start, ms = np.random.default_rng(0), time.time(), {}
    with tempfile.TemporaryDirectory() as root:
        buffer = amago.DiskReplayBuffer(
            root, files, args.max_seq_len, action_dim=2, discrete=True, padded_sampling="right"
        )
        for _ in range(files):
            T = int(rng.integers(10, 300))
            obs = [
                {
                    "obs": {"observation": rng.normal(size=4).astype(np.float32)},
                    "rl2": np.zeros(3, np.float32),
                    "time": np.int64(t),
                }
                for t in range(T + 1)
            ]
            buffer.save(
                {
                    "obs": obs,
                    "actions": rng.integers(0, 2, T),
                    "rewards": np.ones(T),
                    "terminated": np.arange(T) == T - 1,
                }
            )
        for name, collate_fn in (("numpy", collate), ("torch", collate_torch)):
            ms[name] = handoff_ms(buffer, args.batch_size, collate_fn, batches, pause_s, warmup=50)
            print(
                f"loader, batch {args.batch_size}, {name} batches: {ms[name]:5.2f} ms per batch in the main process",
                flush=True,
            )
    sweep = []
    for frame in [(4,), (16, 16, 1), (16, 16, 3), (24, 24, 3), (32, 32, 3), (64, 64, 3)]:
        mb = 24 * 33 * int(np.prod(frame)) / 2**20
        row = [handoff_ms(RepeatWindow(frame, 32), 24, fn, 60, 0.05) for fn in (collate_numpy, collate_torch)]
        sweep.append({"mb": round(mb, 3), "numpy_ms": row[0], "torch_ms": row[1]})
        print(f"pixel batch {mb:7.3f} MB: numpy {row[0]:6.2f} ms, torch {row[1]:6.2f} ms per batch", flush=True)
    result = {
        "env_id": "CartPole-v1 (synthetic episodes)",
        "traj_encoder": None,
        "env_steps": 0,
        "updates": 0,
        "wall_s": round(time.time() - start, 1),
        "env_steps_per_s": None,
        "updates_per_s": None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "batch_size": args.batch_size,
        "loader_ms_numpy": ms["numpy"],
        "loader_ms_torch": ms["torch"],
        "pixel_sweep": sweep,
        "final_eval_return": None,
    }
    print("RESULT " + json.dumps(result), flush=True)


GRAPH_STEPS = 5  # untimed acting steps with --compile: compilation, then (CUDA) the graph's warm-up and recording


def print_profile(update, sync, device, n, updates=10):
    """The update's n costliest ops by self time over `updates` updates (torch.profiler; CUDA time on a GPU)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        for _ in range(updates):
            update()
        sync()
    key = "self_cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=n), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--encoders", nargs="+", default=["ff", "gru", "transformer", "mamba"])
    p.add_argument("--updates", type=int, default=50)
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (allocator, lazy init, compile)")
    p.add_argument("--budget", type=int, default=0, help="env steps of a run to extrapolate to (0: none)")
    p.add_argument("--rollout-steps", type=int, default=200)
    p.add_argument("--set", nargs="*", default=[], help="Args overrides, e.g. critic_hidden=64 batch_size=32")
    p.add_argument("--script", default="amago_agent", help="amago_agent, amago_multitask, or a path to a copy of one")
    p.add_argument("--compile", action="store_true", help="as the scripts' --compile (common/compiled.py)")
    p.add_argument("--tf32", action="store_true", help="TF32 matmuls and convolutions on CUDA (torch's default: off)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--no-keep-freed-memory", action="store_true", help="skip main's keep_freed_memory() (its share)")
    p.add_argument("--profile", type=int, default=0, help="print the update's N costliest ops (torch.profiler)")
    p.add_argument("--loader", action="store_true", help="time the replay loader's hand-off instead (no encoders)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the update and the policy run")
    p.add_argument("--mixed-precision", default="no", choices=["no", "bf16", "fp16"], help="as the script's flag")
    a = p.parse_args()
    if a.loader:
        return time_loader(with_overrides(amago.Args(), a.set))
    from accelerate import Accelerator

    script = amago if a.script == "amago_agent" else load_script(a.script)
    keep = hasattr(script, "keep_freed_memory") and not a.no_keep_freed_memory  # as the script's main does
    if keep:
        script.keep_freed_memory()
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.tf32:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    if a.compile:
        a.warmup = max(a.warmup, 5)  # compilation, then (CUDA) the graph's warm-up calls and its recording

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False)")
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)  # CUDA runs ahead of the host: wait
    device_name = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    for enc in a.encoders:
        args = with_overrides(script.Args(env_id=a.env_id, traj_encoder=enc), a.set)
        args.compile, args.mixed_precision = a.compile, a.mixed_precision
        env_id = resolve_env_id(args.env_id)
        envs = script.make_vec_env(env_id, args.num_envs, "sync", args.seed)
        agent = script.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
        opt = torch.optim.AdamW(
            agent.trainable_parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, fused=True
        )  # as main
        acc = Accelerator(cpu=a.device == "cpu", mixed_precision=a.mixed_precision)
        agent, opt = acc.prepare(agent, opt)
        if a.device == "cuda":
            torch.cuda.reset_peak_memory_stats()  # peak_gpu_mb: this encoder's alone
        batch = fake_batch(agent, envs.single_observation_space["obs"], args.batch_size, args.max_seq_len + 1)
        batch = amago.to_device(batch, acc.device)
        policy = acc.unwrap_model(agent)
        train_step = script.train_step
        if a.compile:  # as main does
            train_step = compiled_update(train_step, agent, opt, acc, args)
            policy.get_actions = compiled_acting(policy.get_actions, policy, acc)
        agent.train()
        t0 = time.time()
        for _ in range(a.warmup):  # warm-up: allocator, lazy init (and the compile)
            train_step(agent, opt, acc, batch, args, 100)
        sync()
        warmup_s = time.time() - t0
        t0, r0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(a.updates):
            train_step(agent, opt, acc, batch, args, 100)
        sync()
        update_s, r1 = (time.time() - t0) / a.updates, resource.getrusage(resource.RUSAGE_SELF)
        faults, sys_s = (r1.ru_minflt - r0.ru_minflt) / a.updates, (r1.ru_stime - r0.ru_stime) / a.updates
        if a.profile:
            print_profile(functools.partial(train_step, agent, opt, acc, batch, args, 100), sync, a.device, a.profile)

        agent.eval()
        obs, _ = envs.reset(seed=args.seed)
        hidden = policy.traj.init_hidden(args.num_envs, acc.device)
        warm = GRAPH_STEPS if a.compile else 1  # untimed: lazy init, the first CUDA calls (and compile, graphs)
        with torch.no_grad():
            for step in range(a.rollout_steps + warm):
                if step == warm:
                    t0 = time.time()
                actions, hidden = policy.get_actions(*amago.obs_to_torch(obs, acc.device), hidden)
                obs, _, term, trunc, _ = envs.step(actions.cpu().numpy())
                hidden = policy.traj.reset_hidden(hidden, torch.as_tensor(term | trunc, device=acc.device))
        rollout_s = time.time() - t0
        env_steps = a.rollout_steps * args.num_envs
        n_params = sum(p.numel() for p in policy.trainable_parameters())
        print(
            f"{enc:12s} {n_params:9,d} params  update {update_s * 1000:6.1f} ms ({1 / update_s:5.1f}/s)  "
            f"rollout {env_steps / rollout_s:7.0f} env steps/s ({args.num_envs} actors)",
            flush=True,
        )
        result = {
            "script": a.script,
            "env_id": env_id,
            "traj_encoder": enc,
            "env_steps": env_steps,
            "updates": a.updates,
            "wall_s": round(update_s * a.updates + rollout_s, 2),
            "env_steps_per_s": round(env_steps / rollout_s, 1),
            "updates_per_s": round(1 / update_s, 2),
            "update_ms": round(update_s * 1000, 1),
            "page_faults_per_update": round(faults),  # minor faults: fresh pages the kernel zeroed for the update
            "kernel_ms_per_update": round(sys_s * 1000, 1),  # the process's system time, per update
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "trainable_params": n_params,
            "threads": torch.get_num_threads(),
            "compile": a.compile,
            "device": device_name,
            "mixed_precision": a.mixed_precision,
            "tf32": a.tf32,
            "keep_freed_memory": keep,
            "batch_size": args.batch_size,
            "max_seq_len": args.max_seq_len,
            "warmup_s": round(warmup_s, 1),
            **({"peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1)} if a.device == "cuda" else {}),
            "final_eval_return": None,
        }
        if a.budget:  # the run's updates as the script counts them (main's epochs), and the hours each side takes
            updates = math.ceil(a.budget / (args.timesteps_per_epoch * args.num_envs)) * script.updates_per_epoch(args)
            result |= {
                "budget_env_steps": a.budget,
                "budget_updates": updates,
                "budget_update_hours": round(updates * update_s / 3600, 1),
                "budget_acting_hours": round(a.budget / (env_steps / rollout_s) / 3600, 1),
            }
            print(
                f"{a.budget:,d} env steps: {updates:,d} updates, {result['budget_update_hours']:,.1f} h of updates "
                f"and {result['budget_acting_hours']:,.1f} h of acting at these speeds",
                flush=True,
            )
        print("RESULT " + json.dumps(result), flush=True)
        envs.close()


if __name__ == "__main__":
    main()
