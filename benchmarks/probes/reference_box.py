"""The reference AMAGO (UT-Austin-RPL/amago at 2d85600) on MuJoCo HalfCheetah-v4 at amago_agent.py's default sizes and
settings, logging its Box actor's health per epoch, for a side-by-side with our script's `actor/*` metrics.

Runs in the reference's own venv (AMAGO 3.3 wants gymnasium <= 0.29.1; ours runs on 1.x). Set it up once:

    python -m venv ~/amago-ref
    ~/amago-ref/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    ~/amago-ref/bin/pip install "gymnasium[mujoco]==0.29.1"
    git clone https://github.com/UT-Austin-RPL/amago ~/amago-ref-src && git -C ~/amago-ref-src checkout 2d85600
    ~/amago-ref/bin/pip install -e ~/amago-ref-src

From a local mirror that lacks one docs image (a plain checkout then fails), clone with `--no-checkout`, then
`git -C ~/amago-ref-src sparse-checkout set --no-cone '/*' '!/docs/media/in_context_rl.png'` before the checkout.

Then, from this repository (about 57 s per epoch of 200 updates on one CPU thread; 1,600 updates take ~8 minutes):

    OMP_NUM_THREADS=1 ~/amago-ref/bin/python benchmarks/probes/reference_box.py --seed 1 --updates 1600 \\
        --out /tmp/ref_s1.csv --greedy-eval-episodes 8

Builds the reference's `amago.Experiment` as benchmarks/compare_reference.py's `reference_experiment()` does (gin
bindings for the sizes; VanillaAttention, as its FlashAttention needs CUDA; torch.compile off, as it fails on CPU) with
8 sync actors, 100 steps each per epoch and 200 updates per epoch, then runs its loop by hand:
`collect_new_training_data()`, the dataset's end-of-collection FIFO step, a fresh dataloader, and
`Experiment.train_step` on each batch, so the reference's exact update runs. Epochs before the buffer holds two files (the reference's `ready_for_training`) collect only, as in its `learn`.
--seed seeds torch, numpy, random and each env's first reset; the reference's exploration noise draws a fresh
`np.random.default_rng()` at every episode reset, so two runs of one seed still differ.

After each epoch one CSV row, from the epoch's last update (as our script logs the last update's metrics):
- greedy_abs_action, greedy_action_spread, pre_tanh_std: the actor's distribution for the acting (last) gamma at every
  real transition of that update's batch, as `def health` in amago_agent.py: mean |tanh(mu)|; the population std of
  tanh(mu) over the batch's steps per action dim, averaged over dims; the mean Gaussian std.
- bc_filter_frac: the share of buffer actions with advantage > 0 for the last gamma (the reference's own filter stat,
  logged when `log_step=True`, which the last update of an epoch sets).
- grad_norm: what the reference's `accelerator.clip_grad_norm_` returned. It clips `policy.parameters()`, which holds
  `maximized_critics` (the DPG loss's critic copy): that copy gets gradients but is in no optimizer group, so
  `optimizer.zero_grad()` never clears them: they carry over, rescaled by each clip's coefficient. grad_norm_trainable
  is the norm over the optimizer's parameters only, grad_norm_maximized_critics the copy's share (the two add in
  quadrature to grad_norm).
- critic_loss, actor_loss, lr; train_return: the mean return of the training episodes finished so far (empty before
  the first, which ends at env step 1,000 per actor).
--env-steps stops it at a budget of env steps instead (the epoch that reaches it ends the run); --eval-every N adds
eval_return, the mean return of --eval-episodes greedy episodes after every N-th epoch's training (as our script's
--eval-interval). Ends with `RESULT {json}`: the last row, the trainable parameter count, the seed, wall seconds and, with
--greedy-eval-episodes N, the mean return of N greedy (tanh(mu)) 1,000-step episodes after the last epoch.
"""

import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")  # its torch.compile'd critic and n-step target fail on CPU

