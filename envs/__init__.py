"""AMAGO's benchmark environments as plain gymnasium envs.

Importing this package registers every id below, so any of them runs with
    python amago_agent.py --env-id envs:TMazePassive-v0
(gymnasium's `module:EnvId` form imports `envs` first). Entry points are strings, so a module's own optional
dependency (mujoco) is only imported when its env is made; popgym is imported here, where installed, to list its
games. The benchmark suites (DMC-*, Atari-*, BabyAI-*, Procgen-*, MetaWorld-*, XLand-*) import their packages
(requirements-suites.txt) through `require` when an env is made, so a missing one is an error naming its install line.
"""

import importlib.util

import gymnasium as gym

LOG_PREFIX = "AMAGO_LOG_METRIC"  # info keys starting with this are averaged and logged per env name at eval
# HalfCheetah-Vel's evaluation set: the midpoints of 8 equal bins of [0, 3]. A velocity-blind policy's best error on it
# is exactly the uniform task's, 0.75 (any speed in [1.3125, 1.6875])
EVEN_TARGETS = tuple(3.0 * (i + 0.5) / 8 for i in range(8))


def require(module: str, pip_name: str):
    """Import a benchmark suite's own package when its env is made, with the install line as the error."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"this environment needs {module!r} ({e}): run `pip install {pip_name}`") from e


_ENVS = {
    # memory
    "TMazePassive-v0": "envs.tmaze:TMaze",
    "TMazeActive-v0": ("envs.tmaze:TMaze", {"active": True}),
    "TMazePassive-H100-v0": ("envs.tmaze:TMaze", {"corridor_length": 100}),  # the stretch benchmark (memory.sh)
    "TMazePassive-H500-v0": ("envs.tmaze:TMaze", {"corridor_length": 500}),  # long context on a CPU (memory.sh)
    # pixels: 24x24 RGB frames, corridor 10; the dict version adds a state vector beside a (C, H, W) frame
    "PixelTMaze-v0": "envs.pixel_tmaze:PixelTMaze",
    "PixelTMazeDict-v0": ("envs.pixel_tmaze:PixelTMaze", {"dict_obs": True, "grayscale": True, "channels_first": True}),
    # the same maze in other frame sizes: the default CNN's cost by frame size (benchmarks/speed.py)
    **{f"PixelTMaze-{px}px-v0": ("envs.pixel_tmaze:PixelTMaze", {"size": px}) for px in (16, 48, 84)},
    # meta-RL / in-context RL
    "MetaFrozenLake-v0": "envs.frozen_lake:MetaFrozenLake",
    # the attempt index hidden (only the reset flag), so that a memory-free policy cannot act per attempt (memory.sh)
    "MetaFrozenLake-HideK-v0": ("envs.frozen_lake:MetaFrozenLake", {"show_attempt": False}),
    "DarkKeyDoor-v0": "envs.key_door:RoomKeyDoor",
    "LightKeyDoor-v0": ("envs.key_door:RoomKeyDoor", {"light_room": True}),
    # the CPU benchmark's size (benchmarks/memory.sh): 5x5 room, 20-step attempts, 200-step rollouts
    "DarkKeyDoor-5x5-v0": ("envs.key_door:RoomKeyDoor", {"room_size": 5, "episode_length": 20, "meta_horizon": 200}),
    "LightKeyDoor-5x5-v0": (
        "envs.key_door:RoomKeyDoor",
        {"room_size": 5, "episode_length": 20, "meta_horizon": 200, "light_room": True},
    ),
    "HalfCheetahVel-v0": "envs.half_cheetah_vel:HalfCheetahVel",
    # its evaluation set: 8 fixed targets (EVEN_TARGETS), one per actor of an 8-actor evaluation
    "HalfCheetahVel-Even8-v0": ("envs.half_cheetah_vel:HalfCheetahVel", {"targets": EVEN_TARGETS}),
    # sparse-reward meta-RL with Box actions: a goal hidden on a half circle, 3 attempts of 60 steps
    "SparsePointRobot-v0": "envs.point_robot:SparsePointRobot",
    "MazeRunner-v0": "envs.mazerunner:MazeRunner",
    # AMAGO-2: hidden tasks that differ only by reward scale
    "MultiScaleBandit-v0": "envs.multiscale:MultiScale",
    **{  # one scale each, the same spaces: the envs of one multi-env run (benchmarks/multienv.sh)
        f"MultiScaleBandit-x{s:g}-v0": ("envs.multiscale:MultiScale", {"scales": (s,), "max_scale": 100.0})
        for s in (1.0, 10.0, 100.0)
    },
    # benchmark suites, each with its own package (imported when the env is made; the error names the pip line)
    "DMC-cheetah-run-v0": ("envs.dmc:DMControl", {"domain": "cheetah", "task": "run"}),
    "DMC-walker-walk-v0": ("envs.dmc:DMControl", {"domain": "walker", "task": "walk"}),
    "DMC-cartpole-swingup-v0": ("envs.dmc:DMControl", {"domain": "cartpole", "task": "swingup"}),
    "Atari-MultiGame-v0": ("envs.atari:Atari", {"games": ("Pong", "Boxing", "Breakout", "Gopher", "MsPacman")}),
    "BabyAI-MT-Easy-v0": ("envs.babyai:BabyAI", {"levels": ("GoToRedBallNoDists", "GoToObj")}),
    "BabyAI-MT-v0": (
        "envs.babyai:BabyAI",
        {"levels": ("GoToRedBallNoDists", "GoToObj", "GoToRedBall", "GoToLocal", "PickupLoc", "OpenDoor", "GoToDoor")},
    ),
    # Procgen: two attempts per level; the six games with a "memory" mode, and five "easy" platformers
    "Procgen-Memory-TwoShot-v0": (
        "envs.procgen_env:Procgen",
        {"games": ("dodgeball", "caveflyer", "heist", "jumper", "maze", "miner"), "mode": "memory"},
    ),
    "Procgen-Easy-TwoShot-v0": (
        "envs.procgen_env:Procgen",
        {"games": ("climber", "coinrun", "jumper", "ninja", "leaper"), "mode": "easy"},
    ),
    "Procgen-Maze-TwoShot-v0": ("envs.procgen_env:Procgen", {"games": ("maze",), "mode": "memory"}),
    # Meta-World: 3 attempts per task; ML1 per task family, ML10 / ML45 train and held-out test families
    "MetaWorld-ML10-Train-v0": ("envs.metaworld_env:MetaWorld", {"name": "ml10", "split": "train"}),
    "MetaWorld-ML10-Test-v0": ("envs.metaworld_env:MetaWorld", {"name": "ml10", "split": "test"}),
    "MetaWorld-ML45-Train-v0": ("envs.metaworld_env:MetaWorld", {"name": "ml45", "split": "train"}),
    "MetaWorld-ML45-Test-v0": ("envs.metaworld_env:MetaWorld", {"name": "ml45", "split": "test"}),
}
for _game in ("Pong", "Breakout", "Boxing", "Gopher", "MsPacman", "SpaceInvaders", "Qbert", "Seaquest"):
    _ENVS[f"Atari-{_game}-v0"] = ("envs.atari:Atari", {"games": (_game,)})
for _task in ("reach", "push", "pick-place", "door-open", "drawer-close", "button-press"):
    for _split in ("train", "test"):  # ML1: the same family, 50 train goals and 50 other test goals
        _name = f"MetaWorld-ML1-{_task}" + ("-Test" if _split == "test" else "")
        _ENVS[f"{_name}-v0"] = ("envs.metaworld_env:MetaWorld", {"name": f"{_task}-v3", "split": _split})
# ML1 reach with attempts of 50 steps (a straight reach fits in one): 3 attempts fit a 150-step context, so the
# agent can remember where the previous attempts found the goal; the CPU recipe metaworld_reach50_cpu uses it
_ENVS["MetaWorld-ML1-reach-Steps50-v0"] = ("envs.metaworld_env:MetaWorld", {"name": "reach-v3", "max_steps": 50})
# ... and with the puck left out of the observation (the hand and gripper only): each of ML1's 50 train goals comes
# with its own puck position, so the puck names the goal from the first step; without it, only search finds the goal.
# Steps40 and Steps30: a drive aimed at the goal reaches all 50 train goals in 40 steps and 40 in 30, a search of
# this attempt's rewards 32 and 6 (benchmarks/probes/metaworld_probe.py --ceiling --steps N: `aim`, `search`), so
# remembering the goal is worth more in shorter attempts
for _steps in (50, 40, 30):
    for _split in ("train", "test"):
        _name = f"MetaWorld-ML1-reach-Steps{_steps}-NoPuck" + ("-Test" if _split == "test" else "")
        _ENVS[f"{_name}-v0"] = (
            "envs.metaworld_env:MetaWorld",
            {"name": "reach-v3", "split": _split, "max_steps": _steps, "hide_objects": True},
        )
# ... with +10 reward per step within the 5-cm success radius (why: envs/metaworld_env.py, `success_bonus`)
for _split in ("train", "test"):
    _ENVS["MetaWorld-ML1-reach-Steps30-NoPuck-Bonus" + ("-Test" if _split == "test" else "") + "-v0"] = (
        "envs.metaworld_env:MetaWorld",
        {"name": "reach-v3", "split": _split, "max_steps": 30, "hide_objects": True, "success_bonus": 10.0},
    )
# ... and with a sparse reward: 1 per step within the 5-cm success radius, 0 elsewhere (envs/metaworld_env.py, `sparse`)
for _split in ("train", "test"):
    _ENVS["MetaWorld-ML1-reach-Steps50-NoPuck-Sparse" + ("-Test" if _split == "test" else "") + "-v0"] = (
        "envs.metaworld_env:MetaWorld",
        {"name": "reach-v3", "split": _split, "max_steps": 50, "hide_objects": True, "sparse": True},
    )
    # ... and 1 - d / 10 cm within 10 cm of the goal, which exploration by noise finds (`reward_radius`)
    _ENVS["MetaWorld-ML1-reach-Steps50-NoPuck-Sparse10cm" + ("-Test" if _split == "test" else "") + "-v0"] = (
        "envs.metaworld_env:MetaWorld",
        {"name": "reach-v3", "split": _split, "max_steps": 50, "hide_objects": True, "reward_radius": 0.1},
    )

# POPGym: one id per popgym game, PopGym-<Game>-v0 (e.g. PopGym-RepeatPreviousEasy-v0), listed from popgym's own
# table, so only where popgym is installed (importing it takes ~10 ms)
if importlib.util.find_spec("popgym") is not None:
    from envs.popgym_env import popgym_games

    _ENVS.update({f"PopGym-{game}-v0": ("envs.popgym_env:POPGym", {"game": game}) for game in popgym_games()})

for _id, _entry in _ENVS.items():
    _ep, _kw = _entry if isinstance(_entry, tuple) else (_entry, {})
    if _id not in gym.registry:
        gym.register(_id, entry_point=_ep, kwargs=_kw)

# XLand-MiniGrid: jax, all actors in one env (`--env-mode already_vectorized`); a room size per id, 4 attempts per
# ruleset (envs/xland.py)
for _grid in ("R1-9x9", "R1-13x13", "R4-13x13"):
    if f"XLand-Trivial-{_grid}-v0" not in gym.registry:
        gym.register(f"XLand-Trivial-{_grid}-v0", vector_entry_point="envs.xland:XLandVecEnv", kwargs={"grid": _grid})
