"""The flags' checks that tyro's types cannot express (ranges, orderings, combinations), with errors that name the
flag; the resolution of env ids (`LunarLander-v2` -> the newest registered version, `pkg.module:Env` imports); and a
run's saved flags, which `--resume --run-name NAME` restores."""

import ast
import contextlib
import dataclasses
import functools
import importlib
import inspect
import io
import json
import os
import re
import sys
import textwrap
import typing
from pathlib import Path

import gymnasium as gym
import tyro

from common.guards import UserError, user_error_hook
from common.rundir import signature, write_atomic

# --help shows the flags in these sections, in this order. Each is a run of the fields of Args, from the one named
# here to the next section's first: the scripts' Args are written in these runs, under a comment each.
SECTIONS = {
    "environment": "env_id",
    "memory": "traj_encoder",
    "networks": "tstep_hidden",
    "actor-critic": "gamma",
    "learning": "batches_per_epoch",
    "exploration": "exploration",
    "buffer": "buffer_dir",
    "evaluation": "eval_interval",
    "roles and phases": "mode",
    "run and logging": "exp_name",
}


def sections(cls):
    """{section: [its field names, in the order of cls]} for a dataclass written in SECTIONS' runs."""
    names = [f.name for f in dataclasses.fields(cls)]
    starts = sorted((names.index(first), title) for title, first in SECTIONS.items())
    if starts[0][0] != 0:
        raise ValueError(f"{cls.__name__}: its first field {names[0]!r} opens no section of SECTIONS")
    out = {title: [] for title in SECTIONS}
    for i, name in enumerate(names):
        out[[title for start, title in starts if start <= i][-1]].append(name)
    return out


