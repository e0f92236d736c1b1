"""BabyAI (Chevalier-Boisvert et al., 2019) as a multi-task set: every reset draws a level and a fresh layout, and the
agent reads the mission as tokens (the reference's multi-task BabyAI: amago/envs/builtin/babyai.py).

    python amago_multitask.py --env-id envs:BabyAI-MT-Easy-v0 --max-seq-len 64

What the agent sees (a Dict):
- "grid": the 7 x 7 partial view, minigrid's (object, color, state) code per cell, flattened to (147,) uint8 (small
  integer codes, not pixels: flat, so the MLP timestep encoder reads it);
- "mission": the mission text as MISSION_LEN int tokens from the fixed vocabulary WORDS (0: padding, 1: a word not
  in WORDS), e.g. "go to the red ball" -> [go, to, the, red, ball, 0, ...]; `decode_mission` inverts it;
- "direction": the agent's heading, one-hot (4,).
Actions: minigrid's 7. Reward: minigrid's (1 - 0.9 t / max_steps on success, else 0). An episode ends as minigrid
ends it (success or a wrong done: terminated; max_steps: truncated). The env's name is the level's
(`BabyAI-GoToObj`), and every episode end reports `info[f"{LOG_PREFIX} success"]`, so eval success is split per level.
Needs `pip install minigrid`.
"""

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX, require

# every word of BabyAI's mission grammar (minigrid/envs/babyai/core/verifier.py), "," split off as its own word
WORDS = (
    "a", "after", "and", "ball", "behind", "blue", "box", "door", "front", "go", "green", "grey", "in", "key", "left",
    "next", "object", "of", "on", "open", "pick", "purple", "put", "red", "right", "the", "then", "to", "up", "yellow",
    "you", "your", ",",
)  # fmt: skip
MISSION_LEN = 24  # tokens; the longest missions (sequences of two instructions) have ~20 words
# easy single-room levels for a CPU-sized run; the larger set spans rooms, doors and keys
EASY = ("GoToRedBallNoDists", "GoToObj")
LEVELS = ("GoToRedBallNoDists", "GoToObj", "GoToRedBall", "GoToLocal", "PickupLoc", "OpenDoor", "GoToDoor", "Unlock")


def encode_mission(text: str) -> np.ndarray:
    ids = [WORDS.index(w) + 2 if w in WORDS else 1 for w in text.replace(",", " , ").split()]
    if len(ids) > MISSION_LEN:
        raise ValueError(f"mission {text!r} has {len(ids)} words; at most MISSION_LEN={MISSION_LEN} fit")
    return np.array(ids + [0] * (MISSION_LEN - len(ids)), np.int64)


def decode_mission(tokens) -> str:
    words = [WORDS[t - 2] if t >= 2 else "<unk>" for t in np.asarray(tokens) if t != 0]
    return " ".join(words).replace(" ,", ",")


class BabyAI(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, levels=EASY):
        require("minigrid", "minigrid")  # importing it registers the BabyAI-* ids
        if isinstance(levels, str):
            levels = (levels,)
        for lvl in levels:
            if f"BabyAI-{lvl}-v0" not in gym.registry:
                known = sorted(k[7:-3] for k in gym.registry if k.startswith("BabyAI-"))
                raise ValueError(f"unknown BabyAI level {lvl!r}; accepted: {', '.join(known)}")
        self.levels = tuple(levels)
        self.envs = {lvl: gym.make(f"BabyAI-{lvl}-v0").unwrapped for lvl in self.levels}  # (no passive checker)
        self.level = self.levels[0]
        self.env_name = f"BabyAI-{self.level}"
        self.observation_space = gym.spaces.Dict(
            {
                "grid": gym.spaces.Box(0, 10, (7 * 7 * 3,), np.uint8),  # minigrid's codes: object <= 10, color, state
                "mission": gym.spaces.Box(0, len(WORDS) + 1, (MISSION_LEN,), np.int64),
                "direction": gym.spaces.Box(0, 1, (4,), np.float32),
            }
        )
        self.action_space = gym.spaces.Discrete(7)

    def _obs(self, raw):
        return {
            "grid": raw["image"].reshape(-1).astype(np.uint8),
            "mission": self.mission,
            "direction": np.eye(4, dtype=np.float32)[raw["direction"]],
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.level = self.levels[int(self.np_random.integers(len(self.levels)))]
        self.env_name, self.env = f"BabyAI-{self.level}", self.envs[self.level]
        raw, _ = self.env.reset(seed=int(self.np_random.integers(2**31)))  # a fresh layout from our generator
        self.mission = encode_mission(raw["mission"])
        return self._obs(raw), {}

    def step(self, action):
        raw, reward, terminated, truncated, _ = self.env.step(int(action))
        info = {f"{LOG_PREFIX} success": float(reward > 0)} if terminated or truncated else {}
        return self._obs(raw), float(reward), bool(terminated), bool(truncated), info
