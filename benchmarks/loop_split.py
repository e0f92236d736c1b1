"""Where a training run's wall time went, read back from its logs: collection, updates, and the rest (evaluation,
checkpoints, logging), from the end of its first epoch (which holds the start-up and --compile's compilation) on.

    python benchmarks/loop_split.py benchmarks/out/gpu_lunarlander_transformer_compile/runs/gpu_lunarlander_transformer_compile

Each epoch logs its collection rate (charts/collect_SPS: env steps per second of collection), its update rate
(charts/updates_per_s: updates per second of the training phase) and the counters (env steps as the step, charts/updates).
An epoch's collection took its env steps / collect_SPS and its updates took its updates / updates_per_s; the rest of
the wall time between the first and the last epoch's logs is everything else. The steady rates are the medians of
those epochs' rates. One `RESULT {json}` line.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common.logs import read_scalars  # noqa: E402


def split(scalars):
    sps, ups, updates = (scalars.get(t, []) for t in ("charts/collect_SPS", "charts/updates_per_s", "charts/updates"))
    if len(updates) < 2:
        raise SystemExit("fewer than two epochs logged: nothing to split")
    by_step = {step: v for _, step, v in ups}
    collect_s = update_s = 0.0
    for (_, s0, u0), (_, s1, u1), (_, _, rate) in zip(updates, updates[1:], sps[1:]):
        collect_s += (s1 - s0) / rate if rate > 0 else 0.0
        update_s += (u1 - u0) / by_step[s1] if by_step.get(s1) else 0.0
    wall = updates[-1][0] - updates[0][0]
    steady = lambda xs: round(statistics.median(v for _, _, v in xs[1:]), 2) if len(xs) > 1 else None  # noqa: E731
    return {
        "epochs": len(updates) - 1,
        "wall_s": round(wall, 1),
        "collect_s": round(collect_s, 1),
        "update_s": round(update_s, 1),
        "other_s": round(wall - collect_s - update_s, 1),
        "collect_share": round(collect_s / wall, 3),
        "update_share": round(update_s / wall, 3),
        "env_steps": int(updates[-1][1] - updates[0][1]),
        "updates": int(updates[-1][2] - updates[0][2]),
        "env_steps_per_s": round((updates[-1][1] - updates[0][1]) / wall, 1),
        "updates_per_s": round((updates[-1][2] - updates[0][2]) / wall, 2),
        "steady_collect_sps": steady(sps),
        "steady_update_rate": steady(ups),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", help="the run's folder (runs/<name>, with its tensorboard events and flags.json)")
    a = p.parse_args()
    run_dir = Path(a.run_dir)
    if not run_dir.is_dir():
        p.error(f"{run_dir}: no such run folder")
    flags = json.loads((run_dir / "flags.json").read_text()) if (run_dir / "flags.json").exists() else {}
    result = {
        "name": run_dir.name,
        "env_id": flags.get("env_id"),
        "traj_encoder": flags.get("traj_encoder"),
        "compile": flags.get("compile"),
        **split(read_scalars(run_dir)),
        "peak_rss_mb": None,
        "final_eval_return": None,
    }
    print(
        f"{result['epochs']} epochs in {result['wall_s']} s: collection {result['collect_s']} s, updates "
        f"{result['update_s']} s, the rest {result['other_s']} s; steady {result['steady_collect_sps']} env steps/s "
        f"collecting, {result['steady_update_rate']} updates/s training",
        flush=True,
    )
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
