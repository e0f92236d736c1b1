"""A run's folders, kept safe from the user and from other processes: a run name is never reused by accident, one
learner at a time holds a run (an OS lock on a file), a buffer records which env's data it holds, temp files of killed
writers are removed, and Ctrl-C / SIGTERM end the run at a consistent point, so that it can save a checkpoint."""

import contextlib
import fcntl
import json
import os
import signal
import sys
import threading
from pathlib import Path

from common.guards import RESUME, StorageError, UserError, disk_error


def claim_run(buffer_root, ckpt_path, resume, role="learner", join=False):
    """Before a run writes anything: create its buffer folder, take its locks, refuse a reused run name without
    --resume, and remove the temp files of dead writers. Returns the open lock files: the locks last as long as they
    (the process). role "learner" (the process that trains and checkpoints) is exclusive, on the buffer and on the run
    folder (two runs of one --run-name with different --buffer-dir would write one checkpoint); any other role (e.g. a
    process that only collects into the shared buffer, or a rank > 0 of one multi-process launch) takes no lock and
    joins the buffer as it is. join: a new learner may take a buffer that already holds files (a learner joining its
    collectors, or a run training on another run's buffer); a checkpoint without --resume is still refused."""
    buffer_root, ckpt_path = Path(buffer_root), Path(ckpt_path)
    RESUME["hint"] = f"--resume --run-name {ckpt_path.parent.name}"  # what a write error's message advises
    try:
        buffer_root.mkdir(parents=True, exist_ok=True)
        lock = open(buffer_root / f"{role}.lock", "a+")
    except OSError as e:
        raise UserError(f"--buffer-dir {str(buffer_root.parent)!r}: cannot write {buffer_root} ({e})") from None
    fifo = buffer_root / "fifo"
    if role != "learner":
        return [lock]
    take_lock(lock, buffer_root.name)
    ckpt_path.parent.mkdir(parents=True, exist_ok=True)
    run_lock = open(ckpt_path.parent / "learner.lock", "a+")
    take_lock(run_lock, ckpt_path.parent.name)
    has_data = fifo.is_dir() and any(n.endswith(".npz") for n in os.listdir(fifo)) and not join
    if not resume and (ckpt_path.exists() or has_data):
        raise UserError(
            f"run {buffer_root.name!r} already exists ({ckpt_path if ckpt_path.exists() else fifo} holds its data): "
            "pass --resume to continue it, or another --run-name to start a new run (nothing was changed)"
        )
    if resume and not ckpt_path.exists():
        if not has_data:
            raise UserError(f"--resume: no checkpoint at {ckpt_path} (pass the --run-name of the run to continue)")
        print(f"note: no checkpoint at {ckpt_path} yet: the run starts again from epoch 0 with its buffer's files")
    # temp files of killed writers: trajectories, checkpoints, the latest policy, collector reports, spec.json
    for folder in (fifo, buffer_root, ckpt_path.parent, ckpt_path.parent / "collectors"):
        remove_stale_tmps(folder)
    return [lock, run_lock]


def take_lock(lock, name):
    """An exclusive POSIX record lock on the open file `lock`, with this process's PID written in it; refused naming
    the holder's PID. The OS releases it when the process ends, however it ends, and forked children (DataLoader
    workers, async envs) do not hold it (with flock they would, until they notice the parent died)."""
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        lock.seek(0)
        pid = lock.read().strip() or "?"
        raise UserError(
            f"run {name!r} is in use by another process (PID {pid} holds {lock.name}): wait for it to end, or pick "
            "another --run-name"
        ) from None
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def write_atomic(path, write):
    """Writes `path` whole or not at all: write(f) fills `.{name}.{pid}.tmp` beside it (binary), which is flushed to the
    disk and renamed over `path`. A reader never sees half a file; the temp file of a writer killed mid-write is
    removed by remove_stale_tmps at the next start, and that of a failed write at once. A folder deleted under the
    writer (rm -rf of a run folder mid-run) is made again and the write retried: the run's own check then sees what
    else went with it (scale.check_run_dir)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    for retry in (True, True, False):
        try:
            with open(tmp, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            return
        except FileNotFoundError:
            discard(tmp)
            if not retry or path.parent.is_dir():
                raise
            path.parent.mkdir(parents=True, exist_ok=True)
        except (OSError, RuntimeError) as e:  # torch's writer reports a full disk as a RuntimeError
            discard(tmp)
            kept = "Nothing of it was kept, and the files written before it (checkpoints, trajectories) are whole"
            error = disk_error(e, path, kept)
            if not isinstance(error, StorageError):  # a full disk or an unwritable folder: one line; else it raises
                raise
            raise error from None
        except BaseException:
            discard(tmp)
            raise


def discard(tmp):
    """Removes a failed write's temp file; one that cannot be removed (a read-only folder) goes at the next start."""
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def remove_stale_tmps(folder):
    """Files are written to `.{name}.{pid}.tmp` and renamed when whole: a temp file whose writer is gone was killed
    mid-write. Those (and temp files without a pid) are removed; a live writer's are left alone."""
    if not Path(folder).is_dir():
        return
    for name in os.listdir(folder):
        if name.endswith(".tmp"):
            pid = name[: -len(".tmp")].rsplit(".", 1)[-1]
            if not (pid.isdigit() and pid_alive(int(pid))):
                (Path(folder) / name).unlink(missing_ok=True)


