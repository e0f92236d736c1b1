"""AMAGO's benchmark environments as plain gymnasium envs.

Importing this package registers every id below, so any of them runs with
    python amago_agent.py --env-id envs:TMazePassive-v0
(gymnasium's `module:EnvId` form imports `envs` first). Entry points are strings, so a module's own optional
dependency (mujoco) is only imported when its env is made; popgym is imported here, where installed, to list its
games.
"""

import importlib.util

import gymnasium as gym

LOG_PREFIX = "AMAGO_LOG_METRIC"  # info keys starting with this are averaged and logged per env name at eval

_ENVS = {
    # memory (issue 4)
    "TMazePassive-v0": "envs.tmaze:TMaze",
    "TMazeActive-v0": ("envs.tmaze:TMaze", {"active": True}),
    "TMazePassive-H100-v0": ("envs.tmaze:TMaze", {"corridor_length": 100}),  # the stretch benchmark (memory.sh)
    # pixels (issue 3): 24x24 RGB frames, corridor 10; the dict version adds a state vector beside a (C, H, W) frame
    "PixelTMaze-v0": "envs.pixel_tmaze:PixelTMaze",
    "PixelTMazeDict-v0": ("envs.pixel_tmaze:PixelTMaze", {"dict_obs": True, "grayscale": True, "channels_first": True}),
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
    "MazeRunner-v0": "envs.mazerunner:MazeRunner",
    # AMAGO-2: hidden tasks that differ only by reward scale (issue 5)
    "MultiScaleBandit-v0": "envs.multiscale:MultiScale",
}

# POPGym: one id per popgym game, PopGym-<Game>-v0 (e.g. PopGym-RepeatPreviousEasy-v0), listed from popgym's own
# table, so only where popgym is installed (importing it takes ~10 ms)
if importlib.util.find_spec("popgym") is not None:
    from envs.popgym_env import popgym_games

    _ENVS.update({f"PopGym-{game}-v0": ("envs.popgym_env:POPGym", {"game": game}) for game in popgym_games()})

for _id, _entry in _ENVS.items():
    _ep, _kw = _entry if isinstance(_entry, tuple) else (_entry, {})
    if _id not in gym.registry:
        gym.register(_id, entry_point=_ep, kwargs=_kw)
