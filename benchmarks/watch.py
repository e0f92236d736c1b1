"""Watch a trained run remember: what its memory reads, and how its returns grow across attempts. One figure each:

    python benchmarks/watch.py attention --run-name NAME [--episodes 32]     # a Transformer's attention over the past
    python benchmarks/watch.py probe --run-name NAME [NAME ...] [--label goal]   # the cue read out of any memory
    python benchmarks/watch.py attempts --run-name NAME [NAME ...] [--record CSV]   # success per attempt, in training
    python benchmarks/watch.py attempts --csv CSV                                # the same figure from a recorded CSV
    python benchmarks/watch.py track --run-name NAME [--info x_velocity] [--target target_velocity]   # e.g. speed

A run is runs/NAME, as the scripts write it (looked up from the current folder): its flags.json names the script
(exp_name: amago_agent or amago_multitask; --script for a copy elsewhere), whose own classes build the agent, and
checkpoint.pt holds its weights. `attention`, `probe` and `track` play fresh episodes of the run's eval envs with the
script's acting step (Agent.get_actions; greedy, and for `probe` a share --epsilon of random actions), then run the
trajectory encoder's training forward over each episode's tokens (with the rollout's span of keys: the same
computation, as one sequence) and read the states it returns, or the attention of each TransformerLayer, from q, k, v
and the attention output that the layer's own calls pass along. `probe` reads the same episodes with an untrained
agent of the run's flags too: what training added is the difference. `track` draws an info value of each step (a
velocity) against an env attribute (its target). `attempts` reads the per-attempt eval metrics a run logged
(eval/<env>/attempt <i> success, envs/kshot.py's KShot). Each writes a PNG (--out; default
benchmarks/out/watch/<command>_<run>.png) and the figure's numbers as JSON beside it, and checks what it needs
(matplotlib, the run, the env's attributes) before it plays an episode. Nothing here is on the scripts' path: a copied
script runs without this file.
"""

import argparse
import csv
import dataclasses
import importlib.util
import json
import math
import re
import sys
import warnings
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.args import FLAGS_FILE, resolve_env_ids  # noqa: E402
from common.checkpoint import load_matching, read_checkpoint  # noqa: E402
from common.evaluate import index_obs, obs_to_torch  # noqa: E402
from common.guards import UserError  # noqa: E402
from common.logs import read_scalars  # noqa: E402

ATTEMPT = re.compile(r"^eval/(.+)/attempt (\d+) (success|return)$")  # KShot's per-attempt eval metrics
CONTROL_SEED = 0  # the torch seed of the probe's untrained control


# ----------------------------------------------------- a run -----------------------------------------------------
def import_script(path):
    """The script's module under its own name (not __main__: its training loop does not run)."""
    sys.path[:0] = [str(Path(path).resolve().parent), "."]  # its common/ and envs/; a user's `module:Env` ids
    spec = importlib.util.spec_from_file_location(f"watched_{Path(path).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_args(name, script=None):
    """runs/NAME -> (the script's module, its Args as the run saved them)."""
    run_dir = Path("runs") / name
    if not (run_dir / FLAGS_FILE).exists():
        raise UserError(
            f"--run-name {name!r}: no {run_dir / FLAGS_FILE} (runs are read from ./runs, as the scripts write them)"
        )
    saved = json.loads((run_dir / FLAGS_FILE).read_text())
    if script is None:  # the script's file name is its exp_name's default; AMAGO-2's flags name its two-hot critic
        named = ROOT / f"{saved.get('exp_name', '')}.py"
        script = named if named.exists() else ROOT / ("amago_multitask.py" if "num_bins" in saved else "amago_agent.py")
    mod = import_script(script)
    fields = {f.name for f in dataclasses.fields(mod.Args)}
    args = mod.Args(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items() if k in fields})
    args.env_id, args.eval_env_id = resolve_env_ids(args)
    return mod, args


def load_run(name, script=None, num_envs=8, seed=1):
    """runs/NAME -> (the script's module, its Args as the run saved them, eval envs, the agent with its weights)."""
    mod, args = run_args(name, script)
    ckpt = Path("runs") / name / "checkpoint.pt"
    if not ckpt.exists():
        raise UserError(
            f"--run-name {name!r}: no checkpoint at {ckpt} yet (a run saves one every --checkpoint-interval epochs)"
        )
    envs = mod.make_vec_env(args.eval_env_id, num_envs, args.env_mode, seed)
    agent = mod.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
    load_matching(agent, read_checkpoint(ckpt)["agent"], ckpt)
    return mod, args, envs, agent.eval()


def untrained(mod, args, envs):
    """The run's agent as it was before training: built from the same flags, with a fixed torch seed, no weights
    loaded. The probe's control: what an untrained network of the same architecture holds of the cue."""
    torch.manual_seed(CONTROL_SEED)
    return mod.Agent(args, envs.single_observation_space["obs"], envs.single_action_space).eval()


def env_attr(envs, name):
    """Each actor's `name` attribute of its env (None where it has none)."""
    try:
        return envs.get_attr(name)
    except AttributeError:
        return None


def need_attr(envs, env_id, name, seed, flag, what):
    """Refuses, before any episode, an env without the attribute `name` (read after a reset, as `play` reads it)."""
    envs.reset(seed=seed)
    if env_attr(envs, name) is None:
        raise UserError(f"{flag} {name!r}: env {env_id} has no attribute {name!r} ({what})")