import argparse
import csv
import importlib.machinery
import json
import random
import sys
import tempfile
import time
import types

import numpy as np
import torch

ENV_ID = "HalfCheetah-v4"
# amago_agent.py's defaults at the CPU size (272,368 trainable parameters there on HalfCheetah)
SIZES = dict(tstep_hidden=128, tstep_dim=64, actor_hidden=128, critic_hidden=128, d_model=64, n_layers=2, d_ff=256)
N_HEADS, MAX_SEQ_LEN, BATCH_SIZE, ACTORS, STEPS_PER_EPOCH, UPDATES_PER_EPOCH = 8, 32, 24, 8, 100, 200
COLUMNS = [
    "epoch",
    "env_steps",
    "eval_return",
    "updates",
    "greedy_abs_action",
    "greedy_action_spread",
    "pre_tanh_std",
    "bc_filter_frac",
    "grad_norm",
    "critic_loss",
    "train_return",
    "grad_norm_trainable",
    "grad_norm_maximized_critics",
    "actor_loss",
    "lr",
    "epoch_seconds",
]


def import_amago():
    """amago.agent imports wandb only to log, which this probe never does: a stub stands in where it fails."""
    try:
        import wandb  # noqa: F401
    except ImportError:
        sys.modules["wandb"] = types.ModuleType("wandb")
        sys.modules["wandb"].__spec__ = importlib.machinery.ModuleSpec("wandb", None)  # for find_spec's callers
    import amago

    return amago


def bind_gin(amago):
    """The sizes and the agent/exploration settings, bound where the reference reads them (gin)."""
    import gin

    tf = "amago.nets.traj_encoders.TformerTrajEncoder"
    bindings = {
        "amago.nets.tstep_encoders.FFTstepEncoder.n_layers": 2,
        "amago.nets.tstep_encoders.FFTstepEncoder.d_hidden": SIZES["tstep_hidden"],
        "amago.nets.tstep_encoders.FFTstepEncoder.d_output": SIZES["tstep_dim"],
        "amago.nets.actor_critic.Actor.d_hidden": SIZES["actor_hidden"],
        "amago.nets.actor_critic.NCritics.d_hidden": SIZES["critic_hidden"],
        f"{tf}.d_model": SIZES["d_model"],
        f"{tf}.n_layers": SIZES["n_layers"],
        f"{tf}.n_heads": N_HEADS,
        f"{tf}.d_ff": SIZES["d_ff"],
        f"{tf}.attention_type": amago.nets.transformer.VanillaAttention,  # its FlashAttention default needs CUDA
        "amago.agent.Agent.num_critics": 4,
        "amago.agent.Agent.num_critics_td": 2,
        "amago.agent.Agent.offline_coeff": 0.1,
        "amago.agent.Agent.online_coeff": 1.0,
        "amago.agent.Agent.gamma": 0.999,  # plus Multigammas.continuous, left at its default (= ours)
        "amago.agent.Agent.tau": 0.003,
        "amago.agent.Agent.reward_multiplier": 10.0,
        "amago.agent.Agent.popart": True,
        "amago.envs.exploration.EpsilonGreedy.eps_start": 1.0,
        "amago.envs.exploration.EpsilonGreedy.eps_end": 0.05,
        # ours anneals over 12,500 env steps per actor (the reference's default: 1M)
        "amago.envs.exploration.EpsilonGreedy.steps_anneal": 12_500,
    }
    with gin.unlock_config():
        for k, v in bindings.items():
            gin.bind_parameter(k, v)


def env_maker(amago, seed):
    """A make_env whose every call seeds its env differently (the reference's sync pool resets them unseeded)."""
    import gymnasium as gym
    from amago.envs import AMAGOEnv

    count = [0]

    def make():
        env = gym.make(ENV_ID)
        env.reset(seed=seed + count[0])  # later unseeded resets continue this env's generator
        count[0] += 1
        return AMAGOEnv(env, env_name=ENV_ID)

    return make


