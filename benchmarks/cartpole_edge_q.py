"""Does the critic know where a CartPole episode ends? For CartPole runs made by benchmarks/run.py (gru), read the
whole edge-terminated episodes (|x| > 2.2 at the last step, started at t = 0) from one run's replay buffer and print,
for each checkpoint, Q(gamma=0.999) of the action taken one step before the termination (true value 1 x the reward
multiplier) and at mid-episode. README, "What fixed CartPole".

    python benchmarks/cartpole_edge_q.py --buffer-run rm_g_s2 rm_g_s2 ps_g_s2 --reward-multiplier 1
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import amago_agent as amago  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+", help="runs under benchmarks/out whose checkpoint.pt to probe (gru)")
    p.add_argument("--buffer-run", required=True, help="the run whose replay buffer supplies the episodes")
    p.add_argument("--last-files", type=int, default=60, help="read this many of the newest buffer files")
    p.add_argument("--reward-multiplier", type=float, default=1.0)
    a = p.parse_args()
    torch.set_num_threads(1)
    out = ROOT / "benchmarks" / "out"
    files = sorted((out / a.buffer_run / "buffers").rglob("*.npz"), key=lambda f: f.stat().st_mtime)[-a.last_files :]
    eps = []
    for f in files:
        with np.load(f) as z:
            e = {k: z[k] for k in z.files}
        if e["terminated"][-1] and abs(e["obs_observation"][-2, 0]) > 2.2 and e["time"][0] == 0:
            eps.append(e)
    print(f"{len(eps)} edge-terminated whole episodes among the newest {len(files)} files of {a.buffer_run}'s buffer")
    envs = amago.make_vec_env("CartPole-v1", 1, "sync", 0)
    for run in a.runs:
        state = torch.load(out / run / "runs" / run / "checkpoint.pt", map_location="cpu", weights_only=False)
        args = amago.Args(env_id="CartPole-v1", traj_encoder="gru", reward_multiplier=a.reward_multiplier)
        agent = amago.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
        agent.load_state_dict(state["agent"])
        agent.eval()
        last, mid = [], []
        with torch.no_grad():
            for e in eps:  # the whole episode through the gru from t = 0, as in a rollout
                obs = {"observation": torch.as_tensor(e["obs_observation"])[None]}
                s = agent.traj(agent.embed(obs, torch.as_tensor(e["rl2"])[None]), torch.as_tensor(e["time"])[None])
                q = agent.popart.raw(agent.critics(s).mean(2).transpose(-1, -2)).transpose(-1, -2)  # (1, L, G, A)
                act = torch.as_tensor(e["actions"].argmax(-1))
                qa = q[0, torch.arange(len(act)), -1, act].numpy()  # gamma = 0.999, action taken
                last.append(qa[-1])
                mid.append(qa[len(act) // 2])
        half = np.mean([len(e["actions"]) - len(e["actions"]) // 2 for e in eps])
        print(f"{run} ({state['counters']['updates']} updates): Q(0.999) one step before the edge {np.mean(last):.1f} "
              f"(true {a.reward_multiplier:.1f}); at mid-episode {np.mean(mid):.1f} (true ~{half * a.reward_multiplier:.0f})")


if __name__ == "__main__":
    main()
