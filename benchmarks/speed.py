"""Time amago_agent.py's update and rollout step, per trajectory encoder, on this machine.

    python benchmarks/speed.py                                  # CartPole, every encoder
    python benchmarks/speed.py --env-id Pendulum-v1 --encoders transformer --set critic_hidden=64
    python benchmarks/speed.py --encoders transformer --compile   # the loss through torch.compile (not in the scripts)

The update is timed on a fixed batch shaped like a real one (B sequences of max_seq_len+1 steps), the rollout on the
real vector env with the default number of actors. Run it alone: a second torch process on the same cores halves
both figures. One `RESULT {json}` line per encoder (final_eval_return is null: nothing is trained here;
peak_rss_mb is the process's peak so far, so it grows with each encoder timed after the first).
"""

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import amago_agent as amago  # noqa: E402


def fake_batch(agent, obs_space, B, L):
    obs = {k: torch.randn(B, L, *space.shape) for k, space in obs_space.spaces.items()}
    A = agent.A
    if agent.kind == "discrete":
        actions = torch.nn.functional.one_hot(torch.randint(0, A, (B, L - 1)), A).float()
    else:
        actions = torch.rand(B, L - 1, A) * 2 - 1
    return {"obs": obs, "rl2": torch.randn(B, L, A + 1), "time": torch.randint(0, 500, (B, L)),
            "mask": torch.ones(B, L, dtype=torch.bool), "actions": actions,
            "rewards": torch.randn(B, L - 1), "terminated": torch.zeros(B, L - 1, dtype=torch.bool)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--encoders", nargs="+", default=["ff", "gru", "transformer", "mamba"])
    p.add_argument("--updates", type=int, default=50)
    p.add_argument("--rollout-steps", type=int, default=200)
    p.add_argument("--set", nargs="*", default=[], help="Args overrides, e.g. critic_hidden=64 batch_size=32")
    p.add_argument("--compile", action="store_true", help="time the loss (forward and backward) under torch.compile")
    a = p.parse_args()
    from accelerate import Accelerator

    for enc in a.encoders:
        args = amago.Args(env_id=a.env_id, traj_encoder=enc)
        for kv in a.set:
            k, v = kv.split("=")
            setattr(args, k, type(getattr(args, k))(v))
        env_id = amago.resolve_env_id(args.env_id)
        envs = amago.make_vec_env(env_id, args.num_envs, "sync", args.seed)
        agent = amago.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
        opt = torch.optim.AdamW(agent.trainable_parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, fused=True)  # as main
        acc = Accelerator(cpu=True)
        agent, opt = acc.prepare(agent, opt)
        batch = fake_batch(agent, envs.single_observation_space["obs"], args.batch_size, args.max_seq_len + 1)
        agent.train()
        if a.compile:
            agent.forward = torch.compile(agent.forward)
        t0 = time.time()
        for _ in range(3):  # warm-up: allocator, lazy init (and the compile)
            amago.train_step(agent, opt, acc, batch, args, 100)
        warmup_s = time.time() - t0
        t0 = time.time()
        for _ in range(a.updates):
            amago.train_step(agent, opt, acc, batch, args, 100)
        update_s = (time.time() - t0) / a.updates

        agent.eval()
        obs, _ = envs.reset(seed=args.seed)
        hidden = agent.traj.init_hidden(args.num_envs, "cpu")
        t0 = time.time()
        with torch.no_grad():
            for _ in range(a.rollout_steps):
                actions, hidden = agent.get_actions(*amago.obs_to_torch(obs, "cpu"), hidden)
                obs, _, term, trunc, _ = envs.step(actions.numpy())
                hidden = agent.traj.reset_hidden(hidden, torch.as_tensor(term | trunc))
        rollout_s = time.time() - t0
        env_steps = a.rollout_steps * args.num_envs
        n_params = sum(p.numel() for p in agent.trainable_parameters())
        print(f"{enc:12s} {n_params:9,d} params  update {update_s * 1000:6.1f} ms ({1 / update_s:5.1f}/s)  "
              f"rollout {env_steps / rollout_s:7.0f} env steps/s ({args.num_envs} actors)", flush=True)
        result = {
            "env_id": env_id, "traj_encoder": enc, "env_steps": env_steps, "updates": a.updates,
            "wall_s": round(update_s * a.updates + rollout_s, 2), "env_steps_per_s": round(env_steps / rollout_s, 1),
            "updates_per_s": round(1 / update_s, 2), "update_ms": round(update_s * 1000, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "trainable_params": n_params, "threads": torch.get_num_threads(), "compile": a.compile,
            "warmup_s": round(warmup_s, 1), "final_eval_return": None,
        }
        print("RESULT " + json.dumps(result), flush=True)
        envs.close()


if __name__ == "__main__":
    main()