def build_experiment(amago, workdir, seed, padded_sampling):
    bind_gin(amago)
    exp = amago.Experiment(
        run_name="ref_box",
        ckpt_base_dir=workdir,
        max_seq_len=MAX_SEQ_LEN,
        dataset=amago.loading.DiskTrajDataset(dset_root=workdir, dset_name="ref_box", dset_max_size=20_000),
        tstep_encoder_type=amago.nets.tstep_encoders.FFTstepEncoder,
        traj_encoder_type=amago.nets.traj_encoders.TformerTrajEncoder,
        agent_type=amago.agent.Agent,
        make_train_env=env_maker(amago, seed * 1000),
        make_val_env=env_maker(amago, seed * 1000 + 500),  # only for --greedy-eval-episodes
        val_timesteps_per_epoch=1000,
        parallel_actors=ACTORS,
        env_mode="sync",
        exploration_wrapper_type=amago.envs.exploration.EpsilonGreedy,
        sample_actions_train=True,
        traj_save_len=256,  # as ours (--traj-save-len), staggered by +-max_seq_len as ours
        padded_sampling=padded_sampling,
        log_to_wandb=False,
        verbose=False,
        dloader_workers=0,  # one thread: batches load in the main process
        batch_size=BATCH_SIZE,
        train_timesteps_per_epoch=STEPS_PER_EPOCH,
        train_batches_per_epoch=UPDATES_PER_EPOCH,
        learning_rate=6e-4,
        lr_warmup_steps=500,
        grad_clip=1.0,
        l2_coeff=1e-3,
        mixed_precision="no",
    )
    exp.start()
    return exp


def trainable_count(policy):
    return sum(p.numel() for p in policy.trainable_params if p.requires_grad)


def resolved_settings(amago, exp):
    """The settings read back from the built objects (not from the bindings), so a name gin ignored shows."""
    pol = exp.policy
    expl = exp.train_envs.envs[0].env  # SequenceWrapper -> EpsilonGreedy
    assert isinstance(expl, amago.envs.exploration.EpsilonGreedy)
    tf = pol.traj_encoder
    attn = tf.tformer.layers[0].attention_layer.self_attention
    return {
        "env": ENV_ID,
        "obs_dim": exp.rl2_space["obs"]["observation"].shape[0],
        "action_space": str(exp.train_envs.single_action_space),
        "tstep_encoder": f"{type(pol.tstep_encoder).__name__} out {pol.tstep_encoder.emb_dim}",
        "traj_encoder": f"{type(tf).__name__} d_model {tf.d_model} n_layers {tf.n_layers} n_heads {tf.n_heads}",
        "attention": type(attn).__name__,
        "actor": f"{type(pol.actor).__name__} {type(pol.actor.policy_dist).__name__}",
        "max_seq_len": exp.max_seq_len,
        "batch_size": exp.batch_size,
        "parallel_actors": exp.parallel_actors,
        "env_mode": exp.env_mode,
        "train_timesteps_per_epoch": exp.train_timesteps_per_epoch,
        "train_batches_per_epoch": exp.train_batches_per_epoch,
        "learning_rate": exp.optimizer.param_groups[0]["initial_lr"],
        "lr_warmup_steps": exp.lr_warmup_steps,
        "grad_clip": exp.grad_clip,
        "weight_decay": exp.optimizer.param_groups[0]["weight_decay"],
        "gammas": [round(g, 4) for g in pol.gammas.tolist()],
        "tau": pol.tau,
        "reward_multiplier": pol.reward_multiplier,
        "num_critics": pol.num_critics,
        "num_critics_td": pol.num_critics_td,
        "offline_coeff": pol.offline_coeff,
        "online_coeff": pol.online_coeff,
        "critic_loss_weight": pol.critic_loss_weight,
        "popart": pol.popart.enabled,
        "exploration": f"{type(expl).__name__} eps {expl.eps_start_start} -> {expl.eps_start_end} over "
        f"{round((expl.eps_start_start - expl.eps_start_end) / expl.start_global_slope)} steps/actor, "
        f"randomize {expl.randomize_eps}",
        "traj_save_len": exp.traj_save_len,
        "padded_sampling": exp.padded_sampling,
        "dset_max_size": exp.dataset.dset_max_size,
    }


