"""Watch a trained run remember: what its memory reads, and how its returns grow across attempts. One figure each:

    python benchmarks/watch.py attention --run-name NAME [--episodes 32]     # a Transformer's attention over the past
    python benchmarks/watch.py probe --run-name NAME [NAME ...] [--label goal]   # the cue read out of any memory
    python benchmarks/watch.py attempts --run-name NAME [NAME ...] [--record CSV]   # success per attempt, in training
    python benchmarks/watch.py attempts --csv CSV                                # the same figure from a recorded CSV

A run is runs/NAME, as the scripts write it (looked up from the current folder): its flags.json names the script
(exp_name: amago_agent or amago_multitask; --script for a copy elsewhere), whose own classes build the agent, and
checkpoint.pt holds its weights. `attention` and `probe` play fresh greedy episodes of the run's eval envs with the
script's acting step (Agent.get_actions), then run the trajectory encoder's training forward over each episode's
tokens (with the rollout's span of keys: the same computation, as one sequence) and read the states it returns, or the
attention of each TransformerLayer, from q, k, v and the attention output that the layer's own calls pass along.
`attempts` reads the per-attempt eval metrics a run logged (eval/<env>/attempt <i> success, envs/kshot.py's KShot).
Each writes a PNG (--out; default benchmarks/out/watch/<command>_<run>.png) and the figure's numbers as JSON beside it.
Nothing here is on the scripts' path: a copied script runs without this file.
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
from contextlib import contextmanager
from pathlib import Path

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


# ----------------------------------------------------- a run -----------------------------------------------------
def import_script(path):
    """The script's module under its own name (not __main__: its training loop does not run)."""
    sys.path[:0] = [str(Path(path).resolve().parent), "."]  # its common/ and envs/; a user's `module:Env` ids
    spec = importlib.util.spec_from_file_location(f"watched_{Path(path).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_run(name, script=None, num_envs=8, seed=1):
    """runs/NAME -> (the script's module, its Args as the run saved them, eval envs, the agent with the run's weights)."""
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
    ckpt = run_dir / "checkpoint.pt"
    if not ckpt.exists():
        raise UserError(
            f"--run-name {name!r}: no checkpoint at {ckpt} yet (a run saves one every --checkpoint-interval epochs)"
        )
    envs = mod.make_vec_env(args.eval_env_id, num_envs, args.env_mode, seed)
    agent = mod.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
    load_matching(agent, read_checkpoint(ckpt)["agent"], ckpt)
    return mod, args, envs, agent.eval()


def env_attr(envs, name):
    """Each actor's `name` attribute of its env (None where it has none)."""
    try:
        return envs.get_attr(name)
    except AttributeError:
        return None


@torch.no_grad()
def play(agent, envs, episodes, seed, attrs=("attempt",)):
    """Greedy episodes with the script's acting step, `episodes` or a few more (each actor plays its share). -> a list
    of episodes: {"obs": {key: (T, ...)}, "rl2": (T, A+1), "time": (T,), name: (T,) for each attribute of `attrs` the
    env has (read before each action: the value the observation was made under), "return": float}."""
    N = envs.num_envs
    share = math.ceil(episodes / N)
    obs, _ = envs.reset(seed=seed)
    hidden = agent.traj.init_hidden(N, "cpu")
    steps, ret, done_eps, finished = [[] for _ in range(N)], np.zeros(N), [], np.zeros(N, int)
    while (finished < share).any():
        values = {a: v for a in attrs if (v := env_attr(envs, a)) is not None}
        for i in range(N):
            steps[i].append((index_obs(obs, i), {a: v[i] for a, v in values.items()}))
        action, hidden = agent.get_actions(*obs_to_torch(obs, "cpu"), hidden, greedy=True)
        obs, rew, term, trunc, _ = envs.step(action.numpy())
        ret += rew
        done = term | trunc
        for i in np.flatnonzero(done):
            if finished[i] < share:
                done_eps.append(episode(steps[i], ret[i]))
            finished[i] += 1
            steps[i], ret[i] = [], 0.0
        hidden = agent.traj.reset_hidden(hidden, torch.as_tensor(done))
    return done_eps


def episode(steps, ret):
    stack = lambda xs: np.stack([np.asarray(x) for x in xs])
    obs = [o for o, _ in steps]
    return {
        "obs": {k: stack([o["obs"][k] for o in obs]) for k in obs[0]["obs"]},
        "rl2": stack([o["rl2"] for o in obs]),
        "time": stack([o["time"] for o in obs]),
        **{a: [v[a] for _, v in steps] for a in steps[0][1]},
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
    mod, args, envs, agent = load_run(opts.run_name[0], opts.script)
    if not any(hasattr(m, "split_heads") for m in agent.traj.modules()):
        raise UserError(
            f"run {opts.run_name[0]!r} has no attention to draw: its memory is --traj-encoder {args.traj_encoder} "
            "(attention needs transformer; `probe` reads any memory's states)"
        )
    eps = play(agent, envs, opts.episodes, opts.seed)
    n_layers, what = len(agent.traj.layers), marked_steps(eps[0])[1]
    # per layer: each episode's weight on its marked steps, by query step (queries after the first marked step)
    on_marked = [[] for _ in range(n_layers)]  # (H, T) arrays, NaN where no marked step is seen yet
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
        if j == example:
            maps = [w.mean(0).numpy() for w in episode_attention(agent, ep)]
    T_max = max(len(e["time"]) for e in eps)
    pad = lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, T_max - a.shape[-1])], constant_values=np.nan)
    by_step = [np.stack([pad(m) for m in on_marked[layer]]) for layer in range(n_layers)]  # (episodes, H, T)
    uniform = np.nanmean(np.stack([pad(s) for s in shares]), 0)
    summary = {
        "run": opts.run_name[0],
        "env_id": args.eval_env_id,
        "episodes": len(eps),
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
            }
        )
    draw_attention(opts, summary, by_step, uniform, maps, marked_steps(eps[example])[0], eps[example])
    return summary