def step_info(info, key, done):
    """(N,) each actor's info[key] of a step, NaN where it has none; a finished actor's from its final_info (the
    vector env's same-step autoreset puts the reset's info in its place)."""
    out = np.full(len(done), np.nan)
    for src, rows in ((info, ~done), (info.get("final_info", {}), done)):
        if key in src:
            has = np.asarray(src.get(f"_{key}", np.ones(len(done), bool)), bool) & rows
            out[has] = np.asarray(src[key], float)[has]
    return out


def explore(action, space, epsilon, rng):
    """Greedy actions (N, ...) with a share epsilon of random ones, so that episodes of one task differ where greedy
    play would repeat them step for step. Discrete and MultiBinary: each actor's action is a uniform random one with
    probability epsilon; Box ([-1, 1], the wrapper's scale): Gaussian noise of std epsilon, clipped."""
    if epsilon <= 0:
        return action
    if isinstance(space, gym.spaces.Box):
        return np.clip(action + epsilon * rng.standard_normal(action.shape), -1.0, 1.0).astype(action.dtype)
    if isinstance(space, gym.spaces.Discrete):
        other = space.start + rng.integers(0, space.n, len(action))
    else:
        other = rng.integers(0, 2, action.shape)
    rand = (rng.random(len(action)) < epsilon).reshape(-1, *[1] * (action.ndim - 1))
    return np.where(rand, other, action).astype(action.dtype)


@torch.no_grad()
def play(agent, envs, episodes, seed, attrs=("attempt",), epsilon=0.0, infos=(), max_steps=None):
    """Episodes with the script's acting step, `episodes` or a few more (each actor plays its share): greedy, or with
    a share `epsilon` of random actions (explore; a numpy RNG seeded with `seed`). max_steps: an episode is cut
    there, and its actor starts a new one. -> a list of episodes: {"obs": {key: (T, ...)}, "rl2": (T, A+1), "time":
    (T,), name: (T,) for each attribute of `attrs` the env has (read before each action: the value the observation
    was made under), "info": {key: (T,)} for each key of `infos` (the step's info value, NaN where absent),
    "return": float}."""
    N = envs.num_envs
    share = math.ceil(episodes / N)
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    hidden = agent.traj.init_hidden(N, "cpu")
    steps, ret, done_eps, finished = [[] for _ in range(N)], np.zeros(N), [], np.zeros(N, int)
    while (finished < share).any():
        values = {a: v for a in attrs if (v := env_attr(envs, a)) is not None}
        for i in range(N):
            steps[i].append((index_obs(obs, i), {a: v[i] for a, v in values.items()}, {}))
        action, hidden = agent.get_actions(*obs_to_torch(obs, "cpu"), hidden, greedy=True)
        obs, rew, term, trunc, info = envs.step(explore(action.numpy(), envs.single_action_space, epsilon, rng))
        ret += rew
        done = term | trunc
        for key in infos:
            for i, x in enumerate(step_info(info, key, done)):
                steps[i][-1][2][key] = x
        cut = np.zeros(N, bool) if max_steps is None else ~done & (np.array([len(s) for s in steps]) >= max_steps)
        for i in np.flatnonzero(done | cut):
            if finished[i] < share:
                done_eps.append(episode(steps[i], ret[i]))
            finished[i] += 1
            steps[i], ret[i] = [], 0.0
        if cut.any():  # the cut actors alone start anew (gymnasium's vector envs reset the masked actors only)
            obs, _ = envs.reset(options={"reset_mask": cut})
        hidden = agent.traj.reset_hidden(hidden, torch.as_tensor(done | cut))
    return done_eps


def episode(steps, ret):
    stack = lambda xs: np.stack([np.asarray(x) for x in xs])
    obs = [o for o, _, _ in steps]
    return {
        "obs": {k: stack([o["obs"][k] for o in obs]) for k in obs[0]["obs"]},
        "rl2": stack([o["rl2"] for o in obs]),
        "time": stack([o["time"] for o in obs]),
        **{a: [v[a] for _, v, _ in steps] for a in steps[0][1]},
        "info": {k: np.array([x[k] for _, _, x in steps]) for k in steps[0][2]},
        "return": float(ret),
    }


@torch.no_grad()
def states(agent, ep):
    """The trajectory encoder's states (T, D) over one episode: its training forward on the episode's tokens, with the
    rollout's span of keys for a Transformer (forward(..., window_size=cache_len) is what its KV cache computes)."""
    obs = {k: torch.as_tensor(v)[None] for k, v in ep["obs"].items()}
    x = agent.embed(obs, torch.as_tensor(ep["rl2"])[None])
    span = {"window_size": agent.traj.cache_len} if hasattr(agent.traj, "cache_len") else {}
    return agent.traj(x, torch.as_tensor(ep["time"])[None], **span)[0]


