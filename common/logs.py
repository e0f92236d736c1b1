"""Read the scalars a run wrote to tensorboard (`runs/<run_name>/events.*`)."""

from pathlib import Path


def read_scalars(run_dir):
    """{tag: [(wall_time, step, value), ...]} for every scalar tag of the run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(Path(run_dir)), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def eval_curve(scalars, start_time, tag="eval/return"):
    """Rows of (minutes since start, env steps, updates, eval return), one per evaluation."""
    updates = {step: value for _, step, value in scalars.get("charts/updates", [])}
    return [((t - start_time) / 60, step, int(updates.get(step, 0)), value) for t, step, value in scalars.get(tag, [])]
