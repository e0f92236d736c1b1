"""Checks of the flags that tyro's types cannot express (ranges, orderings), with errors that name the flag."""


def check_args(args):
    from common.scale import check_scale_args

    check_scale_args(args)
    positive = "total_timesteps num_envs max_seq_len timesteps_per_epoch batch_size n_step num_critics num_critics_td"
    positive += " d_model n_layers eval_episodes eval_max_steps buffer_max_size traj_save_len max_time_idx"
    for name in positive.split():
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
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
    if hasattr(args, "num_bins"):  # amago_multitask.py's two-hot critic and its actor
        if args.num_bins < 2:
            raise ValueError(f"--num-bins must be >= 2, got {args.num_bins}")
        if args.num_actions_value < 1:
            raise ValueError(f"--num-actions-value must be >= 1, got {args.num_actions_value}")
        if args.gumbel_temperature <= 0:
            raise ValueError(f"--gumbel-temperature must be > 0, got {args.gumbel_temperature}")
        if not args.return_range[0] < args.return_range[1]:
            raise ValueError(f"--return-range {args.return_range} must be (min, max) with min < max")