# --------------------------------------------------- attention ---------------------------------------------------
@contextmanager
def captured_attention(traj):
    """Records what each TransformerLayer of `traj` computes, call by call: q, k, v (its split_heads's output) and the
    attention output (what its mlp_block receives), by wrapping those two methods on the layer objects while the
    block runs. The model's forward is unchanged; the class, and any other model, is untouched. -> one dict per
    layer, {"q", "k", "v", "out"}: (B, H, L, E) each, of the layer's last call."""
    layers = [m for m in traj.modules() if hasattr(m, "split_heads") and hasattr(m, "mlp_block")]
    calls = [{} for _ in layers]
    for layer, rec in zip(layers, calls):

        def split_heads(h, split=layer.split_heads, rec=rec):
            rec["q"], rec["k"], rec["v"] = qkv = split(h)
            return qkv

        def mlp_block(x, attn, block=layer.mlp_block, rec=rec):
            rec["out"] = attn
            return block(x, attn)

        layer.split_heads, layer.mlp_block = split_heads, mlp_block
    try:
        yield calls
    finally:
        for layer in layers:
            del layer.split_heads, layer.mlp_block  # the class's methods again


def attention_weights(q, k, window_size=None):
    """(B, H, L, E) q and k -> (B, H, L, L) weights: softmax(q k^T / sqrt(E)) over the keys each query sees, its last
    `window_size` steps incl. itself (None: all earlier steps): the mask and the scale of the scripts' attention()
    (torch's scaled_dot_product_attention scales by 1/sqrt(E)). tests/test_watch.py checks weights @ v == its output."""
    L = q.shape[-2]
    i = torch.arange(L)
    seen = i[None, :] <= i[:, None]
    if window_size is not None:
        seen &= i[:, None] - i[None, :] < window_size
    logits = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    return logits.masked_fill(~seen, float("-inf")).softmax(-1)


@torch.no_grad()
def episode_attention(agent, ep):
    """[(H, T, T) weights per layer] of one episode, from the layers' own q and k."""
    with captured_attention(agent.traj) as calls:
        states(agent, ep)
    return [attention_weights(c["q"], c["k"], agent.traj.cache_len)[0] for c in calls]


def marked_steps(ep):
    """The steps worth watching, and what they are. A k-shot env (an `attempt` attribute): the last step of every
    attempt but the rollout's last (the earlier attempts' ends); any other env: its first step (where a cue shown at
    reset is seen, as in T-Maze)."""
    if "attempt" in ep:
        a = np.asarray(ep["attempt"])
        return np.flatnonzero(a[1:] != a[:-1]), "earlier attempts' last steps"
    return np.array([0]), "the first step (a cue shown at reset)"


def num(x):  # a JSON number (None where no step qualified: e.g. the cue already out of a sliding window)
    return None if np.isnan(x) else round(float(x), 4)


def f2(x):
    return "–" if x is None else f"{x:.2f}"


def cmd_attention(opts):
    mod, args, envs, agent = load_run(opts.run_name[0], opts.script, min(8, opts.episodes))
    if not any(hasattr(m, "split_heads") for m in agent.traj.modules()):
        raise UserError(
            f"run {opts.run_name[0]!r} has no attention to draw: its memory is --traj-encoder {args.traj_encoder} "
            "(attention needs transformer; `probe` reads any memory's states)"
        )
    eps = play(agent, envs, opts.episodes, opts.seed, epsilon=opts.epsilon)
    control = untrained(mod, args, envs)  # the same episodes through an untrained agent of the run's flags
    n_layers, what = len(agent.traj.layers), marked_steps(eps[0])[1]
    # per layer: each episode's weight on its marked steps, by query step (queries after the first marked step)
    on_marked = [[] for _ in range(n_layers)]  # (H, T) arrays, NaN where no marked step is seen yet
    control_marked = [[] for _ in range(n_layers)]  # the untrained control's, heads averaged: (T,) arrays
    shares, last = [], [[] for _ in range(n_layers)]  # uniform attention's share; the last step's (H,) weights
    example = max(range(len(eps)), key=lambda i: (len(marked_steps(eps[i])[0]), len(eps[i]["time"])))
    maps = None
    for j, ep in enumerate(eps):
        marks = marked_steps(ep)[0]
        T = len(ep["time"])
        t = np.arange(T)
        lag = t[:, None] - marks[None, :]
        seen = (lag > 0) & (lag < agent.traj.cache_len)  # (T, marks): a marked step in a query's past, in its span
        n_seen = np.minimum(t + 1, agent.traj.cache_len)  # keys each query sees
        share = np.where(seen.any(1), seen.sum(1) / n_seen, np.nan)
        shares.append(share)
        for layer, w in enumerate(episode_attention(agent, ep)):
            w = w.numpy()  # (H, T, T)
            mass = (w[:, :, marks] * seen[None]).sum(-1)  # (H, T)
            mass[:, ~seen.any(1)] = np.nan
            on_marked[layer].append(mass)
            last[layer].append(mass[:, -1])
        for layer, w in enumerate(episode_attention(control, ep)):
            mass = (w.numpy()[:, :, marks] * seen[None]).sum(-1).mean(0)  # (T,), heads averaged
            mass[~seen.any(1)] = np.nan
            control_marked[layer].append(mass)
        if j == example:
            maps = [w.mean(0).numpy() for w in episode_attention(agent, ep)]
    T_max = max(len(e["time"]) for e in eps)
    pad = lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, T_max - a.shape[-1])], constant_values=np.nan)
    by_step = [np.stack([pad(m) for m in on_marked[layer]]) for layer in range(n_layers)]  # (episodes, H, T)
    uniform = np.nanmean(np.stack([pad(s) for s in shares]), 0)
    controls = [np.nanmean(np.stack([pad(m) for m in control_marked[layer]]), 0) for layer in range(n_layers)]
    summary = {
        "run": opts.run_name[0],
        "env_id": args.eval_env_id,
        "episodes": len(eps),
        "epsilon": opts.epsilon,
        "marked": what,
        "mean_return": float(np.mean([e["return"] for e in eps])),
        "layers": [],
    }
    for layer in range(n_layers):
        later = by_step[layer].mean(1)  # heads averaged: (episodes, T)
        heads_last = np.nanmean(np.stack(last[layer]), 0)  # (H,)
        summary["layers"].append(
            {
                "last_step_on_marked": num(np.nanmean(np.stack(last[layer]))),
                "last_step_on_marked_per_head": [num(h) for h in heads_last],
                "last_step_uniform": num(np.nanmean([s[-1] for s in shares])),
                "all_steps_on_marked": num(np.nanmean(later)),
                "all_steps_uniform": num(np.nanmean(np.concatenate(shares))),
                "last_step_untrained": num(np.nanmean([m[-1] for m in control_marked[layer]])),
                "all_steps_untrained": num(np.nanmean(np.concatenate(control_marked[layer]))),
            }
        )
    draw_attention(opts, summary, by_step, uniform, controls, maps, marked_steps(eps[example])[0], eps[example])
    return summary