def field_docs(cls):
    """{field: its docstring}: the string under each field of a dataclass, as tyro reads them for --help."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {
        a.target.id: b.value.value
        for a, b in zip(body, body[1:])
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
    }


@functools.cache
def in_sections(cls):
    """cls as a dataclass of one dataclass per section, with the same fields, defaults and docstrings: tyro draws a box
    per section in --help, and OmitArgPrefixes keeps each flag's name (--env-id, not --environment.env-id)."""
    types, docs = typing.get_type_hints(cls), field_docs(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    outer = []
    for title, names in sections(cls).items():
        inner = [
            (
                name,
                typing.Annotated[types[name], tyro.conf.arg(help=docs.get(name, ""))],  # a field of yours may have none
                dataclasses.field(default=fields[name].default),
            )
            for name in names
        ]
        section = dataclasses.make_dataclass(re.sub(r"\W", "_", title).title(), inner)
        outer.append(
            (
                re.sub(r"\W", "_", title),
                typing.Annotated[section, tyro.conf.arg(name=title)],
                dataclasses.field(default_factory=section),
            )
        )
    return tyro.conf.OmitArgPrefixes[dataclasses.make_dataclass(cls.__name__, outer)]


def parse_flags(cls, argv=None):
    """The command line -> the Args dataclass (tyro.cli, with --help in sections: `in_sections`). From here on a
    user's mistake (a UserError: a bad flag, env id or run) is reported as one line, `error: ...`, with exit status 2
    (common/guards.py), and so is a flag tyro refuses (it draws a box of several lines; --help is untouched)."""
    sys.excepthook = user_error_hook
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            parsed = tyro.cli(in_sections(cls), args=argv, description=inspect.cleandoc(cls.__doc__ or ""))
            args = cls(**{k: v for section in vars(parsed).values() for k, v in vars(section).items()})
    except SystemExit as e:
        if e.code != 2:  # --help
            sys.stderr.write(said.getvalue())
            raise
        lines = [line.strip(" │╭╮╰╯─-") for line in said.getvalue().splitlines()]
        why = " ".join(line for line in lines[1:] if line and not line.startswith("For full helptext"))  # [0]: title
        raise UserError(f"{why or lines[0]} ({sys.argv[0]} --help lists every flag)") from None
    sys.stderr.write(said.getvalue())  # tyro's warnings, if any
    cpu_launch_notice()
    return args


def cpu_launch_notice():
    """`accelerate launch --cpu --num_processes N` starts ONE process (accelerate's --cpu launcher ignores N, and the
    process is not told N): say so, and how to start N. Read from the launcher's command line (Linux's /proc)."""
    if os.environ.get("ACCELERATE_USE_CPU", "").lower() != "true" or "WORLD_SIZE" in os.environ:
        return
    try:
        launcher = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return
    asked = [
        a.split("=", 1)[1] if "=" in a else b
        for a, b in zip(launcher, launcher[1:] + [""])
        if a.split("=")[0] in ("--num_processes", "--num-processes")
    ]
    if asked and asked[0].isdigit() and int(asked[0]) > 1:
        n, script = asked[0], Path(sys.argv[0]).name
        print(
            f"note: accelerate launch --cpu starts one process, not {n} (its --cpu launcher ignores --num_processes);"
            f" for {n} processes on the CPU: torchrun --nproc_per_node {n} {script} ...",
            file=sys.stderr,
        )


def check_args(args):
    if args.resume and not args.run_name:
        raise UserError("--resume needs --run-name NAME: the run to continue (its folder under runs/)")
    positive = "total_timesteps num_envs max_seq_len timesteps_per_epoch batch_size n_step num_critics num_critics_td"
    positive += " d_model n_layers eval_episodes eval_max_steps buffer_max_size traj_save_len max_time_idx"
    positive += " batches_per_update"
    for name in positive.split():
        if getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in "start_learning_at_epoch start_collecting_at_epoch eps_anneal_steps".split():
        if getattr(args, name) < 0:
            raise UserError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if args.replay_ratio <= 0:
        raise UserError(f"--replay-ratio must be > 0 (timesteps trained per env step), got {args.replay_ratio}")
    if args.batches_per_epoch is not None and args.batches_per_epoch < 0:
        raise UserError(
            f"--batches-per-epoch must be >= 0 (or None: from --replay-ratio), got {args.batches_per_epoch}"
        )
    if args.eps_revisit_power < 0:
        raise UserError(f"--eps-revisit-power must be >= 0 (0: off), got {args.eps_revisit_power}")
    if not 0 <= args.eps_floor <= 1:
        raise UserError(f"--eps-floor must lie in [0, 1] (0: none), got {args.eps_floor}")
    if not 0 <= args.greedy_episodes <= 1:
        raise UserError(
            f"--greedy-episodes must lie in [0, 1] (the share of greedy episodes), got {args.greedy_episodes}"
        )
    if not 0 <= args.eps_scale_min < 1:
        raise UserError(f"--eps-scale-min must lie in [0, 1) (0: the scale is U[0,1)), got {args.eps_scale_min}")
    if not 0 <= args.gamma < 1 or not all(0 <= g < 1 for g in args.multigammas):
        raise UserError(f"discounts must lie in [0, 1): --gamma {args.gamma}, --multigammas {args.multigammas}")
    if args.traj_save_len < args.max_seq_len:
        raise UserError(f"--traj-save-len {args.traj_save_len} must be >= --max-seq-len {args.max_seq_len}")
    if args.window_size and not 1 <= args.window_size <= args.max_seq_len:
        raise UserError(
            f"--window-size {args.window_size} must lie in 1 .. --max-seq-len {args.max_seq_len} "
            "(0 or None: full causal attention)"
        )
    lo, hi = args.discrete_clip
    if not 0 <= lo < hi <= 1:
        raise UserError(f"--discrete-clip {args.discrete_clip} must satisfy 0 <= low < high <= 1")
    for name, kinds in (("traj_encoder", "ff gru transformer mamba"), ("tstep_encoder", "auto ff cnn")):
        value = getattr(args, name)
        if value not in kinds.split() and ":" not in value:
            raise UserError(f"--{name.replace('_', '-')} {value!r}: choose {', '.join(kinds.split())}, or module:f")
    if args.traj_encoder == "transformer" and (args.d_model % args.n_heads or args.d_model % 2):
        raise UserError(f"--d-model {args.d_model} must be even and divisible by --n-heads {args.n_heads}")
    if not 0 <= args.aug_frac <= 1 or args.aug_pad < 0:
        raise UserError(f"--aug-frac must lie in [0, 1] and --aug-pad be >= 0, got {args.aug_frac} and {args.aug_pad}")
    if args.cnn == "impala" and any(d % 4 for d in args.cnn_channels or ()):  # the defaults pass
        raise UserError(
            f"--cnn impala: every --cnn-channels width must be divisible by 4 (GroupNorm(4)), got {args.cnn_channels}"
        )
    layers = len(args.cnn_channels) if args.cnn_channels else 3  # the scripts' default nature stack: 3 convs
    if args.cnn == "nature" and any(v and len(v) != layers for v in (args.cnn_kernels, args.cnn_strides)):
        raise UserError(
            f"--cnn nature: --cnn-channels {args.cnn_channels or 'default (3 convs)'}, --cnn-kernels "
            f"{args.cnn_kernels} and --cnn-strides {args.cnn_strides} must have one entry per conv layer"
        )
    if args.max_steps_per_update is not None and args.max_steps_per_update <= 0:
        raise UserError(f"--max-steps-per-update must be > 0 (or None: no cap), got {args.max_steps_per_update}")
    if (args.load_from or args.save_trajs_to) and not args.eval_only:
        raise UserError("--load-from and --save-trajs-to go with --eval-only")
    if args.eval_only and args.mode != "both":
        raise UserError(f"--eval-only evaluates in one process: leave --mode at both (got {args.mode})")
    if args.env_mode == "already_vectorized" and "," in args.env_id + (args.eval_env_id or ""):
        raise UserError(f"--env-mode already_vectorized takes one env id, got {args.env_id!r} / {args.eval_env_id!r}")
    if args.capture_video:  # an optional package (not in requirements.txt): named before anything runs
        try:
            import moviepy  # noqa: F401
        except ImportError:
            raise UserError(
                "--capture-video needs moviepy, which writes the mp4 files: `pip install moviepy`"
            ) from None
    if hasattr(args, "num_bins"):  # amago_multitask.py's two-hot critic and its actor
        if args.num_bins < 2:
            raise UserError(f"--num-bins must be >= 2, got {args.num_bins}")
        if args.num_actions_value < 1:
            raise UserError(f"--num-actions-value must be >= 1, got {args.num_actions_value}")
        if args.gumbel_temperature <= 0:
            raise UserError(f"--gumbel-temperature must be > 0, got {args.gumbel_temperature}")
        if not args.return_range[0] < args.return_range[1]:
            raise UserError(f"--return-range {args.return_range} must be (min, max) with min < max")


_resolved = {}  # env id -> registered id, so that each notice prints once per process


def resolve_env_id(env_id: str) -> str:
    """Import `pkg.module:` ids first; an id that is not registered (e.g. LunarLander-v2 on gymnasium 1.x, or a bare
    name) resolves to the newest registered version of the same name, with a one-line notice."""
    if env_id in _resolved:
        return _resolved[env_id]
    given = env_id
    if ":" in env_id:
        module, env_id = env_id.split(":", 1)
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise UserError(f"--env-id {module}:{env_id}: cannot import {module!r} ({e})") from None
    if env_id not in gym.registry:
        ns, name, _ = gym.envs.registration.parse_env_id(env_id)
        newest = gym.envs.registration.find_highest_version(ns, name)
        if newest is None:
            try:
                gym.spec(env_id)  # gymnasium's own error, with its "did you mean" suggestion
            except gym.error.Error as e:
                hint = "" if ":" in given else f" (your own env: `package.module:{env_id}` imports it first)"
                raise UserError(f"--env-id {given!r}: {e}{hint}") from None
        new_id = gym.envs.registration.get_env_id(ns, name, newest)
        print(f"note: {env_id} is not registered in gymnasium {gym.__version__}; using {new_id}")
        env_id = new_id
    _resolved[given] = env_id
    return env_id


def resolve_env_ids(args):
    """--env-id and --eval-env-id: comma-separated ids (actors take them round-robin), each resolved like one id. All
    envs of a run share one agent and one buffer, so their observation and action spaces must match (kind, shape,
    dtype, as a buffer's spec.json records them). -> (training ids, evaluation ids), comma-separated."""
    train = [resolve_env_id(e.strip()) for e in args.env_id.split(",")]
    val = [resolve_env_id(e.strip()) for e in (args.eval_env_id or args.env_id).split(",")]
    ids = list(dict.fromkeys(train + val))
    if len(ids) > 1:
        spaces = {}
        for env_id in ids:
            env = gym.make(env_id)
            spaces[env_id] = (signature(env.observation_space), signature(env.action_space))
            env.close()
            if spaces[env_id] != spaces[ids[0]]:
                raise UserError(
                    f"envs {ids[0]} and {env_id} differ in their spaces ({spaces[ids[0]]} vs {spaces[env_id]}): "
                    "the envs of one run (--env-id, --eval-env-id) must share observation and action spaces"
                )
    return ",".join(val if args.eval_only else train), ",".join(val)  # --eval-only: the "training" envs record video


# flags that only some agents read: name -> (what reads it, whether this agent does: f(args, action kind, uses a CNN))
READ_BY = {
    "discrete_clip": ("Discrete actions", lambda a, kind, cnn: kind == "discrete"),
    "gumbel_temperature": ("Discrete actions", lambda a, kind, cnn: kind == "discrete"),
    **{
        name: ("--traj-encoder transformer", lambda a, kind, cnn: a.traj_encoder == "transformer")
        for name in "n_heads d_ff dropout window_size pos_emb max_time_idx".split()
    },
    "d_state": ("--traj-encoder mamba", lambda a, kind, cnn: a.traj_encoder == "mamba"),
    **{
        name: ("--exploration bilevel", lambda a, kind, cnn: a.exploration == "bilevel")
        for name in "bilevel_horizon bilevel_eps_end".split()
    },
    **{
        name: ("image observations (a CNN timestep encoder)", lambda a, kind, cnn: cnn)
        for name in "cnn cnn_channels cnn_kernels cnn_strides image_layout aug_frac aug_pad".split()
    },
}


def note_unread_flags(args, argv, kind, cnn):
    """One line per flag given on the command line that this agent does not read (e.g. --discrete-clip with Box
    actions, --n-heads with a GRU): a run trains without it, which a user should know before reading its results."""
    for name in sorted(given_flags(argv) & READ_BY.keys()):
        reader, reads = READ_BY[name]
        if hasattr(args, name) and not reads(args, kind, cnn):
            print(
                f"note: --{name.replace('_', '-')} is read only with {reader}; this run ({kind} actions, "
                f"--traj-encoder {args.traj_encoder}) does not use it"
            )


# ---------------------------------------------- a run's flags, for --resume ----------------------------------------------
FLAGS_FILE = "flags.json"  # in runs/<run_name>/
# what a resumed run cannot change: its env, the shapes of its weights and buffer files, its discounts, its seeds, and
# where its data lives. Any other flag given with --resume (run length, evaluation, logging, schedule) is applied.
FIXED_ON_RESUME = set(
    """env_id eval_env_id env_mode num_envs seed max_seq_len traj_encoder d_model n_layers n_heads d_ff window_size
    pos_emb max_time_idx d_state tstep_encoder tstep_hidden tstep_dim cnn cnn_channels cnn_kernels cnn_strides
    image_layout actor_hidden critic_hidden num_critics gamma multigammas hide_rl2 popart num_bins return_range
    buffer_dir dset_name file_format exp_name""".split()
)
PER_INVOCATION = {"resume", "run_name", "eval_only", "load_from", "save_trajs_to", "mode"}  # never saved or restored


def save_flags(run_dir, args):
    """Writes the run's flags (as given, before env ids are resolved) to runs/<run>/flags.json, atomically."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    flags = {k: v for k, v in vars(args).items() if k not in PER_INVOCATION}
    write_atomic(run_dir / FLAGS_FILE, lambda f: f.write(json.dumps(flags, indent=1).encode()))


def given_flags(argv):
    """The Args field names that a command line sets (`--name v`, `--name=v`, `--flag`, `--no-flag`)."""
    names = {a[2:].split("=", 1)[0].replace("-", "_") for a in argv if a.startswith("--")}
    return names | {n[3:] for n in names if n.startswith("no_")}


def restore_flags(args, run_dir, argv):
    """--resume --run-name NAME: every flag not given on the command line takes the run's saved value. A given flag
    that differs from it is refused, naming both values, when it is FIXED_ON_RESUME, and applied with a note
    otherwise; a collector (--mode collect) keeps its own --seed. Without flags.json, a run that has a checkpoint (one
    saved before flags.json existed) keeps the flags given; one that has none but whose buffer holds files (a run
    folder deleted by hand) is refused: its model would be rebuilt from the default flags."""
    path = Path(run_dir) / FLAGS_FILE
    if not path.exists():
        fifo = Path(args.buffer_dir) / (args.dset_name or Path(run_dir).name) / "fifo"
        files = len(list(fifo.glob("*.npz"))) if fifo.is_dir() else 0
        if files and not (Path(run_dir) / "checkpoint.pt").exists():
            raise UserError(
                f"--resume: {path} is missing (was the run folder deleted?), so the run's flags and model cannot be "
                f"restored, though {fifo.parent} holds {files:,} of its trajectory files. To train a new agent on "
                f"that data: a new --run-name with --dset-name {Path(run_dir).name}; to start {Path(run_dir).name} "
                f"over: delete {run_dir} and {fifo.parent} (nothing was changed)"
            )
        return args
    saved, given = json.loads(path.read_text()), given_flags(argv)
    fixed = FIXED_ON_RESUME - {"seed"} if args.mode == "collect" else FIXED_ON_RESUME  # a collector's seed is its own
    canon = lambda name, v: ",".join(map(resolve_env_id, v.split(","))) if name.endswith("env_id") and v else v
    for name, value in saved.items():
        if not hasattr(args, name):
            continue
        value = tuple(value) if isinstance(value, list) else value
        now = getattr(args, name)
        if name not in given:
            setattr(args, name, value)
        elif canon(name, now) != canon(name, value):
            flag = "--" + name.replace("_", "-")
            if name in fixed:
                raise UserError(
                    f"--resume: {flag} {now} differs from run {Path(run_dir).name}'s {value} ({path}): a resumed run "
                    f"keeps its env, model sizes, discounts and seed; leave {flag} out, or start a new --run-name"
                )
            print(f"note: --resume with {flag} {now} (the run had {value})")
    return args