def grad_norm(params):
    grads = [p.grad.detach().flatten() for p in params if p.grad is not None]
    return torch.cat(grads).norm().item() if grads else 0.0


class Probe:
    """Records, around the reference's own train_step, what its logs leave out: the clip's returned norm (with its
    trainable and maximized-critic shares) and the actor's distribution on the update's batch."""

    def __init__(self, exp):
        self.exp, self.policy, self.capture = exp, exp.policy, False
        self.dist, self.norms = None, {}
        clip = exp.accelerator.clip_grad_norm_

        def clip_and_record(parameters, max_norm, *args, **kwargs):
            # the shares first: the clip rescales the gradients in place
            self.norms = {
                "grad_norm_trainable": grad_norm(list(self.policy.trainable_params)),
                "grad_norm_maximized_critics": grad_norm(list(self.policy.maximized_critics.parameters())),
            }
            total = clip(parameters, max_norm, *args, **kwargs)
            self.norms["grad_norm"] = float(total)
            return total

        exp.accelerator.clip_grad_norm_ = clip_and_record
        self.policy.actor.register_forward_hook(self.keep_dist)

    def keep_dist(self, module, inputs, output):
        if self.capture:  # only the training forward of the epoch's last update (rollouts call the actor too)
            self.dist = output

    def update(self, batch, last):
        self.capture = last
        info = self.exp.train_step(batch, log_step=last)  # log_step: the reference computes its filter stats
        self.capture = False
        return info

    def health(self, batch):
        """amago_agent.py's `health` on the captured distribution: the last gamma at every real transition."""
        mu, std = self.dist.loc[:, :-1, -1].detach(), self.dist.scale[:, :-1, -1].detach()  # (B, L-1, A)
        real = ~(batch.rl2s == self.policy.pad_val).all(-1)[:, 1:]  # the reference's state_mask: (B, L-1)
        a, std = torch.tanh(mu)[real], std[real]  # (steps, A)
        return {
            "greedy_abs_action": a.abs().mean().item(),
            "greedy_action_spread": a.std(0, correction=0).mean().item(),
            "pre_tanh_std": std.mean().item(),
        }


def filter_frac(info, gamma):
    """The reference's 'Pct. of Actions Approved by Binary FBC (gamma = 0.999)', as a share."""
    key = f"Pct. of Actions Approved by Binary FBC (gamma = {gamma: .3f})"
    return float(info[key]) / 100.0


def finished_returns(amago, envs):
    """The returns of the episodes finished since the envs' last `reset_stats` (each `interact` call clears it)."""
    out = []
    for history in amago.utils.call_async_env(envs, "return_history"):
        for scores in history.data.values():
            out.extend(float(s) for s in scores)
    return out


def train_epoch(exp, probe, budget):
    """Up to `budget` of the epoch's updates through a fresh dataloader, as `Experiment.learn` does; returns the count
    and the last update's info and actor health."""
    exp.policy_aclr.train()
    n = min(budget, exp.train_batches_per_epoch)
    info = None
    for i, batch in enumerate(exp.train_dloader):
        if i >= n:
            break
        info = probe.update(batch, last=i == n - 1)
        last_batch = batch
    return n, info, probe.health(last_batch) if info is not None else {}


def greedy_eval(amago, exp, episodes):
    """Mean return of `episodes` greedy (tanh(mu)) 1,000-step HalfCheetah episodes on the val envs, 8 at a time."""
    returns = []
    while len(returns) < episodes:
        exp.val_envs.reset()
        exp.interact(exp.val_envs, 1000, hidden_state=None, sample=False)
        returns += finished_returns(amago, exp.val_envs)
    return float(np.mean(returns[:episodes]))