def draw_attention(opts, summary, by_step, uniform, controls, maps, marks, ep):
    plt = pyplot()
    from matplotlib.colors import LogNorm

    n, T = len(maps), len(ep["time"])
    lo = max(T - opts.map_steps, 0)  # a long episode's map: its last --map-steps steps, or its cells are sub-pixel
    summary["map_steps"] = [lo, T]
    fig, axes = plt.subplots(n, 2, figsize=(11, 3.6 * n + 0.6), squeeze=False)
    what = summary["marked"]
    for layer, (ax_map, ax_line) in enumerate(axes):
        w = maps[layer][lo:, lo:]
        shown = np.where(w > 0, np.clip(w, 1e-3, 1), np.nan)  # blank: keys a query cannot see
        im = ax_map.imshow(
            shown,
            norm=LogNorm(1e-3, 1),
            cmap="magma",
            origin="upper",
            interpolation="nearest",
            extent=(lo - 0.5, T - 0.5, T - 0.5, lo - 0.5),  # the axes count the episode's steps
        )
        for m in marks[marks >= lo]:
            ax_map.axvline(m, color="tab:cyan", lw=0.8, ls=":")
        ax_map.set(xlabel="key step (attended to)", ylabel="query step (acting)")
        steps = f"its last {T - lo} of {T} steps" if lo else "one episode's attention"
        ax_map.set_title(f"layer {layer + 1}: {steps}, heads averaged", fontsize=10)
        fig.colorbar(im, ax=ax_map, fraction=0.046, pad=0.03)
        mean = np.nanmean(by_step[layer], 0)  # (H, T): each head's mean over episodes
        x = np.arange(mean.shape[1])
        heads = [-1 if h is None else h for h in summary["layers"][layer]["last_step_on_marked_per_head"]]
        top = int(np.argmax(heads))
        for line in mean:
            ax_line.plot(x, line, color="tab:blue", lw=0.6, alpha=0.35)
        if max(heads) >= 0:
            ax_line.plot(x, mean[top], color="tab:red", lw=0.9, label=f"head {top + 1}: the last step's top head")
        ax_line.plot(x, mean.mean(0), color="tab:blue", lw=2, label="heads averaged (thin: each head)")
        ax_line.plot(x, uniform, color="0.4", ls="--", lw=1.2, label="if attention were uniform")
        ax_line.plot(x, controls[layer], color="tab:blue", ls=":", lw=1.5, label="untrained control, heads averaged")
        s = summary["layers"][layer]
        ax_line.set_yscale("log")
        ax_line.set_ylim(1e-4, 1.5)
        ax_line.set(xlabel="query step", ylabel="weight on the dotted steps")
        if s["last_step_on_marked"] is None:  # e.g. the cue already out of a sliding window at the last step
            last = "no marked step in the last step's window"
        else:
            last = f"last step: {f2(s['last_step_on_marked'])}, top head {f2(max(heads))} "
            last += f"(uniform {f2(s['last_step_uniform'])}, untrained {f2(s['last_step_untrained'])})"
        if s["all_steps_on_marked"] is None:
            every = "no marked step in any step's window"
        else:
            every = f"all steps: {f2(s['all_steps_on_marked'])} (uniform {f2(s['all_steps_uniform'])}, "
            every += f"untrained {f2(s['all_steps_untrained'])})"
        ax_line.set_title(f"{last}\n{every}", fontsize=9)
        ax_line.legend(fontsize=8, loc="lower left")
    played = "greedy" if not summary["epsilon"] else f"greedy with {summary['epsilon']:g} random actions"
    crop = f"; the map: the last {T - lo} of the episode's {T} steps" if lo else ""
    fig.suptitle(
        f"{summary['run']} ({summary['env_id']}): what each acting step attends to\n{summary['episodes']} {played} "
        f"episodes (mean return {summary['mean_return']:.2f}); dotted: {what}{crop}",
        fontsize=10,
    )
    save(fig, opts, "attention", summary)


