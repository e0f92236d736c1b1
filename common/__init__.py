"""Plumbing that a reader never needs to learn the algorithm: env wrappers, image backbones, optional GPU kernels,
batching, checkpoints, `module:name` hooks, run directories and logs, plots. Nothing here imports a script."""