def draw_attention(opts, summary, by_step, uniform, maps, marks, ep):
    plt = pyplot()
    from matplotlib.colors import LogNorm

    n = len(maps)
    fig, axes = plt.subplots(n, 2, figsize=(11, 3.6 * n + 0.6), squeeze=False)
    what = summary["marked"]
    for layer, (ax_map, ax_line) in enumerate(axes):
        shown = np.where(maps[layer] > 0, np.clip(maps[layer], 1e-3, 1), np.nan)  # blank: keys a query cannot see
        im = ax_map.imshow(shown, norm=LogNorm(1e-3, 1), cmap="magma", origin="upper", interpolation="nearest")
        for m in marks:
            ax_map.axvline(m, color="tab:cyan", lw=0.8, ls=":")
        ax_map.set(xlabel="key step (attended to)", ylabel="query step (acting)")
        ax_map.set_title(f"layer {layer + 1}: one episode's attention, heads averaged", fontsize=10)
        fig.colorbar(im, ax=ax_map, fraction=0.046, pad=0.03)
        mean = np.nanmean(by_step[layer], 0)  # (H, T): each head's mean over episodes
        x = np.arange(mean.shape[1])
        heads = [-1 if h is None else h for h in summary["layers"][layer]["last_step_on_marked_per_head"]]
        top = int(np.argmax(heads))
        for line in mean:
            ax_line.plot(x, line, color="tab:blue", lw=0.6, alpha=0.35)
        ax_line.plot(x, mean[top], color="tab:red", lw=0.9, label=f"head {top + 1}: the last step's top head")
        ax_line.plot(x, mean.mean(0), color="tab:blue", lw=2, label="heads averaged (thin: each head)")
        ax_line.plot(x, uniform, color="0.4", ls="--", lw=1.2, label="if attention were uniform")
        s = summary["layers"][layer]
        ax_line.set_yscale("log")
        ax_line.set_ylim(1e-4, 1.5)
        ax_line.set(xlabel="query step", ylabel="weight on the dotted steps")
        ax_line.set_title(
            f"last step: {f2(s['last_step_on_marked'])}, top head {f2(max(heads) if max(heads) >= 0 else None)} "
            f"(uniform {f2(s['last_step_uniform'])}); all steps: {f2(s['all_steps_on_marked'])} "
            f"({f2(s['all_steps_uniform'])})",
            fontsize=9,
        )
        ax_line.legend(fontsize=8, loc="lower left")
    fig.suptitle(
        f"{summary['run']} ({summary['env_id']}): what each acting step attends to\n{summary['episodes']} greedy "
        f"episodes (mean return {summary['mean_return']:.2f}); dotted: {what}",
        fontsize=10,
    )
    save(fig, opts, "attention", summary)