# ----------------------------------------------------- probe -----------------------------------------------------
def fit_probe(x, y, classes, l2=1e-3):
    """Multinomial logistic regression on standardized features (full-batch L-BFGS) -> predict(x). A feature's scale
    is floored at 1e-3 of the median feature's: a direction a thousand times flatter than the others (an untrained
    GRU's states differ by ~1e-6 between cues) stays as small as it is rather than stretched into signal."""
    mu, sd = x.mean(0), x.std(0)
    sd = np.maximum(sd, 1e-3 * np.median(sd)) + 1e-8
    z = torch.as_tensor((x - mu) / sd, dtype=torch.float32)
    W = torch.zeros(x.shape[1], classes, requires_grad=True)
    b = torch.zeros(classes, requires_grad=True)
    opt = torch.optim.LBFGS([W, b], max_iter=200, line_search_fn="strong_wolfe")
    target = torch.as_tensor(y)

    def loss():
        opt.zero_grad()
        out = torch.nn.functional.cross_entropy(z @ W + b, target) + l2 * W.square().sum()
        out.backward()
        return out

    opt.step(loss)
    return lambda x_new: ((torch.as_tensor((x_new - mu) / sd, dtype=torch.float32) @ W + b).argmax(1)).numpy()


def balanced_accuracy(pred, y):
    return float(np.mean([(pred[y == c] == c).mean() for c in np.unique(y)]))


def histories(eps):
    """[(T,) ints] per episode: equal at step t where two episodes' tokens (obs and rl2) are equal at steps 0..t."""
    ids, out = {}, []
    for ep in eps:
        arrays = [*ep["obs"].values(), ep["rl2"]]
        seq, prev = [], -1
        for t in range(len(ep["rl2"])):
            prev = ids.setdefault((prev, b"".join(np.ascontiguousarray(a[t]).tobytes() for a in arrays)), len(ids))
            seq.append(prev)
        out.append(np.array(seq))
    return out


def halves(history, t):
    """The probe's split at step t -> (fit, scored): the even-numbered episodes that reach t, and the odd-numbered
    ones whose history up to t no fit episode has (a repeated history would be scored on states the fit has seen)."""
    fit = [i for i in range(0, len(history), 2) if len(history[i]) > t]
    seen = {history[i][t] for i in fit}
    return fit, [i for i in range(1, len(history), 2) if len(history[i]) > t and history[i][t] not in seen]


def probe_curve(feats, labels, classes, history, min_episodes=10):
    """Held-out balanced accuracy of a probe per step t: fit on the even-numbered episodes' states at t, scored on the
    odd-numbered ones whose history up to t is new to the fit half (halves). -> (scores, the episodes scored per step);
    NaN where either half has fewer than min_episodes episodes, or one class."""
    scores, scored = [], []
    for t in range(max(len(f) for f in feats)):
        split = halves(history, t)
        scored.append(len(split[1]))
        if min(map(len, split)) < min_episodes or min(len({labels[i] for i in h}) for h in split) < 2:
            scores.append(float("nan"))
            continue
        (x_fit, y_fit), (x_test, y_test) = [
            (np.stack([feats[i][t] for i in h]), np.array([labels[i] for i in h])) for h in split
        ]
        scores.append(balanced_accuracy(fit_probe(x_fit, y_fit, classes)(x_test), y_test))
    return scores, scored


def last_scored(xs):
    """(step, value) of the last step with a value (None, None where none has)."""
    return next(((t, x) for t, x in reversed(list(enumerate(xs))) if x is not None), (None, None))


def cmd_probe(opts):
    what = "the probe reads an attribute of the env that holds the episode's cue, e.g. T-Maze's goal"
    loaded = []
    for name in opts.run_name:  # every run and its env's cue first: a refusal comes before any episode
        mod, args, envs, agent = load_run(name, opts.script, min(8, opts.episodes))
        need_attr(envs, args.eval_env_id, opts.label, opts.seed, "--label", what)
        loaded.append((name, mod, args, envs, agent))
    summary = {
        "label": opts.label,
        "episodes": opts.episodes,
        "epsilon": opts.epsilon,
        "control": f"an untrained agent of the run's flags (torch seed {CONTROL_SEED}) reading the same episodes",
        "scored": "the held-out half's episodes whose history up to the step (obs and rl2) no fit episode has",
        "runs": {},
    }
    for name, mod, args, envs, agent in loaded:
        eps = play(agent, envs, opts.episodes, opts.seed, attrs=(opts.label,), epsilon=opts.epsilon)
        values = [ep[opts.label][0] for ep in eps]  # the episode's cue, as drawn at reset
        kinds = sorted(set(map(str, values)))
        if len(kinds) > 20:
            raise UserError(
                f"--label {opts.label!r} takes {len(kinds)} values: the probe classifies a cue of 2-20 values"
            )
        labels = [kinds.index(str(v)) for v in values]
        history = histories(eps)
        curves = {}
        for who, net in (("trained", agent), ("untrained", untrained(mod, args, envs))):
            feats = [states(net, ep).numpy() for ep in eps]
            curves[who], scored = probe_curve(feats, labels, len(kinds), history)
        gain = np.subtract(curves["trained"], curves["untrained"])
        r = summary["runs"][name] = {
            "traj_encoder": args.traj_encoder,
            "env_id": args.eval_env_id,
            "mean_return": float(np.mean([e["return"] for e in eps])),
            "chance": 1 / len(kinds),
            "trained": [num(x) for x in curves["trained"]],
            "untrained": [num(x) for x in curves["untrained"]],
            "trained_minus_untrained": [num(x) for x in gain],
            "scored_episodes": scored,
        }
        t, _ = last_scored(r["trained"])
        said = (
            "no step with enough held-out episodes of unseen histories"
            if t is None
            else f"step {t}: trained {f2(r['trained'][t])}, untrained {f2(r['untrained'][t])}, "
            f"difference {r['trained_minus_untrained'][t]:+.2f}"
        )
        print(f"{name} ({args.traj_encoder}): probe accuracy at the last scored {said}")
    draw_probe(opts, summary)
    return summary


