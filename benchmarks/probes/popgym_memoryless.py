"""The best return a policy WITHOUT memory can get on a POPGym game: the bar an agent must beat to show it uses the past.

    python benchmarks/probes/popgym_memoryless.py --env-id envs:PopGym-CountRecallMedium-v0 --episodes 4000

A uniform-random baseline is a weak bar for these games: a policy that sees only the current observation and the time
step can already do much better than random (in CountRecall, guessing the most likely count for the time step). This
script measures that policy. It plays `--episodes` episodes, and at every step reads the correct answer from the game's
own state (which card to repeat, which count to report), keyed by what a memoryless policy sees: the raw observation
and the time step (not the previous action and reward that AMAGO's agent also sees: those are a one-step memory,
with which e.g. RepeatFirst is solved by repeating a rewarded answer). The first half of the episodes fits the table "answer most often correct for this (time step,
observation)"; the second half plays that table in fresh episodes and sums the game's own rewards (held out, so the
bar is not inflated by fitting). Ends with one line `RESULT {json}`: the held-out mean return, its standard error, the
fraction of scored steps answered correctly, and the fitting episodes' return (they answer correctly: 1.0 checks that
the answer rule is the game's).

Games with an answer rule: CountRecall*, RepeatFirst*, RepeatPrevious*, Autoencode*.
"""

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.args import resolve_env_id  # noqa: E402
from common.logs import print_result  # noqa: E402
from envs.popgym_env import popgym_games  # noqa: E402


def answer(game: str, env):
    """The action the game rewards at this step, read from its state before the step; None where no action is scored."""
    if game.startswith("CountRecall"):  # how many times the queried card has been dealt so far
        return int(env.counts[env.query])
    if game.startswith("RepeatFirst"):  # the suit of the first card
        return int(env.card)
    if game.startswith("RepeatPrevious"):  # the suit dealt k steps ago (scored once k cards are out)
        if len(env.deck["player"]) < env.k:
            return None
        return int(env.deck.suits_idx[env.deck["player"][-env.k]])
    if game.startswith("Autoencode"):  # watch phase: nothing is scored; play phase: the cards in reverse order
        if env.mode.name == "WATCH":
            return None
        return int(env.deck.suits_idx[env.deck["system"][-1]])
    raise ValueError(
        f"no answer rule for POPGym game {game!r}; accepted: CountRecall*, RepeatFirst*, RepeatPrevious*, Autoencode*"
    )


def key(t: int, obs) -> tuple:
    return (t, *np.atleast_1d(obs).tolist())  # what a memoryless policy sees: the time step and this observation


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", required=True, help="envs:PopGym-<Game>-v0")
    p.add_argument("--episodes", type=int, default=4000, help="half fit the table, half score it")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    env_id = resolve_env_id(a.env_id)
    game = env_id.split(":")[-1].removeprefix("PopGym-").removesuffix("-v0")
    games = popgym_games()
    if game not in games:
        raise SystemExit(f"--env-id must name a POPGym game as envs:PopGym-<Game>-v0, got {a.env_id!r}")
    env = games[game]()
    fit = a.episodes // 2
    table = defaultdict(Counter)  # (t, obs) -> Counter(correct action)
    oracle = []  # the fitting episodes answer correctly: their returns check the answer rule against the game's reward
    for ep in range(fit):
        obs, _ = env.reset(seed=a.seed * 1_000_003 + ep)
        t, done, ret = 0, False, 0.0
        while not done:
            ans = answer(game, env)
            if ans is not None:
                table[key(t, obs)][ans] += 1
            obs, r, term, trunc, _ = env.step(0 if ans is None else ans)  # actions do not change what is dealt
            t, done, ret = t + 1, term or trunc, ret + float(r)
        oracle.append(ret)
    policy = {k: c.most_common(1)[0][0] for k, c in table.items()}
    returns, hits, scored = [], 0, 0
    for ep in range(fit, a.episodes):
        obs, _ = env.reset(seed=a.seed * 1_000_003 + ep)
        t, done, ret = 0, False, 0.0
        while not done:
            ans = answer(game, env)
            act = policy.get(key(t, obs), 0)
            if ans is not None:
                hits, scored = hits + (act == ans), scored + 1
            obs, r, term, trunc, _ = env.step(act)
            t, done, ret = t + 1, term or trunc, ret + float(r)
        returns.append(ret)
    result = {
        "env_id": a.env_id,
        "policy": "best_memoryless",
        "episodes_fit": fit,
        "episodes_scored": len(returns),
        "return": round(float(np.mean(returns)), 4),
        "return_sem": round(float(np.std(returns) / np.sqrt(len(returns))), 4),
        "correct_fraction": round(hits / max(scored, 1), 4),
        "oracle_return": round(float(np.mean(oracle)), 4),  # 1.0 when the answer rule is the game's
    }
    print_result(result, a.record)


if __name__ == "__main__":
    main()
