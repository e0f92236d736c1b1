"""Does the critic know where a CartPole episode ends? Probes checkpoints of CartPole runs made by benchmarks/run.py
with the CartPole recipe of classic_control.sh (benchmarks/README.md, "What fixed CartPole"):

- buffer (gru only, with --buffer-run): the whole episodes in one run's replay buffer that ended at the track's edge
  (|x| > 2.2 at the last step, started at t = 0) go through each checkpoint's gru from t = 0; it prints Q(gamma=0.999)
  of the action taken one step before the termination (true value: 1 x the reward multiplier) and at mid-episode.
- greedy (--greedy N): N greedy episodes per checkpoint; it prints each episode's length and final cart position x
  (|x| = 2.4 ends an episode), and for the gru Q(0.999) of the action taken at the first and last step.

    python benchmarks/probes/cartpole_edge_q.py --buffer-run RUN --greedy 3 RUN OTHER_RUN   # runs in benchmarks/out/
    python benchmarks/probes/cartpole_edge_q.py --encoder transformer --greedy 10 RUN
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import amago_agent as amago  # noqa: E402

OUT = ROOT / "benchmarks" / "out"


def q_taken(agent, obs, rl2, time, actions):  # one whole episode through the gru from t = 0 -> Q(0.999, a_t), (T,)
    s = agent.traj(agent.embed({"observation": obs[None]}, rl2[None]), time[None])
    q = agent.popart.raw(agent.critics(s).mean(2).transpose(-1, -2)).transpose(-1, -2)  # (1, T+1, G, A)
    return q[0, torch.arange(len(actions)), -1, actions].numpy()


def edge_episodes(run, last_files):
    files = sorted((OUT / run / "buffers").rglob("*.npz"), key=lambda f: f.stat().st_mtime)[-last_files:]
    eps = []
    for f in files:
        with np.load(f) as z:
            eps.append({k: z[k] for k in z.files})
    term = [e for e in eps if e["terminated"][-1]]
    edge = [e for e in term if abs(e["obs_observation"][-2, 0]) > 2.2]
    print(
        f"{run}'s buffer, newest {len(files)} files: {len(term)} end in a termination, {len(edge)} of them at the edge"
    )
    return [e for e in edge if e["time"][0] == 0]  # whole episodes only


@torch.no_grad()
def greedy_episodes(agent, n, seed):
    envs = amago.make_vec_env("CartPole-v1", n, "sync", seed)
    obs, _ = envs.reset(seed=seed)
    hidden = agent.traj.init_hidden(n, "cpu")
    hist, live = [[] for _ in range(n)], np.ones(n, bool)  # per episode: (obs, rl2, time, action) per step
    while live.any():
        o, rl2, t = amago.obs_to_torch(obs, "cpu")
        a, hidden = agent.get_actions(o, rl2, t, hidden, greedy=True)
        for i in np.flatnonzero(live):
            hist[i].append((o["observation"][i], rl2[i], t[i], int(a[i])))
        obs, _, term, trunc, _ = envs.step(a.numpy())
        live &= ~(term | trunc)  # an actor's first episode is the one we keep
    return hist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+", help="runs under benchmarks/out whose checkpoint.pt to probe")
    p.add_argument("--encoder", default="gru", choices=["gru", "transformer"])
    p.add_argument("--buffer-run", help="the run whose replay buffer supplies edge-terminated episodes (gru)")
    p.add_argument("--last-files", type=int, default=300, help="read this many of the newest buffer files")
    p.add_argument("--greedy", type=int, default=0, help="greedy episodes to play per checkpoint")
    p.add_argument("--reward-multiplier", type=float, default=1.0)
    a = p.parse_args()
    torch.set_num_threads(1)
    eps = edge_episodes(a.buffer_run, a.last_files) if a.buffer_run else []
    space = amago.make_vec_env("CartPole-v1", 1, "sync", 0)
    for run in a.runs:
        ckpt = next((OUT / run / "runs").glob("*/checkpoint.pt"))  # runs/<run name at launch>/checkpoint.pt
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        args = amago.Args(
            env_id="CartPole-v1",
            traj_encoder=a.encoder,
            reward_multiplier=a.reward_multiplier,
            pos_emb="learned",
            max_time_idx=1,
        )
        agent = amago.Agent(args, space.single_observation_space["obs"], space.single_action_space)
        agent.load_state_dict(state["agent"])
        agent.eval()
        print(f"{run} ({state['counters']['updates']} updates)")
        if eps:
            with torch.no_grad():
                qs = [
                    q_taken(
                        agent,
                        *(torch.as_tensor(e[k]) for k in ("obs_observation", "rl2", "time")),
                        torch.as_tensor(e["actions"].argmax(-1)),
                    )
                    for e in eps
                ]
            half = np.mean([len(q) - len(q) // 2 for q in qs]) * a.reward_multiplier
            print(
                f"  {len(eps)} whole edge-terminated episodes: Q(0.999) one step before the edge "
                f"{np.mean([q[-1] for q in qs]):.1f} (true {a.reward_multiplier:.1f}); at mid-episode "
                f"{np.mean([q[len(q) // 2] for q in qs]):.1f} (true ~{half:.0f})"
            )
        for ep in greedy_episodes(agent, a.greedy, seed=123) if a.greedy else []:
            o, rl2, t, act = zip(*ep)
            x = torch.stack(o)[:, 0]
            line = f"  greedy: {len(ep)} steps, final x {x[-1]:+.2f}, max |x| {x.abs().max():.2f}"
            if a.encoder == "gru":
                with torch.no_grad():
                    q = q_taken(agent, torch.stack(o), torch.stack(rl2), torch.stack(t), torch.tensor(act))
                line += f", Q(0.999) first step {q[0]:.1f}, last step {q[-1]:.1f}"
            print(line)


if __name__ == "__main__":
    main()
