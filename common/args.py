"""The flags' checks that tyro's types cannot express (ranges, orderings, combinations), with errors that name the
flag, and the resolution of env ids (`LunarLander-v2` -> the newest registered version, `pkg.module:Env` imports)."""

import importlib

import gymnasium as gym

from common.rundir import signature


def check_args(args):
    positive = "total_timesteps num_envs max_seq_len timesteps_per_epoch batch_size n_step num_critics num_critics_td"
    positive += " d_model n_layers eval_episodes eval_max_steps buffer_max_size traj_save_len max_time_idx"
    positive += " batches_per_update"
    for name in positive.split():
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in "start_learning_at_epoch start_collecting_at_epoch eps_anneal_steps".split():
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if not 0 <= args.gamma < 1 or not all(0 <= g < 1 for g in args.multigammas):
        raise ValueError(f"discounts must lie in [0, 1): --gamma {args.gamma}, --multigammas {args.multigammas}")
    if args.traj_save_len < args.max_seq_len:
        raise ValueError(f"--traj-save-len {args.traj_save_len} must be >= --max-seq-len {args.max_seq_len}")
    if args.window_size and not 1 <= args.window_size <= args.max_seq_len:
        raise ValueError(
            f"--window-size {args.window_size} must lie in 1 .. --max-seq-len {args.max_seq_len} "
            "(0 or None: full causal attention)"
        )
    lo, hi = args.discrete_clip
    if not 0 <= lo < hi <= 1:
        raise ValueError(f"--discrete-clip {args.discrete_clip} must satisfy 0 <= low < high <= 1")
    if args.max_steps_per_update is not None and args.max_steps_per_update <= 0:
        raise ValueError(f"--max-steps-per-update must be > 0 (or None: no cap), got {args.max_steps_per_update}")
    if (args.load_from or args.save_trajs_to) and not args.eval_only:
        raise ValueError("--load-from and --save-trajs-to go with --eval-only")
    if args.eval_only and args.mode != "both":
        raise ValueError(f"--eval-only evaluates in one process: leave --mode at both (got {args.mode})")
    if args.env_mode == "already_vectorized" and "," in args.env_id + (args.eval_env_id or ""):
        raise ValueError(f"--env-mode already_vectorized takes one env id, got {args.env_id!r} / {args.eval_env_id!r}")
    if hasattr(args, "num_bins"):  # amago_multitask.py's two-hot critic and its actor
        if args.num_bins < 2:
            raise ValueError(f"--num-bins must be >= 2, got {args.num_bins}")
        if args.num_actions_value < 1:
            raise ValueError(f"--num-actions-value must be >= 1, got {args.num_actions_value}")
        if args.gumbel_temperature <= 0:
            raise ValueError(f"--gumbel-temperature must be > 0, got {args.gumbel_temperature}")
        if not args.return_range[0] < args.return_range[1]:
            raise ValueError(f"--return-range {args.return_range} must be (min, max) with min < max")


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
            raise ValueError(f"--env-id {module}:{env_id}: cannot import {module!r} ({e})") from None
    if env_id not in gym.registry:
        ns, name, _ = gym.envs.registration.parse_env_id(env_id)
        newest = gym.envs.registration.find_highest_version(ns, name)
        if newest is None:
            try:
                gym.spec(env_id)  # gymnasium's own error, with its "did you mean" suggestion
            except gym.error.Error as e:
                raise type(e)(
                    f"--env-id {env_id!r}: {e} (your own env: `package.module:{env_id}` imports it first)"
                ) from None
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
                raise ValueError(
                    f"envs {ids[0]} and {env_id} differ in their spaces ({spaces[ids[0]]} vs {spaces[env_id]}): "
                    "the envs of one run (--env-id, --eval-env-id) must share observation and action spaces"
                )
    return ",".join(val if args.eval_only else train), ",".join(val)  # --eval-only: the "training" envs record video
