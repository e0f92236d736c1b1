"""Infrastructure of amago-clean's scripts that decides nothing about what the agent learns: flag checks and env-id
resolution, run logs, checkpoint files, run folders and locks, input guards, the evaluation loop, learner/collector
roles and their launcher, optional GPU kernel adapters. Nothing here imports a script."""

AMAGO_CLEAN = True  # the scripts check it, so that a user's own package named `common` cannot stand in silently