def draw_probe(opts, summary):
    plt = pyplot()
    fig, (ax, ax_gain) = plt.subplots(2, 1, figsize=(8, 6.4), sharex=True, gridspec_kw={"height_ratios": [2.4, 1]})
    for i, (name, r) in enumerate(summary["runs"].items()):
        color = f"C{i}"
        nan = lambda xs: [np.nan if x is None else x for x in xs]  # noqa: E731
        ax.plot(
            nan(r["trained"]),
            color=color,
            lw=2.2,
            label=f"{name} ({r['traj_encoder']}; return {r['mean_return']:.2f} in these episodes)",
        )
        ax.plot(nan(r["untrained"]), color=color, lw=1.3, ls="--", label=f"{name}'s untrained control")
        ax_gain.plot(nan(r["trained_minus_untrained"]), color=color, lw=1.6)
    chance = next(iter(summary["runs"].values()))["chance"]
    ax.axhline(chance, color="0.6", ls=":", lw=1.2, label="chance", zorder=0)
    ax.set(ylabel="held-out balanced accuracy", ylim=(0, 1.05))
    played = f"greedy with {summary['epsilon']:g} random actions" if summary["epsilon"] else "greedy"
    ax.set_title(
        f"the cue ({summary['label']}) read out of the memory's state by a linear probe, per step\n"
        f"{summary['episodes']} episodes ({played}): fit on half, scored on the other half's episodes whose history "
        "up to the step\nthe fit half never saw; dashed: an untrained agent of the same flags, on the same episodes",
        fontsize=9,
    )
    ax.legend(fontsize=7.5, loc="lower left")
    ax_gain.axhline(0, color="0.6", ls=":", lw=1.2, zorder=0)
    ax_gain.set(xlabel="step of the episode", ylabel="trained − untrained", ylim=(-0.55, 0.55))
    save(fig, opts, "probe", summary)


# ---------------------------------------------------- attempts ----------------------------------------------------
def attempt_rows(name, metric):
    """[(run, env, env_steps, attempt, value)] of every eval of runs/NAME that logged per-attempt metrics."""
    run_dir = Path("runs") / name
    if not run_dir.is_dir():
        raise UserError(
            f"--run-name {name!r}: no folder {run_dir} (runs are read from ./runs, as the scripts write them)"
        )
    rows = []
    for tag, events in read_scalars(run_dir).items():
        m = ATTEMPT.match(tag)
        if m and m.group(3) == metric:
            rows += [(name, m.group(1), step, int(m.group(2)), value) for _, step, value in sorted(events)]
    if not rows:
        raise UserError(
            f"run {name!r} logged no eval/<env>/attempt <i> {metric}: its env reports no attempts (a k-shot env does, "
            "e.g. envs:MetaFrozenLake-HideK-v0 through envs/kshot.py), or it has not evaluated yet"
        )
    return sorted(rows, key=lambda r: (r[1], r[2], r[3]))  # stable: evals at one env step stay in time order


def cmd_attempts(opts):
    if opts.csv:
        with open(opts.csv) as f:
            rows = [
                (r["run"], r["env"], int(r["env_steps"]), int(r["attempt"]), float(r["value"]))
                for r in csv.DictReader(f)
            ]
        metric = Path(opts.csv).stem.rsplit("_", 1)[-1] if opts.metric is None else opts.metric
    else:
        metric = opts.metric or "success"
        rows = [r for name in opts.run_name for r in attempt_rows(name, metric)]
    if opts.record:
        Path(opts.record).parent.mkdir(parents=True, exist_ok=True)
        with open(opts.record, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["run", "env", "env_steps", "attempt", "value"])
            w.writerows((r, e, s, a, f"{v:.4f}") for r, e, s, a, v in rows)
        print(f"wrote {opts.record} ({len(rows)} rows)")
    panels = list(dict.fromkeys((r[0], r[1]) for r in rows))
    summary = {"metric": metric, "runs": {}}
    for run, env in panels:
        # (env steps, n) -> {attempt: value}: the n-th row of one (env steps, attempt) is the n-th eval at that step
        # (a mid-epoch and an end-of-epoch eval, or a resumed epoch's), each kept
        table, n = {}, Counter()
        for r in rows:
            if (r[0], r[1]) == (run, env):
                table.setdefault((r[2], n[r[2], r[3]]), {})[r[3]] = r[4]
                n[r[2], r[3]] += 1
        evals = sorted(table)
        k = max(max(v) for v in table.values()) + 1
        grid = np.array([[table[e].get(a, np.nan) for a in range(k)] for e in evals])  # (evals, attempts)
        summary["runs"][f"{run} {env}"] = {"env_steps": [s for s, _ in evals], "by_attempt": grid.round(4).tolist()}
    draw_attempts(opts, summary, metric)
    return summary


