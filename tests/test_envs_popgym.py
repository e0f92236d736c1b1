"""POPGym through envs.popgym_env: every game passes the env checker, observations become one-hot vectors with a
timer, MultiDiscrete actions are raveled, and time-limit truncation ends the episode as a termination; the memoryless
bar (benchmarks/probes/popgym_memoryless.py) scores answers as the games do."""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from conftest import INF_BOUNDS, check_strict, needs_popgym, record, same

import envs  # noqa: F401  (registers the ids)

ROOT = Path(__file__).resolve().parents[1]


@needs_popgym
def test_popgym_every_game_passes_the_env_checker():
    from envs.popgym_env import POPGym, popgym_games

    games = sorted(popgym_games())
    assert len(games) >= 39 and "RepeatPreviousEasy" in games
    for game in games:
        ignore = []
        if game.startswith("VelocityOnlyCartpole"):  # popgym's own observation space is unbounded
            ignore.append(INF_BOUNDS)
        if "Pendulum" in game:  # popgym's own torque space is [-2, 2]; AmagoEnv rescales Box actions to [-1, 1]
            ignore.append(".*symmetric and normalized space")
        check_strict(POPGym(game), ignore)


@needs_popgym
def test_popgym_one_hot_observations_and_timer():
    import popgym.envs

    from envs.popgym_env import POPGym

    env, raw = POPGym("RepeatPreviousEasy"), popgym.envs.RepeatPreviousEasy()
    assert env.observation_space.shape == (4 + 1,)  # Discrete(4) card suit one-hot + timer
    obs, _ = env.reset(seed=3)
    raw_obs, _ = raw.reset(seed=3)
    for t in range(1, 30):
        assert obs.dtype == np.float32 and obs[:4].sum() == 1 and obs[raw_obs] == 1  # the suit, one-hot
        assert obs[4] == np.float32((t - 1) / 1000)
        a = t % 4
        obs, r, *_ = env.step(a)
        raw_obs, raw_r, *_ = raw.step(a)
        assert r == raw_r
    # Tuple(Discrete(2), Discrete(4)): both parts one-hot, then the timer
    auto = POPGym("popgym-AutoencodeEasy-v0")
    obs, _ = auto.reset(seed=0)
    assert obs.shape == (2 + 4 + 1,) and obs[:2].sum() == 1 and obs[2:6].sum() == 1 and obs[6] == 0
    # MultiDiscrete([2, 2]): one one-hot slot per component
    count = POPGym("CountRecallEasy")
    assert count.observation_space.shape == (2 + 2 + 1,)
    assert count.reset(seed=0)[0][:4].sum() == 2


@needs_popgym
def test_popgym_multidiscrete_actions_are_raveled():
    from envs.popgym_env import POPGym

    env = POPGym("BattleshipEasy")  # shoot at a cell of an 8 x 8 board
    assert env.action_space == gym.spaces.Discrete(64)
    env.reset(seed=0)
    sent, inner_step = [], env.env.step
    env.env.step = lambda a: (sent.append(tuple(int(x) for x in a)), inner_step(a))[1]
    env.step(19)
    env.step(63)
    assert sent == [(2, 3), (7, 7)]  # row-major: 19 = 2 * 8 + 3


@needs_popgym
def test_popgym_time_limit_truncation_is_terminal():
    import popgym.envs

    from envs.popgym_env import POPGym

    env, raw = POPGym("MultiarmedBanditEasy"), popgym.envs.MultiarmedBanditEasy()  # only ever ends by truncation
    env.reset(seed=0)
    raw.reset(seed=0)
    for t in itertools.count(1):  # noqa: B007
        _, _, term, trunc, _ = env.step(0)
        _, _, raw_term, raw_trunc, _ = raw.step(0)
        assert (term, trunc) == (raw_trunc, raw_trunc) and not raw_term  # truncated -> terminated as well
        if trunc:
            break
    assert t == 200


@needs_popgym
@pytest.mark.parametrize("game", ["RepeatPreviousEasy", "BattleshipEasy", "PositionOnlyCartPoleEasy"])
def test_popgym_is_deterministic_under_a_seed(game):
    from envs.popgym_env import POPGym

    acts = np.random.default_rng(0).integers(0, POPGym(game).action_space.n, 60)
    a, b, c = (record(POPGym(game), seed, acts) for seed in (5, 5, 6))
    assert same(a, b) and not same(a, c)


@needs_popgym
def test_popgym_ids_are_registered_and_bad_names_are_clear_errors():
    from envs.popgym_env import POPGym

    env = gym.make("PopGym-RepeatPreviousEasy-v0")
    assert env.unwrapped.env_name == "PopGym-RepeatPreviousEasy" and env.observation_space.shape == (5,)
    with pytest.raises(ValueError, match="unknown POPGym game 'RepeatLast'; accepted: .*RepeatPreviousEasy"):
        POPGym("RepeatLast")


@needs_popgym
@pytest.mark.parametrize(
    "game, low, high",
    [
        ("CountRecallMedium", -0.6, -0.4),
        ("RepeatFirstMedium", -0.8, -0.2),
        ("AutoencodeEasy", -0.5, -0.44),
        ("RepeatPreviousEasy", -0.8, -0.2),
    ],
)
def test_popgym_memoryless_bar_answers_as_the_game_scores_and_lies_far_above_random_where_the_time_step_helps(
    game, low, high
):
    """benchmarks/probes/popgym_memoryless.py reads each step's correct answer from the game's state: answering it earns
    the game's maximum, 1.0 (so the rule is the game's own). A policy that sees only the time step and the observation
    gets far more than random's -0.93 on CountRecall (the likely count grows with time; ~-0.50 measured on 20,000
    episodes), about random's -0.50 where the observation says nothing about the answer (RepeatFirst,
    RepeatPrevious), and -0.47 on Autoencode, whose last watch step shows the first card to recall."""
    cmd = [
        sys.executable,
        "benchmarks/probes/popgym_memoryless.py",
        "--env-id",
        f"envs:PopGym-{game}-v0",
        "--episodes",
        "1000",
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert result["oracle_return"] == 1.0
    assert low < result["return"] < high, result