# ----------------------------------------------------- probe -----------------------------------------------------
def fit_probe(x, y, classes, l2=1e-3):
    """Multinomial logistic regression on standardized features (full-batch L-BFGS) -> predict(x)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
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


def probe_curve(feats, labels, classes, min_episodes=10):
    """Held-out balanced accuracy of a probe per step t: fit on the even-numbered episodes' states at t, scored on the
    odd-numbered ones (NaN where either half has fewer than min_episodes episodes that reach t, or one class)."""
    scores = []
    for t in range(max(len(f) for f in feats)):
        halves = [[i for i in range(h, len(feats), 2) if len(feats[i]) > t] for h in (0, 1)]
        if min(map(len, halves)) < min_episodes or len({labels[i] for i in halves[0]}) < 2:
            scores.append(float("nan"))
            continue
        (x_fit, y_fit), (x_test, y_test) = [
            (np.stack([feats[i][t] for i in h]), np.array([labels[i] for i in h])) for h in halves
        ]
        scores.append(balanced_accuracy(fit_probe(x_fit, y_fit, classes)(x_test), y_test))
    return scores


def cmd_probe(opts):
    summary = {"label": opts.label, "episodes": opts.episodes, "runs": {}}
    for name in opts.run_name:
        mod, args, envs, agent = load_run(name, opts.script)
        eps = play(agent, envs, opts.episodes, opts.seed, attrs=(opts.label,))
        if opts.label not in eps[0]:
            raise UserError(
                f"--label {opts.label!r}: env {args.eval_env_id} has no attribute {opts.label!r} (the probe reads an "
                "attribute of the env that holds the episode's cue, e.g. T-Maze's goal)"
            )
        values = [ep[opts.label][0] for ep in eps]  # the episode's cue, as drawn at reset
        kinds = sorted(set(map(str, values)))
        if len(kinds) > 20:
            raise UserError(
                f"--label {opts.label!r} takes {len(kinds)} values: the probe classifies a cue of 2-20 values"
            )
        labels = [kinds.index(str(v)) for v in values]
        feats = [states(agent, ep).numpy() for ep in eps]
        scores = probe_curve(feats, labels, len(kinds))
        summary["runs"][name] = {
            "traj_encoder": args.traj_encoder,
            "env_id": args.eval_env_id,
            "mean_return": float(np.mean([e["return"] for e in eps])),
            "chance": 1 / len(kinds),
            "accuracy": [round(s, 4) for s in scores],
        }
        print(f"{name} ({args.traj_encoder}): probe accuracy first step {scores[0]:.2f}, last step {scores[-1]:.2f}")
    draw_probe(opts, summary)
    return summary


def draw_probe(opts, summary):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, (name, r) in enumerate(summary["runs"].items()):  # wide to thin, solid to dotted: equal curves stay seen
        ax.plot(
            r["accuracy"],
            lw=max(4.5 - 1.5 * i, 2.0),
            ls=["-", "--", ":"][i % 3],
            label=f"{name} ({r['traj_encoder']}; return {r['mean_return']:.2f} in these episodes)",
        )
    chance = next(iter(summary["runs"].values()))["chance"]
    ax.axhline(chance, color="0.6", ls="--", lw=1, label="chance", zorder=0)
    ax.set(xlabel="step of the episode", ylabel="held-out balanced accuracy", ylim=(0, 1.05))
    ax.set_title(
        f"the cue ({summary['label']}) read out of the memory's state by a linear probe, per step\n"
        f"({summary['episodes']} greedy episodes: fit on half, scored on the other half)",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="lower left")
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
            rows += [(name, m.group(1), step, int(m.group(2)), value) for _, step, value in events]
    if not rows:
        raise UserError(
            f"run {name!r} logged no eval/<env>/attempt <i> {metric}: its env reports no attempts (a k-shot env does, "
            "e.g. envs:MetaFrozenLake-HideK-v0 through envs/kshot.py), or it has not evaluated yet"
        )
    return sorted(rows, key=lambda r: (r[1], r[2], r[3]))


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
        table = {}  # env steps -> [value per attempt]
        for r in rows:
            if (r[0], r[1]) == (run, env):
                table.setdefault(r[2], {})[r[3]] = r[4]
        steps = sorted(table)
        k = max(max(v) for v in table.values()) + 1
        grid = np.array([[table[s].get(a, np.nan) for a in range(k)] for s in steps])  # (evals, attempts)
        summary["runs"][f"{run} {env}"] = {"env_steps": steps, "by_attempt": grid.round(4).tolist()}
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
            ax.plot(range(k), grid[i], "o-", color=color, label=f"{steps[i]:,} env steps")
        ax.set(xlabel="attempt", ylabel=f"eval {metric}", ylim=(0, top * 1.05), xticks=range(k))
        ax.set_title(label, fontsize=10)
        ax.legend(fontsize=8, loc="best")
        ax = axes[1, col]
        for a in range(k):
            ax.plot(steps, grid[:, a], color=plt.get_cmap("plasma")(a / max(k, 2)), label=f"attempt {a}")
        ax.set(xlabel="env steps", ylabel=f"eval {metric}", ylim=(0, top * 1.05))
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(f"eval {metric} per attempt: top, at points of training; bottom, over training", fontsize=10)
    save(fig, opts, "attempts", summary)


# ------------------------------------------------------ output ------------------------------------------------------
def pyplot():
    import matplotlib

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
            s.add_argument("--episodes", type=int, default=32 if name == "attention" else 200)
            s.add_argument("--seed", type=int, default=1, help="the eval envs' seed")
            s.add_argument("--script", help="the script of the run (default: the one its flags.json names)")
        if name == "probe":
            s.add_argument("--label", default="goal", help="the env attribute that holds the episode's cue")
        if name == "attempts":
            s.add_argument("--metric", choices=["success", "return"], help="default: success")
            s.add_argument("--record", help="also write the rows drawn to this CSV")
            s.add_argument("--csv", help="draw a recorded CSV instead of runs")
    opts = p.parse_args(argv)
    try:
        if opts.command == "attention" and len(opts.run_name) > 1:
            raise UserError(f"attention: one --run-name, got {len(opts.run_name)}")
        if getattr(opts, "episodes", 2) < 2:
            raise UserError(f"--episodes {opts.episodes}: at least 2")
        if opts.command == "attempts" and bool(opts.csv) == bool(opts.run_name):
            raise UserError("attempts: give --run-name NAME ... or --csv FILE (one of the two)")
        return {"attention": cmd_attention, "probe": cmd_probe, "attempts": cmd_attempts}[opts.command](opts)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