def draw_attempts(opts, summary, metric):
    plt = pyplot()
    n = len(summary["runs"])
    fig, axes = plt.subplots(2, n, figsize=(5.2 * n, 7.8), squeeze=False)
    for ax in axes[1, 1:]:  # the runs over one range of env steps
        ax.sharex(axes[1, 0])
    top = max(1.0, max(np.nanmax(r["by_attempt"]) for r in summary["runs"].values()))
    for col, (label, r) in enumerate(summary["runs"].items()):
        steps, grid = np.array(r["env_steps"]), np.array(r["by_attempt"])
        k = grid.shape[1]
        picks = sorted(set(np.linspace(0, len(steps) - 1, min(5, len(steps))).round().astype(int)))
        cmap = plt.get_cmap("viridis")
        ax = axes[0, col]
        for j, i in enumerate(picks):
            color = cmap(j / max(len(picks) - 1, 1))
            again = (steps[:i] == steps[i]).sum()  # earlier evals at the same env step
            at = f"{steps[i]:,} env steps" + (f" (eval {again + 1} there)" if again else "")
            ax.plot(range(k), grid[i], "o-", color=color, label=at)
        ax.set(xlabel="attempt", ylabel=f"eval {metric}", ylim=(0, top * 1.05), xticks=range(k))
        ax.set_title(label, fontsize=10)
        ax.legend(fontsize=8, loc="best")
        ax = axes[1, col]
        for a in range(k):
            color = plt.get_cmap("plasma")(a / max(k, 2))  # a marker per eval: two at one env step show as two
            ax.plot(steps, grid[:, a], ".-", ms=4, color=color, label=f"attempt {a}")
        ax.set(xlabel="env steps", ylabel=f"eval {metric}", ylim=(0, top * 1.05))
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(f"eval {metric} per attempt: top, at points of training; bottom, over training", fontsize=10)
    save(fig, opts, "attempts", summary)


# ----------------------------------------------------- track -----------------------------------------------------
def cmd_track(opts):
    name = opts.run_name[0]
    mod, args, envs, agent = load_run(name, opts.script, min(8, opts.episodes))
    if opts.steps is not None and args.env_mode == "already_vectorized":
        raise UserError("--steps: cutting an episode resets its actor alone, which a vector_entry_point env cannot")
    what = "the target the info value should follow, e.g. HalfCheetah-Vel's target_velocity"
    need_attr(envs, args.eval_env_id, opts.target, opts.seed, "--target", what)
    try:
        [float(v) for v in env_attr(envs, opts.target)]
    except (TypeError, ValueError):
        raise UserError(f"--target {opts.target!r}: env {args.eval_env_id}'s {opts.target} is not a number") from None
    obs, _ = envs.reset(seed=opts.seed)  # one step: the info key is there, or the command stops before any episode
    action, _ = agent.get_actions(*obs_to_torch(obs, "cpu"), agent.traj.init_hidden(envs.num_envs, "cpu"), greedy=True)
    _, _, term, trunc, info = envs.step(action.numpy())
    if np.isnan(step_info(info, opts.info, term | trunc)).all():
        keys = sorted({k for k in [*info, *info.get("final_info", {})] if not k.startswith("_")} - {"final_info"})
        raise UserError(
            f"--info {opts.info!r}: env {args.eval_env_id}'s step info has no {opts.info!r} (it has {keys})"
        )
    eps = play(agent, envs, opts.episodes, opts.seed, attrs=(opts.target,), infos=(opts.info,), max_steps=opts.steps)
    eps = sorted(eps[: opts.episodes], key=lambda e: e[opts.target][0])  # by target: the legend reads in order
    summary = {"run": name, "env_id": args.eval_env_id, "info": opts.info, "target": opts.target, "final": opts.final}
    summary["episodes"] = []
    for ep in eps:
        target, final = float(ep[opts.target][0]), float(np.nanmean(ep["info"][opts.info][-opts.final :]))
        summary["episodes"].append(
            {
                "target": round(target, 4),
                "final_mean": round(final, 4) + 0.0,  # + 0.0: no -0.0
                "abs_error": round(abs(final - target), 4),
                "steps": len(ep["time"]),
                "return": round(ep["return"], 4),
            }
        )
    summary["mean_abs_error"] = round(float(np.mean([e["abs_error"] for e in summary["episodes"]])), 4)
    print(
        f"{name}: {opts.info} over the final {opts.final} steps against {opts.target}, mean |error| "
        f"{summary['mean_abs_error']:.3f} over {len(eps)} episodes"
    )
    draw_track(opts, summary, eps)
    return summary