def run(args, workdir):
    amago = import_amago()
    exp = build_experiment(amago, workdir, args.seed, args.padded_sampling)
    policy = exp.policy
    params = trainable_count(policy)
    print(json.dumps(resolved_settings(amago, exp), indent=1))
    print(f"reference: {params:,} trainable parameters ({amago.utils.count_params(policy):,} with target copies)")
    probe, acting_gamma = Probe(exp), policy.gammas[-1].item()
    start, updates, epoch, returns, row = time.time(), 0, 0, [], {}
    with open(args.out, "w", newline="") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        env_steps = 0
        while updates < args.updates and env_steps < args.env_steps and epoch < args.max_epochs:
            t0 = time.time()
            exp.epoch = epoch
            exp.collect_new_training_data()
            returns += finished_returns(amago, exp.train_envs)
            exp.dataset.on_end_of_collection(experiment=exp)  # the FIFO step, then a dataloader over the new files
            exp.init_dloaders()
            n, info, health = 0, None, {}
            if exp.dataset.ready_for_training:  # else collect only, as Experiment.learn
                n, info, health = train_epoch(exp, probe, args.updates - updates)
            updates += n
            row = {
                "epoch": epoch,
                "env_steps": sum(amago.utils.call_async_env(exp.train_envs, "total_frames")),
                "updates": updates,
                "train_return": round(float(np.mean(returns)), 2) if returns else "",
                "epoch_seconds": round(time.time() - t0, 1),
            }
            if info is not None:
                row |= health | probe.norms
                row |= {
                    "bc_filter_frac": filter_frac(info, acting_gamma),
                    "critic_loss": float(info["Critic Loss"]),
                    "actor_loss": float(info["Actor Loss"]),
                    "lr": info["Learning Rate"],
                }
            env_steps = row["env_steps"]
            if args.eval_every and (epoch + 1) % args.eval_every == 0:  # as our --eval-interval: after epoch's training
                row["eval_return"] = greedy_eval(amago, exp, args.eval_episodes)
            row = {k: float(f"{v:.6g}") if isinstance(v, float) else v for k, v in row.items()}  # lr starts ~1e-6
            out.writerow(row)
            f.flush()
            print(" ".join(f"{k}={row.get(k, '')}" for k in COLUMNS), flush=True)
            epoch += 1
    result = dict(row, params=params, seed=args.seed)
    if args.greedy_eval_episodes:
        result["greedy_eval_return"] = round(greedy_eval(amago, exp, args.greedy_eval_episodes), 2)
        result["greedy_eval_episodes"] = args.greedy_eval_episodes
    result["wall_seconds"] = round(time.time() - start, 1)
    print("RESULT " + json.dumps(result), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--updates", type=int, default=1600, help="stop after the epoch that reaches this many updates")
    p.add_argument("--env-steps", type=int, default=10**9, help="or after the epoch that reaches this many env steps")
    p.add_argument("--eval-every", type=int, default=0, help="a greedy eval after every this many epochs (0: none)")
    p.add_argument("--eval-episodes", type=int, default=8, help="episodes of each --eval-every evaluation")
    p.add_argument("--out", default="/tmp/reference_box.csv", help="the per-epoch CSV")
    p.add_argument(
        "--greedy-eval-episodes", type=int, default=0, help="greedy 1,000-step episodes after the last epoch"
    )
    p.add_argument(
        "--padded-sampling",
        default="none",
        choices=["none", "right", "left", "both"],
        help="the reference's default is none; ours is right",
    )
    p.add_argument("--max-epochs", type=int, default=10_000, help="a bound in case the buffer never becomes ready")
    p.add_argument("--workdir", default=None, help="where the replay buffer and checkpoints go (default: a temp dir)")
    args = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.workdir:
        run(args, args.workdir)
        return
    with tempfile.TemporaryDirectory() as workdir:
        run(args, workdir)


if __name__ == "__main__":
    main()