def signature(space):
    """What a buffer's files depend on: each space's kind, shape, dtype (and n); not its bounds, whose text form
    changes with numpy versions."""
    if isinstance(getattr(space, "spaces", None), dict):  # a Dict space
        return {k: signature(s) for k, s in space.spaces.items()}
    return f"{type(space).__name__} {tuple(space.shape)} {space.dtype}" + (
        f" n={space.n}" if hasattr(space, "n") else ""
    )


def check_spec(buffer_root, env_id, obs_space, action_space):
    """The first run of a buffer records its env id and spaces in spec.json; a process whose env differs is refused
    before it writes a file there (another env's files would break the run's loader and its --resume)."""
    spec = {"env_id": env_id, "observation_space": signature(obs_space), "action_space": signature(action_space)}
    path = Path(buffer_root) / "spec.json"
    if path.exists():
        held = json.loads(path.read_text())
        if held != spec:
            raise UserError(
                f"{buffer_root} holds data of env {held['env_id']} (observations {held['observation_space']}, "
                f"actions {held['action_space']}); this run's env is {env_id} (observations {spec['observation_space']}, "
                f"actions {spec['action_space']}): use another --run-name or --buffer-dir"
            )
        return
    write_atomic(path, lambda f: f.write(json.dumps(spec, indent=1).encode()))


_ignoring, _main_pid = None, None  # the process whose stop signals are ignored; the one that handles them


def ignore_stop_signals(main_pid=None, worker_id=None):
    """In a worker process (an async env's, a DataLoader's): leave Ctrl-C and SIGTERM to the main process, which stops
    at a consistent point, saves, and closes its workers. SIGINT is ignored. SIGTERM is taken from the process's
    signal mask by a thread and ends the worker only when it comes from the main process or the worker's parent (their
    exit-time clean-up terminates workers; ignoring that would hang the exit); a SIGTERM sent to the whole process
    group (kill -TERM -PGID, a scheduler, a terminal) is ignored: a DataLoader worker killed by it would make torch
    raise in the main process, in the middle of its final checkpoint. Called in every process forked after StopSignals
    (os.register_at_fork) and by DataLoader workers (worker_init_fn, which passes worker_id: their start method may
    not fork). Programs that a worker executes inherit SIGTERM blocked."""
    global _ignoring
    if not hasattr(signal, "sigwaitinfo") or _ignoring == os.getpid():  # macOS spawns workers with default handlers
        return
    _ignoring, senders = os.getpid(), {os.getppid(), main_pid or os.getppid()}
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread of the process
        pass
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # threads started later inherit the mask

    def wait():
        while True:
            if signal.sigwaitinfo({signal.SIGTERM}).si_pid in senders:
                os._exit(128 + signal.SIGTERM)

    threading.Thread(target=wait, daemon=True, name="sigterm-from-main").start()


class StopSignals:
    """Ctrl-C (SIGINT) and SIGTERM set a flag that the training loop checks between env steps and between updates, so
    it stops at a consistent point and saves a checkpoint. A second Ctrl-C stops at once (without saving). Processes
    forked afterwards (async env workers, DataLoader workers) leave both signals to the main process
    (ignore_stop_signals), which closes them: they neither die under it nor outlive it."""

    def __init__(self):
        self.signum, self.pid = 0, os.getpid()
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, self.handle)
        global _main_pid
        if _main_pid is None and hasattr(os, "register_at_fork"):  # once per process
            os.register_at_fork(after_in_child=lambda: ignore_stop_signals(_main_pid))
        _main_pid = self.pid

    def handle(self, signum, frame):
        if os.getpid() != self.pid:  # a forked worker, before ignore_stop_signals: the main process decides
            return
        if self.signum and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum
        again = " (Ctrl-C again: at once, without saving)" if signum == signal.SIGINT else ""
        print(f"\n{signal.Signals(signum).name}: stopping after this step, with a checkpoint{again}", file=sys.stderr)

    def __bool__(self):
        return self.signum != 0