def draw_track(opts, summary, eps):
    plt = pyplot()
    per = 4  # episodes per panel: more lines than that tangle
    n = math.ceil(len(eps) / per)
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 3.6 * rows + 0.8), squeeze=False, sharey=True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for p, ax in enumerate(axes.flat[:n]):
        for j in range(p * per, min((p + 1) * per, len(eps))):
            ep, e, color = eps[j], summary["episodes"][j], f"C{j % 10}"
            x = np.arange(len(ep["time"]))
            ax.plot(x, ep["info"][opts.info], color=color, lw=0.8, alpha=0.9)
            label = f"{opts.target} {e['target']:.2f}: final {e['final_mean']:.2f} (|error| {e['abs_error']:.2f})"
            ax.plot(x, np.asarray(ep[opts.target], float), color=color, lw=1.8, ls="--", label=label)
        T = max(len(ep["time"]) for ep in eps[p * per : (p + 1) * per])
        ax.axvspan(max(T - opts.final, 0) - 0.5, T - 0.5, color="0.92", zorder=0)
        ax.set(xlabel="step of the episode", ylabel=opts.info)
        ax.legend(fontsize=7.5, loc="best")
    fig.suptitle(
        f"{summary['run']} ({summary['env_id']}), {len(eps)} greedy episodes\n{opts.info} per step (solid) against "
        f"the env's {opts.target} (dashed, same colour)\nmean |error| over the final {opts.final} steps (shaded) "
        f"{summary['mean_abs_error']:.2f}",
        fontsize=10,
    )
    save(fig, opts, "track", summary)


# ------------------------------------------------------ output ------------------------------------------------------
def pyplot():
    """matplotlib's pyplot, drawing to files; main calls it first, so a missing matplotlib is one line before any
    episode is played."""
    try:
        import matplotlib
    except ImportError:
        raise UserError(
            "the figures need matplotlib: pip install matplotlib (or pip install -r requirements-dev.txt)"
        ) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, opts, command, summary):
    name = Path(opts.csv).stem if getattr(opts, "csv", None) else "_".join(opts.run_name)
    out = Path(opts.out or ROOT / "benchmarks" / "out" / "watch" / f"{command}_{name}.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {out} and {out.with_suffix('.json').name}")


def main(argv=None):
    warnings.filterwarnings("ignore", "Mean of empty slice")  # a step before any marked step: NaN, left out
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, help in [
        ("attention", "a Transformer run: each acting step's attention over the episode, per layer"),
        ("probe", "any runs: a linear probe's held-out accuracy reading the cue from the memory's state, per step"),
        ("attempts", "k-shot runs: eval success per attempt index, at points of training (from the run's logs)"),
        ("track", "a run: an info value of each step (a velocity) against an env attribute (its target), per episode"),
    ]:
        s = sub.add_parser(name, help=help)
        s.add_argument(
            "--run-name",
            nargs="+",
            required=name != "attempts",
            default=[],
            help="runs/NAME (several: one curve or panel each)",
        )
        s.add_argument("--out", help="the PNG to write (its numbers go to the same name .json)")
        if name != "attempts":
            s.add_argument("--episodes", type=int, default={"attention": 32, "probe": 200, "track": 8}[name])
            s.add_argument("--seed", type=int, default=1, help="the eval envs' seed (and of the random actions)")
            s.add_argument("--script", help="the script of the run (default: the one its flags.json names)")
        if name in ("attention", "probe"):
            s.add_argument(
                "--epsilon",
                type=float,
                default=0.1 if name == "probe" else 0.0,
                help="the share of random actions (Box: the std of Gaussian noise), so that the episodes differ",
            )
        if name == "attention":
            s.add_argument("--map-steps", type=int, default=200, help="a longer episode's map shows its last steps")
        if name == "probe":
            s.add_argument("--label", default="goal", help="the env attribute that holds the episode's cue")
        if name == "attempts":
            s.add_argument("--metric", choices=["success", "return"], help="default: success")
            s.add_argument("--record", help="also write the rows drawn to this CSV")
            s.add_argument("--csv", help="draw a recorded CSV instead of runs")
        if name == "track":
            s.add_argument("--info", default="x_velocity", help="the key of the step's info to draw")
            s.add_argument("--target", default="target_velocity", help="the env attribute it should follow")
            s.add_argument("--final", type=int, default=50, help="the final steps whose mean is scored")
            s.add_argument("--steps", type=int, help="cut each episode after this many steps (default: play it out)")
    opts = p.parse_args(argv)
    try:
        if opts.command in ("attention", "track") and len(opts.run_name) > 1:
            raise UserError(f"{opts.command}: one --run-name, got {len(opts.run_name)}")
        if opts.command != "attempts" and opts.episodes < (1 if opts.command == "track" else 2):
            raise UserError(f"--episodes {opts.episodes}: at least {1 if opts.command == 'track' else 2}")
        if opts.command == "attempts" and bool(opts.csv) == bool(opts.run_name):
            raise UserError("attempts: give --run-name NAME ... or --csv FILE (one of the two)")
        if not 0 <= getattr(opts, "epsilon", 0) <= 1:
            raise UserError(f"--epsilon {opts.epsilon}: a share of actions, in [0, 1]")
        for flag in ("map_steps", "final", "steps"):
            if getattr(opts, flag, None) is not None and getattr(opts, flag) < 1:
                raise UserError(f"--{flag.replace('_', '-')} {getattr(opts, flag)}: at least 1")
        pyplot()  # before any run is read or episode played
        command = {"attention": cmd_attention, "probe": cmd_probe, "attempts": cmd_attempts, "track": cmd_track}
        return command[opts.command](opts)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
