"""AMAGO (Grigsby et al., ICLR 2024): in-context RL with a long-sequence off-policy actor-critic, in one file.

Each observation comes with rl2 = [previous reward, previous action] and its time index. A timestep encoder turns
each step into a token, a sequence model (Transformer, GRU or Mamba) turns a window of tokens into states, and one
actor and an ensemble of critics read every state for several discounts (gammas) at once. Trajectories go to a disk
replay buffer; training samples windows of max_seq_len steps. One loss trains it all, through the sequence model:
    critic = squared TD error of each critic and gamma, REDQ targets from EMA target critics, PopArt-normalized
    actor  = online_coeff * -Q(s, a ~ pi)                 (DPG; an exact expectation over Discrete actions)
           + offline_coeff * -1[A(s, a) > 0] log pi(a|s)  (filtered behavior cloning of the buffer's actions)
    loss   = actor + critic_loss_weight * critic

Sections, in order (banners "# === name ==="): Args (the flags) | Environment | Exploration | Small utilities |
Timestep encoder | Trajectory encoders (GRU, Transformer, Mamba) | Actor | Critic ensemble | PopArt | Agent (critic
loss, actor loss) | Disk replay buffer | Training step | main loop (`__main__`: collect, train, evaluate).
Every line that decides what the agent learns is in this file; common/ holds infrastructure only (logs, checkpoints,
run folders, input guards, the eval loop, learner/collector roles, optional GPU kernels), envs/ the benchmarks. To
use it elsewhere, copy this file and common/ into a folder of their own (a `common` package of yours would shadow
ours). Usage, results and deviations from the reference: README.md; the paper mapped to these lines: docs/.
"""

import copy
import math
import os
import random
import sys
import time
import uuid
import warnings
from contextlib import nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list

try:
    from common import AMAGO_CLEAN, scale  # noqa: F401 (AMAGO_CLEAN: an ImportError if another `common` shadows ours)
except ImportError as e:  # copied without common/, or another `common` first on the path: one line, exit 2
    if e.name != "common":
        raise
    print(f"error: {Path(__file__).name} needs amago-clean's folder common/ beside it ({e})", file=sys.stderr)
    sys.exit(2)
from common.args import check_args, note_unread_flags, parse_flags, resolve_env_ids, restore_flags, save_flags
from common.batch import make_loader, to_device
from common.checkpoint import load_checkpoint, save_checkpoint
from common.compiled import compiled_acting, compiled_update
from common.evaluate import LOG_PREFIX, eval_seed, index_obs, obs_to_torch
from common.guards import FileCache, UserError, check_finite, env_errors, list_trajectory_files, read_trajectory
from common.hooks import load_hook
from common.kernels import flash_attention, mamba_scan
from common.logs import Progress, make_writer
from common.memory import keep_freed_memory
from common.rundir import StopSignals, check_spec, write_atomic


@dataclass
class Args:
    """Logged scalars (tensorboard, runs/NAME; --track mirrors them to wandb), each explained in this script's guide
    in docs/, "Logged metrics": eval/ (greedy evaluation), charts/ (returns, speed), buffer/ (files), losses/ (each
    loss term, the BC filter's kept share, the gradient norm before the clip) and, for Box actions, actor/: the greedy
    action's mean |a| and its spread over states, and the pre-tanh std. A collapsed Box actor reads |a| near 1 with
    no spread: it acts from tanh's corners, where DPG's gradient vanishes."""

    # Run and logging
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment"""
    seed: int = 1
    """seed of the experiment"""
    torch_deterministic: bool = True
    """`torch.backends.cudnn.deterministic=True` (--no-torch-deterministic: off)"""
    cuda: bool = True
    """use cuda when available (--no-cuda: the CPU)"""
    track: bool = False
    """if toggled, this experiment will be tracked with Weights and Biases"""
    wandb_project_name: str = "amago-clean"
    """the wandb's project name"""
    wandb_entity: Optional[str] = None
    """the entity (team) of wandb's project"""
    capture_video: bool = False
    """whether to capture videos of the agent performances (check out `videos` folder)"""
    save_model: bool = False
    """whether to save the final model into the `runs/{run_name}` folder"""
    run_name: Optional[str] = None
    """the run's name (folder under runs/ and the buffer dir); None: `{env_id}__{exp_name}__{seed}__{time}`"""
    resume: bool = False
    """if toggled, continue the run `--run-name` from its last checkpoint (weights, optimizer, counters, buffer)"""
    checkpoint_interval: int = 10
    """save a checkpoint every this many epochs (0: never)"""

    # Environment
    env_id: str = "CartPole-v1"
    """env id (a,b: several, for the actors round-robin); old versions resolve to the newest; `pkg.mod:Env` imports"""
    total_timesteps: int = 1_000_000
    """total environment steps of the experiment (all actors together)"""
    # deviation: 8 sync actors (the reference: 12 async); sync is faster for cheap envs on few cores
    num_envs: int = 8
    """the number of parallel actors"""
    env_mode: Literal["sync", "async", "already_vectorized"] = "sync"
    """gymnasium vector env kind; already_vectorized: the env id's `vector_entry_point` steps all actors (gymnax)"""
    timesteps_per_epoch: int = 100
    """env steps per actor collected between two training phases"""

    # Learning
    # deviation: counts optimizer updates (the reference counts batches; they differ with --batches-per-update > 1)
    batches_per_epoch: Optional[int] = None
    """optimizer updates per epoch; None: as many as train --replay-ratio timesteps per env step collected"""
    # deviation: the updates per epoch follow the context (the reference: a fixed 1,000 per 12,000 env steps), so a
    # long context trains fewer, longer windows per env step instead of replaying each step thousands of times
    replay_ratio: float = 192.0
    """timesteps trained (updates x batch_size x batches_per_update x max_seq_len) per env step collected"""
    batch_size: int = 24
    """number of sequences in a training batch"""
    # k batches make the update of one k*batch_size batch only when they hold equally many real timesteps (each loss
    # is a mean over its own) and the running statistics (input norm, PopArt) do not move between them (they do)
    batches_per_update: int = 1
    """gradient accumulation: each optimizer update averages the gradients of this many batches"""
    learning_rate: float = 6e-4  # deviation: the reference's 1e-4 learns LunarLander ~4x slower at these sizes
    """AdamW learning rate"""
    warmup_steps: int = 500
    """linear learning-rate warm-up from 0 over this many updates"""
    anneal_lr: bool = False
    """if toggled, the learning rate decays linearly to 0 at the last update (the reference keeps it constant)"""
    grad_clip: float = 1.0
    """global gradient-norm clip"""
    weight_decay: float = 1e-3
    """AdamW weight decay (on every parameter, as in the reference)"""
    mixed_precision: Literal["no", "fp16", "bf16"] = "no"
    """accelerate's mixed precision for the update (GPU)"""
    compile: bool = False
    """torch.compile the update and acting step, on a GPU replayed as CUDA graphs; no gain on a CPU (docs: --compile)"""

    # Networks: the timestep encoder, actor and critic sizes
    # deviation: CPU-sized networks (the reference: timestep encoder 512 -> 256, d_model 256, 3 layers, d_ff 1024)
    tstep_hidden: int = 128
    """hidden width of the timestep encoder MLP"""
    tstep_dim: int = 64
    """output width of the timestep encoder"""
    hide_rl2: bool = False
    """if toggled, rl2 (previous reward and action: a one-step memory) is zeroed (the reference's hide_rl2s)"""
    tstep_encoder: str = "auto"
    """ff: obs keys and rl2 into an MLP; cnn: image keys through a CNN beside it; auto: cnn if any; or module:f (yours)"""
    cnn: Literal["nature", "impala"] = "nature"
    """cnn backbone: Nature-DQN-style convs or IMPALA-style residual blocks"""
    cnn_channels: Optional[tuple[int, ...]] = None
    """widths per conv (nature) or block (impala); None: (32, 64, 64), below 36 px (8, 16, 16); impala (16, 32, 32)"""
    cnn_kernels: Optional[tuple[int, ...]] = None
    """nature: kernel sizes, one per conv; None: DQN's (8, 4, 3) for frames >= 36 pixels, else (3, 3, 3)"""
    cnn_strides: Optional[tuple[int, ...]] = None
    """nature: strides, one per conv; None: DQN's (4, 2, 1) for frames >= 36 pixels, else (2, 2, 1)"""
    image_layout: Literal["auto", "hwc", "chw"] = "auto"
    """image axes: channels last or first; auto takes the smaller of the first and last axes as the channels"""
    aug_frac: float = 0.0
    """DrQ-v2 random shift on this fraction of each training batch's sequences (0: off; the reference: 0.75 when on)"""
    aug_pad: int = 4
    """random shift: the largest shift in pixels (the frame is replicate-padded by this much, then cropped)"""
    actor_hidden: int = 128  # deviation: the reference's actor and critic MLPs are 256 wide
    """hidden width of the actor MLP (2 hidden layers)"""
    critic_hidden: int = 128
    """hidden width of each critic MLP (2 hidden layers)"""

    # Memory: the trajectory encoder
    traj_encoder: str = "transformer"
    """the sequence model: ff (no memory), gru, transformer, mamba, or module:f, f(args, d_in) -> your nn.Module"""
    max_seq_len: int = 32
    """context length: training windows hold max_seq_len transitions; rollouts attend over the last max_seq_len steps"""
    d_model: int = 64
    """width of the trajectory encoder"""
    n_layers: int = 2
    """layers of the trajectory encoder"""
    n_heads: int = 8
    """attention heads (transformer)"""
    d_ff: int = 256
    """feed-forward width (transformer); the reference uses 4*d_model"""
    dropout: float = 0.05
    """dropout on the transformer's embedding and feed-forward output"""
    window_size: Optional[int] = None
    """transformer: attend to the last window_size steps in training and rollouts (None or 0: the whole window)"""
    pos_emb: Literal["sinusoidal", "learned"] = "sinusoidal"
    """transformer position embedding of the absolute timestep: fixed sinusoids, or a learned table"""
    max_time_idx: int = 1000
    """pos-emb learned: table size; timesteps >= max_time_idx share the last row"""
    d_state: int = 16
    """SSM state size (mamba)"""

    # AMAGO's actor-critic
    gamma: float = 0.999
    """the discount the agent acts with (the last of the gammas)"""
    multigammas: tuple[float, ...] = (0.1, 0.9, 0.95, 0.97, 0.99, 0.995)
    """extra discounts learned in parallel for representation learning (AMAGO sec. 4.3); empty to turn off"""
    num_critics: int = 4
    """critic ensemble size"""
    num_critics_td: int = 2
    """critics drawn (with replacement) for each TD target (REDQ)"""
    online_coeff: Optional[float] = None
    """weight of the "online" actor term -Q(s, a~pi) (DPG); None: 1, or 0 for MultiBinary (not differentiable)"""
    offline_coeff: float = 0.1
    """weight of the "offline" filtered behavior-cloning term -1[A>0] log pi(a|s)"""
    critic_loss_weight: float = 10.0
    """weight of the critic loss in the single shared loss"""
    reward_multiplier: float = 10.0
    """rewards are scaled by this in the TD target (never in the rl2 inputs)"""
    tau: float = 0.003
    """EMA rate of the target actor and critics"""
    popart: bool = True
    """normalize the value targets with PopArt (--no-popart: off)"""
    n_step: int = 1
    """n-step TD targets"""
    discrete_clip: tuple[float, float] = (1e-3, 0.99)
    """(low, high) clip of categorical action probabilities"""

    # Exploration
    exploration: str = "egreedy"
    """egreedy, bilevel (eps decays within episodes, for meta-RL), or module:f, f(EpsilonGreedy, envs) -> a subclass"""
    eps_start: float = 1.0
    """epsilon at the start of the schedule (episode start for bilevel)"""
    eps_end: float = 0.05
    """epsilon at the end of the schedule (episode start for bilevel)"""
    eps_scale_min: float = 0.0
    """each episode's epsilon is the schedule times a scale: U[0,1) when 0 (AMAGO's), else log-uniform in [this, 1]"""
    # deviation: random actions go to the observations an episode has not seen yet (the reference: the same eps at
    # every step), so a long corridor of identical cells is walked whole and the cell after it explored
    eps_revisit_power: float = 2.0
    """epsilon at an observation seen n times this episode (rl2 and time aside) is divided by n**power (0: AMAGO's)"""
    eps_floor: float = 0.0
    """the least epsilon at any step, revisits included (0: none)"""
    # deviation: 12,500 env steps per actor, 10% of the default run (the reference: 1M), so a CPU run anneals
    eps_anneal_steps: int = 12_500
    """env steps per actor over which epsilon anneals (a collector process anneals like one process: its own steps)"""
    bilevel_horizon: int = 500
    """bilevel: the rollout horizon over which epsilon decays within an episode"""
    bilevel_eps_end: tuple[float, float] = (0.8, 0.01)
    """bilevel: (start, end) of the schedule for epsilon at the end of the horizon"""
    train_greedy: bool = False
    """if toggled, training rollouts take the argmax / mean action (exploration still applies on top)"""
    greedy_episodes: float = 0.0
    """the share of training episodes, drawn per episode, that take the argmax / mean action (the rest sample)"""

    # Buffer: the replay buffer on disk
    buffer_dir: str = "buffers"
    """replay buffers live in {buffer_dir}/{run_name}/{fifo,protected}"""
    buffer_max_size: int = 20_000
    """trajectory files kept in fifo/ (oldest deleted first; protected/ is never deleted)"""
    # deviation: 256-step snippets (the reference saves whole episodes), so long rollouts reach the buffer early
    traj_save_len: int = 256
    """long episodes are saved in snippets of about this many steps (staggered by +-max_seq_len)"""
    file_format: Literal["npz", "npz-compressed"] = "npz"
    """trajectory file format"""
    # deviation: right (the reference: none): with none, a file's last step lies in 1 of its T-max_seq_len+1 windows
    padded_sampling: Literal["none", "right", "left", "both"] = "right"
    """where a training window may overhang its file, shorter and padded: none, right (past the end), left, both"""
    num_workers: int = 1
    """DataLoader worker processes that read the buffer while the update runs (0: load in the main process)"""
    relabel: Optional[str] = None
    """hindsight relabeling: a `module:function` applied to every sampled window, e.g. envs.mazerunner:relabel_some"""

    # Evaluation
    eval_interval: int = 10  # deviation: after the epoch's training (the reference: before collecting, from epoch 0)
    """evaluate every this many epochs (0: never)"""
    eval_minutes: float = 5.0
    """also evaluate once this many minutes have passed since the last one: long epochs still report early (0: off)"""
    # deviation: evaluation counts episodes (the reference: a step budget, in which only finished episodes count)
    eval_episodes: int = 20
    """episodes per evaluation (at least)"""
    eval_max_steps: int = 100_000
    """evaluation stops after this many steps per actor, with a warning (an env that never ends cannot hang a run)"""
    eval_greedy: bool = True  # deviation: the reference samples in evaluation
    """evaluate with the argmax / mean action (--no-eval-greedy: sampled actions)"""
    eval_sampled_too: bool = False
    # a greedy policy can loop (turning in place, pushing into a wall) where sampling does not: benchmarks/README.md
    """also evaluate the same episodes with sampled actions, logged as eval_sampled/..."""
    eval_env_id: Optional[str] = None
    """the evaluation env ids, comma-separated (None: --env-id's)"""
    eval_only: bool = False
    """if toggled, evaluate runs/{run_name}/checkpoint.pt (or --load-from), print the metrics as JSON, and exit"""
    load_from: Optional[str] = None
    """--eval-only: the weights to evaluate (a checkpoint.pt, policy_latest.pt or .cleanrl_model file)"""
    save_trajs_to: Optional[str] = None
    """--eval-only: write the evaluation episodes as trajectory files into this folder (e.g. buffers/RUN/protected)"""

    # Roles and phases (docs/running.md "Scaling out"; `python -m common.launch` starts a learner and its collectors)
    mode: Literal["both", "collect", "learn"] = "both"
    """both: collect, train, evaluate in one process; learn: train on the buffer only; collect: rollouts only"""
    start_learning_at_epoch: int = 0
    """no updates before this epoch (a warm-up of the buffer)"""
    start_collecting_at_epoch: int = 0
    """no rollouts before this epoch (a large value: fully offline, from the files already in the buffer)"""
    dset_name: Optional[str] = None
    """the buffer folder under --buffer-dir (None: the run name): train on another run's buffer"""
    max_steps_per_update: Optional[float] = None
    """a collector waits while the run's env steps exceed this many per learner update (after one learner epoch's)"""


# =================================================== Environment ====================================================
# What the agent sees of a gymnasium env (AMAGO sec. 3): {"obs": the env's observation as a dict, "rl2": [previous
# reward, previous action] (A+1,), zero at reset, "time": steps since reset}. rl2 makes the previous step's outcome an
# input, so that a memory over these tokens can infer the task (RL^2, Duan et al., 2016); the time index feeds the
# position embedding. Box actions are exposed in [-1, 1] and rescaled for the env.
def amago_spaces(obs_space, action_space):
    """-> (action dim A, the agent's action space (Box: rescaled to [-1, 1]), the agent's observation Dict space)."""
    if isinstance(action_space, gym.spaces.Discrete):
        A = int(action_space.n)
    elif isinstance(action_space, gym.spaces.Box):
        A = int(np.prod(action_space.shape))
        if not (np.isfinite(action_space.low).all() and np.isfinite(action_space.high).all()):
            raise UserError(f"Box action space {action_space} must be bounded: AMAGO rescales actions to [-1, 1]")
        action_space = gym.spaces.Box(-1.0, 1.0, action_space.shape, np.float32)
    elif isinstance(action_space, gym.spaces.MultiBinary):
        A = int(np.prod(action_space.shape))
    else:
        raise UserError(f"action space {action_space} is not supported: use Discrete, Box or MultiBinary")
    if not isinstance(obs_space, gym.spaces.Dict):
        obs_space = gym.spaces.Dict({"observation": obs_space})
    for k, s in obs_space.items():  # each key is flattened into one vector of the timestep encoder's input
        if not isinstance(s, (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary, gym.spaces.MultiDiscrete)):
            raise UserError(
                f"observation {k!r}: {s} is not supported: use Box, Discrete, MultiBinary or MultiDiscrete spaces, "
                "alone or as the values of one Dict (wrap the env to encode other spaces as arrays)"
            )
    rl2 = gym.spaces.Box(-np.inf, np.inf, (A + 1,), np.float32)
    time_idx = gym.spaces.Box(0, np.iinfo(np.int64).max, (), np.int64)
    return A, action_space, gym.spaces.Dict({"obs": obs_space, "rl2": rl2, "time": time_idx})


def to_env_actions(space, a):
    """Agent actions of N actors -> (rep (N, A) float32: the action as rl2 records it, the env's actions (N, ...)).
    Discrete: index -> one-hot; Box: [-1, 1] -> the env's [low, high]; MultiBinary: 0/1 -> int8 bits."""
    N = len(a)
    if isinstance(space, gym.spaces.Discrete):
        idx = np.asarray(a).reshape(N).astype(np.int64)
        return np.eye(space.n, dtype=np.float32)[idx], idx
    rep = np.asarray(a, np.float32).reshape(N, -1)
    if isinstance(space, gym.spaces.Box):
        rep = np.clip(rep, -1.0, 1.0)
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        return rep, (low + (rep.reshape(N, *space.shape) + 1.0) * 0.5 * (high - low)).astype(space.dtype)
    return rep, rep.reshape(N, *space.shape).astype(np.int8)


def wrap_obs(obs, reward, rep, t):
    """The agent's observation dict, for one actor (reward, rep (A,), t: scalars) or N (reward (N,), rep (N, A), t)."""
    obs = obs if isinstance(obs, dict) else {"observation": obs}
    rl2 = np.concatenate([np.expand_dims(reward, -1), rep], axis=-1).astype(np.float32)  # (..., A+1)
    return {"obs": obs, "rl2": rl2, "time": np.array(t, np.int64)}  # a copy: the caller's counter moves on


class AmagoEnv(gym.Wrapper):
    """One env as the agent sees it: the observation dict above, whose rl2 holds the reward and action that led to
    this observation (so at step t: obs_t, r_{t-1}, a_{t-1}, t)."""

    def __init__(self, env: gym.Env, env_name: str):
        super().__init__(env)
        self.env_name = getattr(env.unwrapped, "env_name", env_name)
        self.action_dim, self.action_space, self.observation_space = amago_spaces(
            env.observation_space, env.action_space
        )

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.t = 0
        info["env_name"] = self.env_name = getattr(self.env.unwrapped, "env_name", self.env_name)
        return wrap_obs(obs, 0.0, np.zeros(self.action_dim, np.float32), 0), info

    def step(self, action):
        if isinstance(self.env.action_space, gym.spaces.Discrete):  # the common case, without array round trips
            env_action = int(action)
            rep = np.eye(self.action_dim, dtype=np.float32)[env_action]
        else:
            rep, env_action = (x[0] for x in to_env_actions(self.env.action_space, np.asarray(action)[None]))
        obs, reward, terminated, truncated, info = self.env.step(env_action)
        self.t += 1
        info["env_name"] = self.env_name
        return wrap_obs(obs, float(reward), rep, self.t), reward, terminated, truncated, info


class AmagoVecEnv(gym.vector.VectorWrapper):
    """AmagoEnv for an env that steps all N actors itself (`--env-mode already_vectorized`, e.g. gymnax): the same
    observation dict and same-step autoreset info (final_obs, final_info) as SyncVectorEnv(AmagoEnv). The env resets
    finished actors inside step() and should return their true last observations as info["final_obs"]; without it the
    reset observation stands in, as in the reference (a truncated episode bootstraps from the next episode's first)."""

    def __init__(self, env: gym.vector.VectorEnv, env_name: str):
        super().__init__(env)
        mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.SAME_STEP)
        if mode != gym.vector.AutoresetMode.SAME_STEP:
            raise UserError(
                f"--env-mode already_vectorized needs an env that resets finished actors in the same step "
                f"(autoreset_mode SAME_STEP, as gymnax); {env} has {mode}"
            )
        self.env_name = getattr(env.unwrapped, "env_name", env_name)
        spaces = amago_spaces(env.single_observation_space, env.single_action_space)
        self.action_dim, self.single_action_space, self.single_observation_space = spaces
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.metadata = {**env.metadata, "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        N = self.num_envs
        self.t = np.zeros(N, np.int64)
        info["env_name"] = np.full(N, self.env_name, object)
        return wrap_obs(obs, np.zeros(N), np.zeros((N, self.action_dim), np.float32), self.t), info

    def step(self, actions):
        rep, env_actions = to_env_actions(self.env.single_action_space, actions)
        obs, rew, term, trunc, info = self.env.step(env_actions)
        done = term | trunc
        self.t += 1
        # deviation: the true last observation is stored (the reference's AlreadyVectorizedEnv keeps the reset one)
        last = wrap_obs(info.get("final_obs", obs), rew, rep, self.t)  # each actor's observation after its action
        self.t[done] = 0
        next_obs = wrap_obs(obs, np.where(done, 0.0, rew), np.where(done[:, None], 0.0, rep), self.t)  # zero rl2
        names = np.full(self.num_envs, self.env_name, object)
        info = {
            "env_name": names,
            "final_obs": [index_obs(last, i) if d else None for i, d in enumerate(done)],
            "final_info": {"env_name": names, **{k: v for k, v in info.items() if k.startswith(LOG_PREFIX)}},
        }
        return next_obs, rew, term, trunc, info


def make_env(env_id, seed, idx, capture_video, run_name):
    def thunk():
        if capture_video and idx == 0:
            env = gym.make(env_id, render_mode="rgb_array")
            env = gym.wrappers.RecordVideo(env, f"videos/{run_name}")
        else:
            env = gym.make(env_id)
        env.action_space.seed(seed + idx)
        return AmagoEnv(env, env_name=env_id)

    return thunk


def make_vec_env(env_id, num_envs, mode, seed, capture_video=False, run_name=""):
    # same-step autoreset: a done actor's final obs (info["final_obs"]) and reset obs come in one step (no fake one)
    if mode == "already_vectorized":  # the env id's vector_entry_point builds all num_envs actors in one env
        return AmagoVecEnv(gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point"), env_id)
    ids = env_id.split(",")  # several env ids: the actors take them round-robin
    fns = [make_env(ids[i % len(ids)], seed, i, capture_video, run_name) for i in range(num_envs)]
    kind = gym.vector.SyncVectorEnv if mode == "sync" else gym.vector.AsyncVectorEnv
    return kind(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


# =================================================== Exploration ====================================================
class EpsilonGreedy:
    """eps = scale * schedule(step), the scale redrawn per episode so that some episodes are nearly greedy and some
    nearly random: U[0,1) as in AMAGO (scale_min=0), else log-uniform in [scale_min, 1] as Ape-X spreads eps over its
    actors (a corridor of H cells gets whole walks from the episodes with eps < 1/H, about log10(scale_min*H) /
    log10(scale_min) of them at eps 1). Discrete: a random action w.p. eps; Box: clipped Gaussian noise of std eps;
    MultiBinary: each bit flips w.p. eps/2. revisit_power divides eps by n**power at an env observation seen n times
    this episode (Never Give Up's episodic count, Badia et al., 2020; rl2 and time are not counted): at power 2 a
    corridor of identical cells gets < 1.65 random-action chances in all, its first new cell the whole eps.
    Observations that never repeat keep AMAGO's eps; where they repeat (bandits, small grids, T-Maze frames) many
    steps get eps/4 or less. floor (0: none) is the least eps at any step, revisits included."""

    def __init__(
        self,
        num_envs,
        action_space,
        eps_start,
        eps_end,
        anneal_steps,
        seed,
        scale_min=0.0,
        revisit_power=0.0,
        floor=0,
        greedy_frac=0.0,
    ):
        self.space, self.anneal = action_space, max(anneal_steps, 1)
        self.eps_start, self.eps_end, self.scale_min = eps_start, eps_end, scale_min
        self.rng = np.random.default_rng(seed)
        self.scale = self.draw_scale(num_envs)
        self.greedy_frac = greedy_frac
        self.greedy = self.draw_greedy(num_envs)
        self.step_count = 0  # vector steps taken (per actor), drives the schedule
        self.revisit_power, self.floor = revisit_power, floor
        self.visits = [{} for _ in range(num_envs)]  # per actor: {hash of an observation: times seen this episode}

    def draw_scale(self, n):  # (n,) in [scale_min, 1]; U[0,1) when scale_min is 0
        u = self.rng.random(n)
        return self.scale_min**u if self.scale_min > 0 else u

    def draw_greedy(self, n):  # (n,) bool: the episodes that act greedily (no draw at 0 or 1: AMAGO's rng stream)
        return self.rng.random(n) < self.greedy_frac if 0 < self.greedy_frac < 1 else np.full(n, self.greedy_frac >= 1)

    def schedule(self, start, end):
        return max(start - (start - end) * self.step_count / self.anneal, end)

    def epsilon(self, time_idx):
        return self.scale * self.schedule(self.eps_start, self.eps_end)  # (N,)

    def revisit_factor(self, obs):  # (N,) 1/n**power, n: times actor i has seen obs this episode (this one included)
        if not self.revisit_power or obs is None:
            return 1.0
        n = np.empty(len(self.visits))
        for i, seen in enumerate(self.visits):
            key = hash(b"".join(np.ascontiguousarray(v[i]).tobytes() for v in obs.values()))
            n[i] = seen[key] = seen.get(key, 0) + 1
        return n**-self.revisit_power

    def __call__(self, actions, time_idx, obs=None):  # obs: the env's observations {key: (N, ...)}, for revisits
        eps = np.maximum(self.epsilon(time_idx) * self.revisit_factor(obs), self.floor)
        n = len(actions)
        if isinstance(self.space, gym.spaces.Discrete):
            rand = self.rng.random(n) < eps
            actions = np.where(rand, self.rng.integers(0, self.space.n, n), actions)
        elif isinstance(self.space, gym.spaces.MultiBinary):  # deviation: the reference has no multi-binary exploration
            flip = self.rng.random(actions.shape) < eps[:, None] / 2
            actions = np.where(flip, 1 - actions, actions)
        else:
            actions = np.clip(actions + eps[:, None] * self.rng.standard_normal(actions.shape), -1.0, 1.0)
        self.step_count += 1
        return actions.astype(np.float32) if isinstance(self.space, gym.spaces.Box) else actions

    def end_episodes(self, done):  # a new episode gets a new random scale, and its observations are new again
        self.scale = np.where(done, self.draw_scale(len(done)), self.scale)
        self.greedy = np.where(done, self.draw_greedy(len(done)), self.greedy)
        for i in np.flatnonzero(done):
            self.visits[i].clear()

    def state_dict(self):
        return dict(scale=self.scale, greedy=self.greedy, step_count=self.step_count, rng=self.rng.bit_generator.state)

    def load_state_dict(self, d):
        self.scale, self.step_count = d["scale"], d["step_count"]
        self.greedy = d.get("greedy", np.full(len(self.scale), self.greedy_frac >= 1))  # absent from older checkpoints
        self.rng.bit_generator.state = d["rng"]


class BilevelEpsilonGreedy(EpsilonGreedy):
    """For finite-horizon meta-RL: eps also decays *within* each rollout, from an episode-start level to an
    episode-end level at `horizon`, so early attempts explore and late attempts exploit (AMAGO appendix)."""

    def __init__(self, num_envs, action_space, eps_start, eps_end, anneal_steps, seed, horizon, eps_end_schedule, **kw):
        super().__init__(num_envs, action_space, eps_start, eps_end, anneal_steps, seed, **kw)
        self.horizon, (self.end_start, self.end_end) = horizon, eps_end_schedule

    def epsilon(self, time_idx):
        at_start = self.schedule(self.eps_start, self.eps_end)
        at_end = self.schedule(self.end_start, self.end_end)
        frac = np.minimum(time_idx / self.horizon, 1.0)  # deviation: clipped at the horizon (the reference decays on)
        return self.scale * (at_start - (at_start - at_end) * frac)


# ============================ Small utilities: symlog, MLP, running input normalization =============================
def symlog(x):
    return torch.sign(x) * torch.log1p(x.abs())


def mlp(d_in, d_hidden, d_out):  # two hidden layers
    hidden = [nn.Linear(d_in, d_hidden), nn.LeakyReLU(), nn.Linear(d_hidden, d_hidden), nn.LeakyReLU()]
    return nn.Sequential(*hidden, nn.Linear(d_hidden, d_out))


def masked_mean(x, mask):
    """Mean of x over the positions where mask is 1 (mask broadcasts against x)."""
    mask = mask.expand_as(x)
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


class InputNorm(nn.Module):
    """Running mean/std of the inputs (bias-corrected EMA: a running average early, beta later)."""

    def __init__(self, dim, beta=1e-4, init_nu=1.0):
        super().__init__()
        self.beta = beta
        self.register_buffer("mu", torch.zeros(dim))
        self.register_buffer("nu", torch.full((dim,), init_nu))  # the second moment
        self.register_buffer("t", torch.ones(()))

    @property
    def sigma(self):
        return (self.nu - self.mu**2 + 1e-5).clamp(min=1e-5).sqrt().clamp(1e-3, 1e6)

    @torch.no_grad()
    def update(self, x, mask):  # x: (B, L, dim), mask: (B, L): moments over the real steps
        self.t += 1
        beta = self.beta / (1 - (1 - self.beta) ** self.t)
        m = mask.unsqueeze(-1).float()
        n = m.sum().clamp(min=1.0)
        self.mu.lerp_((x * m).sum((0, 1)) / n, beta)
        self.nu.lerp_((x.square() * m).sum((0, 1)) / n, beta)

    def forward(self, x):
        sigma = self.sigma
        # features with (almost) no spread are only centered, not scaled (e.g. a constant input)
        return torch.where(sigma > 0.01, ((x - self.mu) / sigma).clamp(-1e4, 1e4), x - self.mu)


# =================== Timestep encoder: one observation + rl2 -> one token (no mixing across time) ===================
#   ff:  every obs key flattened, + rl2 -> InputNorm -> MLP (the reference's FFTstepEncoder)
#   cnn: image keys (3-D Boxes) -> CNN, beside the ff path for the other keys + rl2
# Your own encoder goes in make_tstep_encoder (end of this section).
class TstepEncoder(nn.Module):
    """Flattens the obs keys (sorted) and rl2 = [prev reward, prev action] into one vector, normalizes it with a
    running InputNorm (stats updated on real, unpadded training steps), then an MLP and a LayerNorm."""

    def __init__(self, obs_space: gym.spaces.Dict, rl2_dim, d_hidden, d_out):
        super().__init__()
        self.keys = sorted(obs_space.keys())
        in_dim = sum(int(np.prod(obs_space[k].shape)) for k in self.keys) + rl2_dim
        self.norm = InputNorm(in_dim)
        self.mlp = mlp(in_dim, d_hidden, d_out)
        self.out_norm = nn.LayerNorm(d_out)

    def forward(self, obs, rl2, mask=None):  # obs[k]: (B, L, ...), rl2: (B, L, A+1) -> (B, L, d_out)
        B, L = rl2.shape[:2]
        x = torch.cat([obs[k].reshape(B, L, -1).float() for k in self.keys] + [rl2], dim=-1)
        if self.training and mask is not None:
            self.norm.update(x, mask)
        return self.out_norm(self.mlp(self.norm(x)))


# --------------------------------------- CNN backbones and DrQ's random shift ---------------------------------------
def is_image(space):
    return isinstance(space, gym.spaces.Box) and len(space.shape) == 3


def channels_last(shape, layout):
    """True for (H, W, C), False for (C, H, W); `auto` takes the smaller of the first and last axes as the channels."""
    if layout != "auto":
        return layout == "hwc"
    if shape[0] == shape[2]:
        raise UserError(f"cannot tell the channel axis of image shape {shape}: pass --image-layout hwc or chw")
    return shape[2] < shape[0]


class NatureCNN(nn.Sequential):
    """DQN's conv stack (Mnih et al., 2015): conv -> leaky_relu per layer, no padding. Delta-orthogonal init (only
    the centre tap is non-zero, orthogonal), as the reference's NatureishCNN."""

    def __init__(self, c_in, channels, kernels, strides):
        layers = []
        for c, k, s in zip(channels, kernels, strides):
            conv = nn.Conv2d(c_in, c, k, s)
            nn.init.zeros_(conv.weight)
            nn.init.zeros_(conv.bias)
            with torch.no_grad():
                conv.weight[:, :, k // 2, k // 2] = nn.init.orthogonal_(
                    torch.empty(c, c_in), nn.init.calculate_gain("leaky_relu")
                )
            layers += [conv, nn.LeakyReLU()]
            c_in = c
        super().__init__(*layers)


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(d, d, 3, padding=1), nn.Conv2d(d, d, 3, padding=1)
        self.norm = nn.GroupNorm(4, d)  # the reference's post-residual GroupNorm (IMPALA itself has none)

    def forward(self, x):
        return self.norm(x + self.conv2(F.leaky_relu(self.conv1(F.leaky_relu(x)))))


class ImpalaCNN(nn.Sequential):
    """IMPALA's residual stack (Espeholt et al., 2018): per width d, conv3x3 -> maxpool(3, stride 2) -> 2 residual
    blocks. No activation after the last block (as the reference's IMPALAishCNN)."""

    def __init__(self, c_in, channels):
        layers = []
        for d in channels:
            layers += [nn.Conv2d(c_in, d, 3, padding=1), nn.MaxPool2d(3, 2), ResBlock(d), ResBlock(d)]
            c_in = d
        super().__init__(*layers)


def make_cnn(args, c_in, frame):
    """--cnn, --cnn-channels, --cnn-kernels, --cnn-strides -> the backbone for (c_in, H, W) images, frame = (H, W).
    Nature's defaults are DQN's when the frame's smaller side is >= 36 pixels (84x84: the reference's CNN exactly); a
    smaller frame gets 3x3 convs of (8, 16, 16) at strides (2, 2, 1), from 15x15 up (speed_cnn in benchmarks/)."""
    if args.cnn == "impala":
        return ImpalaCNN(c_in, args.cnn_channels or (16, 32, 32))
    large = min(frame) >= 36
    channels = args.cnn_channels or ((32, 64, 64) if large else (8, 16, 16))
    n = len(channels)
    kernels = args.cnn_kernels or (((8, 4) if large else (3, 3)) + (3,) * n)[:n]
    strides = args.cnn_strides or (((4, 2) if large else (2, 2)) + (1,) * n)[:n]
    return NatureCNN(c_in, channels, kernels, strides)


class RandomShift(nn.Module):
    """DrQ-v2's augmentation (Yarats et al., 2021): replicate-pad by `pad`, crop back at a random integer offset, each
    frame its own offset, on the last `frac` of the batch's sequences. Identity in eval mode (rollouts)."""

    def __init__(self, pad, frac):
        super().__init__()
        self.pad, self.frac = pad, frac

    def forward(self, img):  # img: (B, L, C, H, W), any dtype -> same shape
        if not self.training or self.frac == 0 or self.pad == 0:
            return img
        B, L, C, H, W = img.shape
        split = max(min(math.ceil(B * (1 - self.frac)), B - 1), 0)  # the reference's split: >= 1 sequence shifted
        x = img[split:].flatten(0, 1)  # (N, C, H, W)
        dy, dx = torch.randint(-self.pad, self.pad + 1, (2, len(x), 1), device=img.device)
        # clamped pixel indices are the replicate padding, so no padded copy is made (the reference: grid_sample)
        rows = (torch.arange(H, device=img.device) + dy).clamp(0, H - 1)  # (N, H): out[i, j] = in[i + dy, j + dx]
        cols = (torch.arange(W, device=img.device) + dx).clamp(0, W - 1)  # (N, W)
        n = torch.arange(len(x), device=img.device)[:, None, None]
        x = x[n, :, rows[:, :, None], cols[:, None, :]]  # advanced indices first: (N, H, W, C)
        return torch.cat([img[:split], x.permute(0, 3, 1, 2).reshape(B - split, L, C, H, W)])


class CNNTstepEncoder(nn.Module):
    """Each image key -> random shift (training) -> its own CNN (above); the other keys and rl2 -> the ff path
    above (so images never enter InputNorm); leaky_relu(concat) -> Linear -> LayerNorm."""

    def __init__(self, obs_space: gym.spaces.Dict, rl2_dim, args):
        super().__init__()
        self.img_keys = sorted(k for k in obs_space.keys() if is_image(obs_space[k]))
        self.hwc = [channels_last(obs_space[k].shape, args.image_layout) for k in self.img_keys]
        self.uint8 = [obs_space[k].dtype == np.uint8 for k in self.img_keys]  # float images are used as they are
        vec_space = gym.spaces.Dict({k: s for k, s in obs_space.items() if k not in self.img_keys})
        # deviation: rl2 joins the vector keys in the ff path (the reference: one image key, symlog(rl2) via a Linear)
        self.vec = TstepEncoder(vec_space, rl2_dim, args.tstep_hidden, args.tstep_dim)
        self.aug = RandomShift(args.aug_pad, args.aug_frac)
        self.cnns, cnn_out = nn.ModuleList(), 0
        for k, hwc in zip(self.img_keys, self.hwc):
            C, H, W = (int(d) for d in (np.roll(obs_space[k].shape, 1) if hwc else obs_space[k].shape))
            self.cnns.append(make_cnn(args, C, (H, W)))
            try:
                cnn_out += self.cnns[-1](torch.zeros(1, C, H, W)).numel()
            except RuntimeError as e:  # a conv or pool larger than its input
                raise UserError(
                    f"obs {k!r}: a {H}x{W} image is too small for --cnn {args.cnn} (use fewer --cnn-channels "
                    f"layers, or smaller --cnn-kernels / --cnn-strides for nature; the defaults run from 15x15): {e}"
                ) from None
        self.img_proj = nn.Linear(cnn_out, args.tstep_dim)
        self.out = nn.Sequential(
            nn.LeakyReLU(), nn.Linear(2 * args.tstep_dim, args.tstep_dim), nn.LayerNorm(args.tstep_dim)
        )

    def forward(self, obs, rl2, mask=None):  # obs[image key]: (B, L, H, W, C) or (B, L, C, H, W) -> (B, L, tstep_dim)
        B, L = rl2.shape[:2]
        feats = []
        for k, hwc, uint8, cnn in zip(self.img_keys, self.hwc, self.uint8, self.cnns):
            img = self.aug(obs[k].permute(0, 1, 4, 2, 3) if hwc else obs[k]).float()  # (B, L, C, H, W)
            img = img / 128.0 - 1.0 if uint8 else img  # [0, 255] -> [-1, 1), as the reference
            feats.append(cnn(img.flatten(0, 1)).reshape(B, L, -1))  # (c, h, w) order
        return self.out(torch.cat([self.img_proj(torch.cat(feats, -1)), self.vec(obs, rl2, mask)], -1))


def make_tstep_encoder(args, obs_space, rl2_dim):
    """--tstep-encoder -> module. Your own, `--tstep-encoder module:f`: f(args, obs_space, rl2_dim) returns any
    nn.Module with forward(obs {key: (B, L, *shape)}, rl2 (B, L, rl2_dim), mask (B, L) or None) -> (B, L,
    args.tstep_dim) that mixes nothing across time (docs/examples/custom_tstep_encoder.py)."""
    if ":" in args.tstep_encoder:
        make = load_hook(args.tstep_encoder, "--tstep-encoder", "docs.examples.custom_tstep_encoder:make")
        return make(args, obs_space, rl2_dim)
    has_image = any(is_image(s) for s in obs_space.values())
    kind = ("cnn" if has_image else "ff") if args.tstep_encoder == "auto" else args.tstep_encoder
    if kind == "ff":
        return TstepEncoder(obs_space, rl2_dim, args.tstep_hidden, args.tstep_dim)
    if kind == "cnn" and has_image:
        return CNNTstepEncoder(obs_space, rl2_dim, args)
    raise UserError(
        f"--tstep-encoder {args.tstep_encoder!r} with observations {obs_space}: choose auto, ff, cnn (it needs "
        "an image key: a 3-D Box), or module:f"
    )


# =============== Trajectory encoders: a sequence of tokens -> a sequence of states (memory). Each has: ===============
#   forward(x (B, L, D), time (B, L)) -> (B, L, d)      training: a window from an empty memory
#   step(x (N, 1, D), time (N, 1), hidden) -> (N, 1, d), hidden      rollouts: one new token per actor
#   init_hidden(N), reset_hidden(hidden, done (N,))     each actor's memory resets when its episode ends
class FFTrajEncoder(nn.Module):
    """No memory: a per-timestep MLP (the sanity check that memory matters)."""

    def __init__(self, d_in, d_model, n_layers):
        super().__init__()
        # deviation: a plain MLP (the reference: residual feed-forward blocks, an attention-less Transformer)
        layers = [nn.Linear(d_in, d_model), nn.LeakyReLU()]
        for _ in range(n_layers - 1):
            layers += [nn.Linear(d_model, d_model), nn.LeakyReLU()]
        self.net = nn.Sequential(*layers, nn.Linear(d_model, d_model), nn.LayerNorm(d_model))
        self.emb_dim = d_model

    def forward(self, x, time):
        return self.net(x)

    def step(self, x, time, hidden):
        return self.net(x), hidden

    def init_hidden(self, n, device):
        return None

    def reset_hidden(self, hidden, done):
        return hidden


class GRUTrajEncoder(nn.Module):
    def __init__(self, d_in, d_model, n_layers):
        super().__init__()
        self.gru = nn.GRU(d_in, d_model, num_layers=n_layers, batch_first=True)
        self.out = nn.Sequential(nn.Linear(d_model, d_model), nn.LayerNorm(d_model))
        self.n_layers, self.emb_dim = n_layers, d_model

    def forward(self, x, time):
        return self.out(self.gru(x)[0])

    def step(self, x, time, hidden):
        y, hidden = self.gru(x, hidden)
        return self.out(y), hidden

    def init_hidden(self, n, device):
        return torch.zeros(self.n_layers, n, self.emb_dim, device=device)  # (layers, N, d)

    def reset_hidden(self, hidden, done):
        return hidden.masked_fill(done.view(1, -1, 1), 0.0)


# --------------------------------------------------- Transformer ---------------------------------------------------
class SigmaReparam(nn.Linear):
    """sigma-Reparam linear (Zhai et al., 2023): W_hat = gamma / sigma(W) * W, with the spectral norm sigma(W) tracked
    by one power iteration per training forward. Keeps attention logits from blowing up."""

    def __init__(self, d_in, d_out, bias=True):
        super().__init__(d_in, d_out, bias=bias)
        nn.init.trunc_normal_(self.weight, std=0.02)
        u, _, vh = torch.linalg.svd(self.weight.detach(), full_matrices=False)
        self.register_buffer("u", u[:, 0].contiguous())
        self.register_buffer("v", vh[0].contiguous())
        self.gamma = nn.Parameter(torch.ones(()))
        self.w_hat = None  # acting's cached gamma / sigma(W) * W

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.u.copy_(F.normalize(self.weight @ self.v, dim=0))
                self.v.copy_(F.normalize(self.weight.T @ self.u, dim=0))
        elif not torch.is_grad_enabled():  # acting: W_hat is built at the first step and reused (see train)
            if self.w_hat is None:
                self.w_hat = self.gamma / (self.u @ self.weight @ self.v) * self.weight
            return F.linear(x, self.w_hat, self.bias)
        return F.linear(x, self.gamma / (self.u @ self.weight @ self.v) * self.weight, self.bias)

    def train(self, mode=True):
        # eval() is train(False): every switch between updating and acting, and every load (below), drops the cached
        # W_hat, as weights change only then (fused AdamW does not bump tensor versions, so they cannot key the cache)
        self.w_hat = None
        return super().train(mode)

    def _load_from_state_dict(self, *args, **kwargs):
        self.w_hat = None
        super()._load_from_state_dict(*args, **kwargs)


def sinusoidal_embedding(time, d_model):  # time: (B, L) absolute timestep since reset -> (B, L, d_model)
    freqs = torch.exp(torch.arange(0, d_model, 2, device=time.device) * (-math.log(10000.0) / d_model))
    angles = time.float().unsqueeze(-1) * freqs  # (B, L, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)  # interleaved sin, cos


def attention(q, k, v, window_size=None, mask=None):
    """q, k, v: (B, H, L, E) -> (B, H, L, E). Training (mask None): causal, each query sees its last `window_size` keys
    incl. itself (None: all). Rollouts: `mask` (N, 1, 1, W) marks the valid cache slots of each actor's one query.
    flash-attn's kernel when installed on CUDA (half precision), else torch's SDPA."""
    if mask is None and (out := flash_attention(q, k, v, window_size)) is not None:
        return out
    L = q.shape[2]
    if mask is None and window_size is not None and window_size < L:
        i = torch.arange(L, device=q.device)
        mask = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < window_size)  # (L, L) causal band
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)


class TransformerLayer(nn.Module):
    """Pre-norm layer with NormFormer's extra norms (after attention, inside the FFN) and per-head scales."""

    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.qkv = SigmaReparam(d_model, 3 * d_model, bias=False)
        self.attn_out = SigmaReparam(d_model, d_model)
        self.head_scale = nn.Parameter(torch.ones(1, n_heads, 1, 1))
        self.ff1, self.ff2 = SigmaReparam(d_model, d_ff), SigmaReparam(d_ff, d_model)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.norm_ff = nn.LayerNorm(d_ff)
        self.drop = nn.Dropout(dropout)

    def split_heads(self, h):  # (B, L, d) -> 3 x (B, H, L, E)
        B, L, _ = h.shape
        return self.qkv(h).view(B, L, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)

    def mlp_block(self, x, attn):  # attn: (B, H, L, E)
        B, H, L, E = attn.shape
        h = (self.head_scale * attn).transpose(1, 2).reshape(B, L, H * E)
        x = x + self.norm2(self.attn_out(h))
        h = self.norm_ff(F.leaky_relu(self.ff1(self.norm3(x))))
        return x + self.drop(self.ff2(h))

    def forward(self, x, window_size=None):  # x: (B, L, d)
        q, k, v = self.split_heads(self.norm1(x))
        return self.mlp_block(x, attention(q, k, v, window_size))

    def step(self, x, k_cache, v_cache, slot, valid):
        """x: (N, 1, d); caches: (N, H, W, E) ring buffers holding the last W keys/values of each actor; slot: where
        each actor's new key goes (actor indices, ring positions: (N,) each); valid: (N, 1, 1, W) the slots in use."""
        q, k, v = self.split_heads(self.norm1(x))  # (N, H, 1, E)
        rows, pos = slot
        k_cache[rows, :, pos] = k[:, :, 0]
        v_cache[rows, :, pos] = v[:, :, 0]
        # keys carry their absolute position (added at the input), so order inside the ring does not matter
        return self.mlp_block(x, attention(q, k_cache, v_cache, mask=valid))


class TransformerTrajEncoder(nn.Module):
    def __init__(self, d_in, args):  # sizes from --d-model, --n-layers, --n-heads, --d-ff, --dropout, --window-size
        super().__init__()
        d_model, n_heads = args.d_model, args.n_heads
        self.inp = nn.Linear(d_in, d_model)
        # learned: one N(0, 1) row per absolute timestep (the reference's LearnablePosEmb)
        self.pos = nn.Embedding(args.max_time_idx, d_model) if args.pos_emb == "learned" else None
        self.layers = nn.ModuleList(
            TransformerLayer(d_model, n_heads, args.d_ff, args.dropout) for _ in range(args.n_layers)
        )
        self.out_norm = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(args.dropout)
        self.d_model, self.n_heads, self.emb_dim = d_model, n_heads, d_model
        self.window_size = args.window_size or None  # each query's span of keys; None: all earlier steps
        # rollouts attend over the last cache_len steps: the window, else max_seq_len (the reference's rolling cache);
        # the KV cache holds exactly that many, so its memory never grows with the rollout
        self.cache_len = self.window_size or args.max_seq_len

    def embed(self, x, time):
        if self.pos is None:
            return self.drop(self.inp(x) + sinusoidal_embedding(time, self.d_model))
        # deviation: timesteps >= max_time_idx share the last row (the reference requires t < max_time_idx)
        return self.drop(self.inp(x) + self.pos(time.clamp(max=self.pos.num_embeddings - 1)))

    def forward(self, x, time, window_size=None):
        """Causal attention in which each query sees its last `window_size` keys incl. itself (default --window-size;
        None: all). forward(..., window_size=self.cache_len) is exactly what the rolling rollout cache computes."""
        x = self.embed(x, time)
        for layer in self.layers:
            x = layer(x, window_size or self.window_size)
        return self.out_norm(x)

    def step(self, x, time, hidden):
        k_cache, v_cache, count = hidden  # (layers, N, H, W, E) x2, (N,)
        N, W = count.shape[0], self.cache_len
        slot = (torch.arange(N, device=x.device), count % W)  # the oldest entry is overwritten once the window is full
        valid = (torch.arange(W, device=x.device) <= count.clamp(max=W - 1).unsqueeze(1)).view(N, 1, 1, W)
        x = self.embed(x, time)
        for i, layer in enumerate(self.layers):
            x = layer.step(x, k_cache[i], v_cache[i], slot, valid)
        return self.out_norm(x), (k_cache, v_cache, count + 1)

    def init_hidden(self, n, device):
        shape = (len(self.layers), n, self.n_heads, self.cache_len, self.d_model // self.n_heads)
        k_cache, v_cache = torch.zeros(shape, device=device), torch.zeros(shape, device=device)
        return k_cache, v_cache, torch.zeros(n, dtype=torch.long, device=device)

    def reset_hidden(self, hidden, done):
        k_cache, v_cache, count = hidden
        return k_cache, v_cache, count.masked_fill(done, 0)  # stale keys are masked out by `count`


# ------------------------------------------------------ Mamba ------------------------------------------------------
def selective_scan(u, dt, A, Bm, Cm, D, z):
    """Mamba's selective scan in pure PyTorch (any device), gated by silu(z): u, dt, z (B, L, d_inner), A (d_inner, n),
    Bm, Cm (B, L, n), D (d_inner,) -> (B, L, d_inner). common/kernels.py has the fused CUDA kernel's adapter."""
    h = u.new_zeros(u.shape[0], u.shape[2], A.shape[1])  # (B, d_inner, n)
    ys = []
    for t in range(u.shape[1]):  # h_t = exp(dt A) h_{t-1} + dt B_t u_t;  y_t = C_t h_t + D u_t
        h = torch.exp(dt[:, t, :, None] * A) * h + (dt[:, t, :, None] * Bm[:, t, None, :]) * u[:, t, :, None]
        ys.append((h @ Cm[:, t, :, None]).squeeze(-1))
    return (torch.stack(ys, dim=1) + u * D) * F.silu(z)  # gated by silu(z)


class MambaBlock(nn.Module):
    """Mamba (Gu & Dao, 2023): gated selective state-space model. Pure PyTorch scan (readable reference, any device);
    mamba-ssm's fused kernel with the same parameters when it is installed and the input is on CUDA."""

    def __init__(self, d_model, d_state, d_conv=4, expand=2):
        super().__init__()
        d_inner, self.dt_rank = expand * d_model, math.ceil(d_model / 16)
        self.d_inner, self.d_state, self.d_conv = d_inner, d_state, d_conv
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, d_inner)
        dt = torch.exp(torch.rand(d_inner) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1: initial steps in [1e-3, 0.1]
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1).float()).repeat(d_inner, 1))  # (d_inner, n)
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def ssm_params(self, u):  # u: (B, L, d_inner) -> dt (B, L, d_inner), Bm and Cm (B, L, n)
        dt, Bm, Cm = self.x_proj(u).split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        return F.softplus(self.dt_proj(dt)), Bm, Cm

    def forward(self, x):  # x: (B, L, d_model)
        L = x.shape[1]
        u, z = self.in_proj(x).chunk(2, dim=-1)  # (B, L, d_inner) each
        u = F.silu(self.conv(u.transpose(1, 2))[..., :L].transpose(1, 2))  # causal depthwise conv
        dt, Bm, Cm = self.ssm_params(u)
        A = -torch.exp(self.A_log)  # (d_inner, n)
        return self.out_proj(mamba_scan(selective_scan, u, dt, A, Bm, Cm, self.D, z))  # fused on CUDA if installed

    def step(self, x, conv_state, ssm_state):
        """x: (N, 1, d_model); conv_state: (N, d_inner, d_conv) last inputs of the conv; ssm_state: (N, d_inner, n)."""
        u, z = self.in_proj(x[:, 0]).chunk(2, dim=-1)  # (N, d_inner)
        conv_state = torch.cat([conv_state[:, :, 1:], u.unsqueeze(-1)], dim=-1)
        u = F.silu((conv_state * self.conv.weight[:, 0]).sum(-1) + self.conv.bias)
        dt, Bm, Cm = self.ssm_params(u)
        ssm_state = (
            torch.exp(dt[..., None] * -torch.exp(self.A_log)) * ssm_state + (dt[..., None] * Bm[:, None]) * u[..., None]
        )
        y = (ssm_state @ Cm[..., None]).squeeze(-1) + u * self.D
        return self.out_proj(y * F.silu(z)).unsqueeze(1), conv_state, ssm_state


class MambaTrajEncoder(nn.Module):
    def __init__(self, d_in, d_model, n_layers, d_state):
        super().__init__()
        self.inp = nn.Linear(d_in, d_model)
        self.blocks = nn.ModuleList(MambaBlock(d_model, d_state) for _ in range(n_layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.out_norm = nn.LayerNorm(d_model)
        self.emb_dim = d_model

    def forward(self, x, time):
        x = self.inp(x)
        for norm, block in zip(self.norms, self.blocks):
            x = x + block(norm(x))
        return self.out_norm(x)

    def step(self, x, time, hidden):
        conv, ssm = hidden  # (layers, N, d_inner, d_conv), (layers, N, d_inner, n)
        x = self.inp(x)
        states = []
        for i, (norm, block) in enumerate(zip(self.norms, self.blocks)):
            y, *state = block.step(norm(x), conv[i], ssm[i])
            x = x + y
            states.append(state)
        return self.out_norm(x), tuple(torch.stack(h) for h in zip(*states))  # the new (conv, ssm)

    def init_hidden(self, n, device):  # (layers, n, d_inner, d_conv), (layers, n, d_inner, d_state)
        b = self.blocks[0]
        shape = (len(self.blocks), n, b.d_inner)
        return torch.zeros(*shape, b.d_conv, device=device), torch.zeros(*shape, b.d_state, device=device)

    def reset_hidden(self, hidden, done):
        return tuple(h.masked_fill(done.view(1, -1, 1, 1), 0.0) for h in hidden)


def make_traj_encoder(args, d_in):
    """--traj-encoder -> module. Your own, `--traj-encoder module:f`: f(args, d_in) returns an nn.Module with the four
    methods above and `emb_dim` (docs/examples/custom_traj_encoder.py; tests/test_sequence_models.py checks that its
    step-by-step rollout equals its forward)."""
    if ":" in args.traj_encoder:
        return load_hook(args.traj_encoder, "--traj-encoder", "docs.examples.custom_traj_encoder:make")(args, d_in)
    if args.traj_encoder == "ff":
        return FFTrajEncoder(d_in, args.d_model, args.n_layers)
    if args.traj_encoder == "gru":
        return GRUTrajEncoder(d_in, args.d_model, args.n_layers)
    if args.traj_encoder == "mamba":
        return MambaTrajEncoder(d_in, args.d_model, args.n_layers, args.d_state)
    if args.traj_encoder == "transformer":
        return TransformerTrajEncoder(d_in, args)
    raise UserError(f"--traj-encoder {args.traj_encoder!r}: choose ff, gru, transformer, mamba, or module:f")


# ========================== Actor: one action distribution per gamma, from one shared MLP ===========================
class Actor(nn.Module):
    """Discrete: categorical with clipped probabilities. Box: tanh-Gaussian, log std squashed into [-5, 2].
    MultiBinary: independent Bernoullis. Only the last layer's units are gamma-specific."""

    def __init__(self, d_state, action_dim, kind, num_gammas, d_hidden, discrete_clip):
        super().__init__()
        self.kind, self.A, self.G, self.clip = kind, action_dim, num_gammas, discrete_clip
        d_out = 2 * action_dim if kind == "box" else action_dim
        self.net = mlp(d_state, d_hidden, num_gammas * d_out)

    def forward(self, s):  # s: (B, L, D) -> distribution parameters (B, L, G, F)
        return self.net(s).unflatten(-1, (self.G, -1))

    def probs(self, params):  # Discrete: clipped, renormalized probabilities (B, L, G, A)
        p = F.softmax(params, dim=-1).clamp(*self.clip)
        return p / p.sum(-1, keepdim=True)

    def soften(self, onehot):  # Discrete: the buffer's one-hot actions, clipped like the policy's probabilities
        p = onehot.clamp(*self.clip)
        return p / p.sum(-1, keepdim=True)

    def mu_std(self, params):
        mu, raw = params.chunk(2, dim=-1)
        return mu, torch.exp(-5.0 + 3.5 * (torch.tanh(raw) + 1.0))

    def log_prob(self, params, a):  # a: (B, L, 1 or G, A) from the buffer -> (B, L, G)
        if self.kind == "discrete":
            return (self.probs(params).log() * a).sum(-1)  # a is one-hot
        if self.kind == "multibinary":
            return -F.binary_cross_entropy_with_logits(params, a.expand_as(params), reduction="none").mean(-1)
        mu, std = self.mu_std(params)
        z = torch.atanh(a.clamp(-0.99, 0.99))
        log_n = -0.5 * ((z - mu) / std) ** 2 - std.log() - 0.5 * math.log(2 * math.pi)
        return (log_n - 2 * (math.log(2) - z - F.softplus(-2 * z))).sum(-1)  # tanh change of variables

    @torch.no_grad()
    def health(self, params, mask):  # params: (B, T, F) of the acting gamma, mask: (B, T) -> Box actor scalars
        """Box: how deep the greedy action tanh(mu) sits in tanh's flat corners (mean |a|), how much it varies over the
        batch's states (the std per action dim, averaged), and the pre-tanh std. A collapsed actor reads |a| -> 1 and
        spread -> 0: then DPG's gradient through tanh (1 - a^2) is near 0 and the BC term alone can move it."""
        if self.kind != "box":
            return {}
        mu, std = self.mu_std(params)
        a, m = torch.tanh(mu), mask.unsqueeze(-1)  # (B, T, A), (B, T, 1)
        n = mask.sum().clamp(min=1.0)
        var = ((a - (a * m).sum((0, 1)) / n) ** 2 * m).sum((0, 1)) / n  # (A,) over the real steps
        return {
            "actor/greedy_abs_action": masked_mean(a.abs(), m),
            "actor/greedy_action_spread": var.sqrt().mean(),
            "actor/pre_tanh_std": masked_mean(std, m),
        }

    def sample(self, params, greedy=False):  # -> actions (..., G, A) in [-1, 1] (Box), 0/1 (MultiBinary), index
        if self.kind == "discrete":
            p = self.probs(params)
            return p.argmax(-1) if greedy else torch.multinomial(p.reshape(-1, self.A), 1).view(p.shape[:-1])
        if self.kind == "multibinary":
            return (params > 0).float() if greedy else torch.bernoulli(torch.sigmoid(params))
        mu, std = self.mu_std(params)
        return torch.tanh(mu if greedy else mu + std * torch.randn_like(mu))  # rsample: differentiable


# ================= Critic ensemble: C critics evaluated in one batched pass over (critics, gammas) ==================
class CriticEnsemble(nn.Module):
    """Discrete: state -> a Q-vector per gamma, so V(s) = sum_a pi(a|s) Q(s, a) is exact. Box / MultiBinary:
    (state, symlog(1/(1-gamma)), action) -> Q. Weights are (C, in, out) tensors, so each layer runs all C critics in
    one batched matmul; the state's share of the first layer is computed once and broadcast over the G gammas."""

    def __init__(self, d_state, action_dim, discrete, gammas, num_critics, d_hidden):
        super().__init__()
        self.discrete, self.G, self.A = discrete, len(gammas), action_dim
        d_in = d_state if discrete else d_state + 1 + action_dim
        d_out = self.G * action_dim if discrete else 1
        self.register_buffer("gamma_feat", symlog(1.0 / (1.0 - gammas).clamp(1e-6, 1.0)).unsqueeze(-1))  # (G, 1)
        dims = [d_in, d_hidden, d_hidden, d_out]
        self.weights, self.biases = nn.ParameterList(), nn.ParameterList()
        for fan_in, fan_out in zip(dims[:-1], dims[1:]):  # LeCun-uniform-like init, as the reference's EinMix
            self.weights.append(
                nn.Parameter(torch.empty(num_critics, fan_in, fan_out).uniform_(-1, 1) * math.sqrt(3 / fan_in))
            )
            self.biases.append(nn.Parameter(torch.empty(num_critics, fan_out).uniform_(-1, 1) * math.sqrt(1 / fan_in)))

    def forward(self, s, a=None, frozen=False):
        """s: (B, L, D); a: (B, L, G, A) for Box/MultiBinary. Returns (B, L, C, G, A) if discrete else (B, L, C, G).
        frozen=True evaluates with detached weights (the actor's gradient must not train the critics)."""
        # deviation: frozen = these weights detached (the reference: a copy synced before each optimizer step)
        (W0, W1, W2), (b0, b1, b2) = [[p.detach() if frozen else p for p in ps] for ps in (self.weights, self.biases)]
        (B, L, D), (C, _, H) = s.shape, W0.shape  # W0: (C, in, H), W1: (C, H, H), W2: (C, H, out)
        # The first layer is linear in its input [s, gamma feature, a], so it splits into s @ W0[:, :D] plus the rest:
        # the state's share is computed once per state, not once per gamma. Activations stay (C, rows, H), so each
        # later layer is one batched matmul over the C critics.
        W0s = W0[:, :D].transpose(0, 1).reshape(D, C * H)  # (D, C*H): every critic's state weights side by side
        h = torch.addmm(b0.flatten(), s.reshape(B * L, D), W0s).view(B * L, C, H).transpose(0, 1)  # (C, B*L, H)
        # Discrete: rows are states, and the G*A outputs hold every gamma and action
        if not self.discrete:  # Box, MultiBinary: add the gamma feature's and the action's share, per gamma
            g = self.gamma_feat * W0[:, None, D]  # (C, G, H): the gamma feature's share
            h = (h.unsqueeze(2) + g.unsqueeze(1)).flatten(1, 2)  # (C, B*L*G, H): rows become B*L*G
            a = a.clamp(-0.999, 0.999).reshape(1, -1, self.A).expand(C, -1, -1)  # (C, B*L*G, A)
            h = h.baddbmm(a, W0[:, D + 1 :])  # + the action's share
        # the activations are applied in place: each (C, rows, H) tensor is written once
        h = F.leaky_relu(torch.baddbmm(b1.unsqueeze(1), F.leaky_relu(h, inplace=True), W1), inplace=True)
        q = torch.baddbmm(b2.unsqueeze(1), h, W2)  # (C, rows, out)
        if self.discrete:
            return q.view(C, B, L, self.G, self.A).permute(1, 2, 0, 3, 4)  # (B, L, C, G, A)
        return q.view(C, B, L, self.G).permute(1, 2, 0, 3)  # (B, L, C, G)


# ============= PopArt: value normalization per gamma that preserves the critic's un-normalized outputs ==============
class PopArt(InputNorm):
    """Critics output normalized values q; the normalized Q is w*q + b, the raw Q is sigma*(w*q + b) + mu.
    When the statistics (mu, sigma) move, (w, b) change so that raw Q is unchanged (van Hasselt et al., 2016).
    As in the reference, (w, b) are per-gamma scalars, not the critic's last layer, so raw Q = sqrt(init_nu) q = 10 q
    forever (w * sigma stays 10, sigma * b + mu stays 0): PopArt reweights gamma g's squared error by 1 / sigma_g^2.
    A gamma whose targets barely vary (0.1 under CartPole's constant reward) then weighs ~10^6 times gamma 0.999.
    The statistics of the raw TD targets are InputNorm's running moments, one per gamma (its update, not its forward;
    sigma has its own clamps)."""

    def __init__(self, num_gammas, beta=5e-4, init_nu=100.0, enabled=True):
        super().__init__(num_gammas, beta, init_nu)
        self.enabled = enabled
        self.register_buffer("w", torch.ones(num_gammas))
        self.register_buffer("b", torch.zeros(num_gammas))

    @property
    def sigma(self):
        return (self.nu - self.mu**2).clamp(1e-4, 1e8).sqrt().clamp(1e-4, 1e6)

    @torch.no_grad()
    def update(self, y, mask):  # y: (B, T, G) raw TD targets, mask: (B, T)
        if not self.enabled:
            return
        mu_old, sigma_old = self.mu.clone(), self.sigma
        super().update(y, mask)
        sigma = self.sigma
        self.w.mul_(sigma_old / sigma)
        self.b.copy_((sigma_old * self.b + mu_old - self.mu) / sigma)

    def normalized(self, q):  # q: (..., G) critic output -> normalized Q
        return self.w * q + self.b if self.enabled else q

    def raw(self, q):
        return self.sigma * (self.w * q + self.b) + self.mu if self.enabled else q

    def normalize_target(self, y):
        return (y - self.mu) / self.sigma if self.enabled else y


# =================== Agent: the shared sequence model, actor, critics, targets, and AMAGO's loss ====================
def nstep_td_target(r, d, mask, q_next, gammas, n):
    """Multi-gamma n-step TD targets. r, d, mask: (B, T) reward, terminated, valid transition; q_next: (B, T, G) is
    Q_target(s_{t+1}, a') (raw scale); gammas: (G,). Returns (B, T, G). Padding (mask 0) adds nothing, a terminal
    step stops the sum and the bootstrap, and a window that ends early bootstraps from its last valid next state."""
    T = r.shape[1]
    pad = lambda x: F.pad(x, (0, 0, 0, n - 1) if x.dim() == 3 else (0, n - 1))  # noqa: E731
    r, d, mask, q_next = pad(r), pad(d), pad(mask), pad(q_next)
    y, boot = torch.zeros_like(q_next[:, :T]), torch.zeros_like(q_next[:, :T])
    alive = torch.ones_like(r[:, :T])  # 0 once a terminal transition has been summed
    for k in range(n):
        m = mask[:, k : k + T]
        y = y + (m * alive * r[:, k : k + T]).unsqueeze(-1) * gammas**k
        alive = alive * (1 - m * d[:, k : k + T])
        boot = torch.where(m.unsqueeze(-1).bool(), alive.unsqueeze(-1) * gammas ** (k + 1) * q_next[:, k : k + T], boot)
    return y + boot


class Agent(nn.Module):
    def __init__(self, args, obs_space, action_space):
        super().__init__()
        discrete, multibinary = (isinstance(action_space, k) for k in (gym.spaces.Discrete, gym.spaces.MultiBinary))
        A = int(action_space.n) if discrete else int(np.prod(action_space.shape))
        self.kind = "discrete" if discrete else "multibinary" if multibinary else "box"
        # the online term needs a dQ/da path (DPG) or an exact expectation (Discrete); Bernoulli bits have neither
        self.online_coeff = float(self.kind != "multibinary") if args.online_coeff is None else args.online_coeff
        if self.kind == "multibinary" and self.online_coeff > 0:
            raise UserError(
                f"--online-coeff {args.online_coeff}: MultiBinary actions are not differentiable, so the "
                "online (DPG) term must be 0 (leave --online-coeff unset for the default)"
            )
        self.args, self.A = args, A
        self.register_buffer("gammas", torch.tensor([*args.multigammas, args.gamma], dtype=torch.float32))  # (G,)
        G = len(self.gammas)
        self.tstep = make_tstep_encoder(args, obs_space, A + 1)
        self.traj = make_traj_encoder(args, args.tstep_dim)
        D = self.traj.emb_dim
        self.actor = Actor(D, A, self.kind, G, args.actor_hidden, args.discrete_clip)
        self.critics = CriticEnsemble(D, A, self.kind == "discrete", self.gammas, args.num_critics, args.critic_hidden)
        self.popart = PopArt(G, enabled=args.popart)
        # targets: EMA copies of the actor and critics. No target copy of the encoders: targets use the online
        # sequence model's output under no_grad (AMAGO's shared-encoder design).
        self.target_actor = copy.deepcopy(self.actor).requires_grad_(False)
        self.target_critics = copy.deepcopy(self.critics).requires_grad_(False)

    def trainable_parameters(self):
        return [p for m in (self.tstep, self.traj, self.actor, self.critics) for p in m.parameters()]

    @torch.no_grad()
    def update_targets(self):
        online = list(self.actor.parameters()) + list(self.critics.parameters())
        target = list(self.target_actor.parameters()) + list(self.target_critics.parameters())
        torch._foreach_lerp_(target, online, self.args.tau)

    def embed(self, obs, rl2, mask=None):  # the timestep encoder's tokens (B, L, tstep_dim)
        return self.tstep(obs, torch.zeros_like(rl2) if self.args.hide_rl2 else rl2, mask)

    @torch.inference_mode()  # no autograd bookkeeping at all (lighter than no_grad for these small ops)
    def get_actions(self, obs, rl2, time, hidden, greedy=False):
        """One rollout step for N actors: obs[k] (N, ...), rl2 (N, A+1), time (N,) -> actions for the last gamma.
        greedy: a bool for all actors, or (N,) bool: the actors that take the argmax / mean action, the rest sample."""
        obs = {k: v.unsqueeze(1) for k, v in obs.items()}
        s, hidden = self.traj.step(self.embed(obs, rl2.unsqueeze(1)), time.unsqueeze(1), hidden)
        params = self.actor(s)[:, 0, -1]  # (N, F)
        a = self.actor.sample(params, greedy=not torch.is_tensor(greedy) and bool(greedy))  # (N,) or (N, A)
        if torch.is_tensor(greedy):
            a = torch.where(greedy.view(-1, *[1] * (a.dim() - 1)), self.actor.sample(params, greedy=True), a)
        return a, hidden

    # ----------------------------------------------------- loss -----------------------------------------------------
    def forward(self, batch):
        """AMAGO's single loss: critic_loss_weight * critic + actor, one backward through the shared sequence model.
        Batch: obs[k] (B, L, ...), rl2 (B, L, A+1), time (B, L), mask (B, L); actions (B, T, A), rewards, terminated
        (B, T) with T = L - 1 transitions; transition t is valid when timestep t+1 is real."""
        args, G, C = self.args, len(self.gammas), self.args.num_critics
        mask = batch["mask"][:, 1:].float()  # (B, T)
        r = batch["rewards"] * args.reward_multiplier
        d = batch["terminated"].float()
        a_buf = batch["actions"].unsqueeze(2)  # (B, T, 1, A)

        s = self.traj(self.embed(batch["obs"], batch["rl2"], batch["mask"]), batch["time"])  # (B, L, D)
        params = self.actor(s)  # (B, L, G, F)

        # ------------------------------------------------ critic loss ------------------------------------------------
        if self.kind == "discrete":
            q_all = self.critics(s[:, :-1])  # (B, T, C, G, A)
            q = (q_all * self.actor.soften(a_buf).unsqueeze(2)).sum(-1)  # Q(s, a_buffer): (B, T, C, G)
        else:
            q = self.critics(s[:, :-1], a_buf.expand(-1, -1, G, -1))  # (B, T, C, G)

        with torch.no_grad():
            s_next = s[:, 1:].detach()
            target_params = self.target_actor(s_next)
            if self.kind == "discrete":
                q_next = (self.target_critics(s_next) * self.actor.probs(target_params).unsqueeze(2)).sum(-1)
            else:
                q_next = self.target_critics(s_next, self.actor.sample(target_params))  # (B, T, C, G)
            q_next = self.popart.raw(q_next)
            # REDQ: each (b, t, g) reduces its own random subset of critics, drawn with replacement
            idx = torch.randint(C, (*q_next.shape[:2], args.num_critics_td, G), device=s.device)
            subset = q_next.gather(2, idx)
            q_next = subset.min(2).values if self.online_coeff > 0 else subset.mean(2)  # (B, T, G)
            y = nstep_td_target(r, d, mask, q_next, self.gammas, args.n_step)
            self.popart.update(y, mask)
            y_norm = self.popart.normalize_target(y)
        critic_loss = masked_mean((self.popart.normalized(q) - y_norm.unsqueeze(2)) ** 2, mask[:, :, None, None])

        # ------------------------------------------------- actor loss -------------------------------------------------
        logp = self.actor.log_prob(params[:, :-1], a_buf)  # (B, T, G)
        if self.kind == "discrete":
            # exact expectation over actions; the critics' Q-vectors are detached so only pi gets this gradient
            probs = self.actor.probs(params[:, :-1]).unsqueeze(2)  # (B, T, 1, G, A)
            q_pi = (q_all.detach() * probs).sum(-1)  # (B, T, C, G)
        elif self.kind == "box":
            q_pi = self.critics(s[:, :-1].detach(), self.actor.sample(params[:, :-1]), frozen=True)  # DPG
        else:
            q_pi = self.critics(s[:, :-1].detach(), self.actor.sample(params[:, :-1]).detach(), frozen=True)
        online = -self.popart.normalized(q_pi.min(2).values)  # (B, T, G)
        with torch.no_grad():  # advantage per gamma, on the critics' (normalized) outputs
            adv = q.detach().mean(2) - q_pi.detach().mean(2)
            keep = (adv > 0).float()
        offline = -keep * logp
        actor_loss = masked_mean(self.online_coeff * online + args.offline_coeff * offline, mask[:, :, None])

        loss = actor_loss + args.critic_loss_weight * critic_loss
        metrics = {
            "losses/critic_loss": critic_loss.detach(),
            "losses/actor_loss": actor_loss.detach(),
            "losses/q_mean": masked_mean(self.popart.raw(q.detach())[..., -1], mask[:, :, None]),
            "losses/td_target_mean": masked_mean(y[..., -1], mask),
            "losses/bc_filter_frac": masked_mean(keep[..., -1], mask),
            "losses/popart_sigma": self.popart.sigma[-1],
            **self.actor.health(params[:, :-1, -1], mask),
        }
        return loss, metrics


# ================================================ Disk replay buffer ================================================
class TrajectoryWriter:
    """Accumulates each actor's steps and writes finished trajectories, or snippets of long ones, as files.
    A snippet ends with a bootstrapped (not terminal) transition; the next one starts at its last timestep."""

    def __init__(self, num_envs, buffer, save_len, max_seq_len, rng):
        self.buffer, self.rng, self.N = buffer, rng, num_envs
        # deviation: a snippet holds at least max_seq_len steps (the reference: save_len - max_seq_len, however small)
        self.save_range = (max(save_len - max_seq_len, max_seq_len), save_len + max_seq_len)
        self.trajs = [None] * num_envs

    def start(self, i, obs):  # obs: actor i's wrapped observation {"obs", "rl2", "time"}
        self.trajs[i] = {"obs": [obs], "actions": [], "rewards": [], "terminated": []}
        # staggered snippet lengths, so windows are seen at every absolute time offset (as in the reference)
        self.trajs[i]["cut"] = int(self.rng.integers(*self.save_range, endpoint=True))

    def step(self, i, action, reward, terminated, next_obs, done):
        traj = self.trajs[i]
        traj["actions"].append(action)
        traj["rewards"].append(reward)
        traj["terminated"].append(terminated)
        traj["obs"].append(next_obs)
        if done:  # the caller starts the next trajectory from the reset observation
            self.buffer.save(traj)
        elif len(traj["actions"]) >= traj["cut"]:
            self.buffer.save(traj)
            self.start(i, next_obs)


class DiskReplayBuffer(torch.utils.data.IterableDataset):
    """Trajectory files in {root}/fifo (ours, oldest deleted above max_size) and {root}/protected (e.g.
    demonstrations; sampled, never deleted). A sample = a file picked uniformly, then a window of max_seq_len+1
    timesteps (`padded_sampling`: whether a window may overhang the file's start or end, shorter and padded).
    Iterating runs in a DataLoader worker, so reading overlaps with the update. Files are written whole or not at all
    and never change, so the worker caches those it has read (bounded in files and bytes); one that cannot be read
    (disk full, edited by hand, another env's shapes given `obs_space`) is skipped, never sampled again by that reader.
    `relabel` (optional): window dict -> window dict, applied to every sampled window in the worker, e.g. hindsight
    relabeling (AMAGO Alg. 1: "relabel old sequence data with new rewards"). It gets the arrays as sampled (obs_*,
    rl2, time: W+1 timesteps; actions, rewards, terminated: W) and may shorten them, but must not write into them
    (they are views of the cached file)."""

    def __init__(
        self,
        root,
        max_size,
        max_seq_len,
        action_dim,
        discrete,
        file_format="npz",
        cache_files=10_000,
        relabel=None,
        padded_sampling="none",
        cache_bytes=2**30,
        obs_space=None,
    ):
        self.fifo, self.protected = Path(root) / "fifo", Path(root) / "protected"
        self.fifo.mkdir(parents=True, exist_ok=True)
        self.protected.mkdir(parents=True, exist_ok=True)
        self.max_size, self.max_seq_len, self.A, self.discrete = max_size, max_seq_len, action_dim, discrete
        self.file_format, self.cache_files, self.relabel = file_format, cache_files, relabel
        self.cache_bytes, self.obs_space = cache_bytes, obs_space
        if padded_sampling not in ("none", "right", "left", "both"):
            raise UserError(f"padded_sampling={padded_sampling!r}: choose none, right, left or both")
        self.padded = padded_sampling
        self.arrived, self.listings = {}, 0  # fifo file -> (the listing that first saw it, its mtime): FIFO order
        self.last_arrival = time.monotonic()  # when a listing last found a new file (this process's clock)

    def save(self, traj):
        """traj: lists of wrapped observations (T+1) and of actions, rewards, terminated (T) -> one .npz file."""
        obs = traj["obs"]
        arrays = {f"obs_{k}": np.stack([o["obs"][k] for o in obs]) for k in obs[0]["obs"]}
        arrays["rl2"] = np.stack([o["rl2"] for o in obs]).astype(np.float32)
        arrays["time"] = np.array([o["time"] for o in obs], dtype=np.int64)
        acts = np.asarray(traj["actions"])
        if self.discrete:  # one-hot, as the rl2 features
            acts = np.eye(self.A, dtype=np.float32)[acts.astype(np.int64).reshape(-1)]
        arrays["actions"] = acts.reshape(len(acts), self.A).astype(np.float32)
        arrays["rewards"] = np.asarray(traj["rewards"], np.float32)
        arrays["terminated"] = np.asarray(traj["terminated"], bool)
        name = f"{time.time_ns()}_{uuid.uuid4().hex[:8]}.npz"  # unique; its writer's clock never orders eviction
        save = np.savez_compressed if self.file_format == "npz-compressed" else np.savez
        write_atomic(self.fifo / name, lambda f: save(f, **arrays))  # the file appears whole or not at all

    def files(self):
        """Paths (str, oldest first) of the .npz files in fifo/ then protected/; never the .tmp files, and anything else
        found there is skipped with a warning. The worker lists them every 256 samples."""
        return list_trajectory_files(self.fifo) + list_trajectory_files(self.protected)

    def delete_oldest(self):
        """FIFO: delete the fifo files above max_size, in the order this process first listed them (the files of one
        listing, e.g. all files at a resume, by modification time: the filesystem's clock), never by the time in their
        names: a collector whose clock runs ahead would keep its stale files and evict every fresh one. Only the
        learner deletes (protected/ is never touched)."""
        fifo, self.listings = list_trajectory_files(self.fifo), self.listings + 1
        self.arrived = {path: self.arrived[path] for path in fifo if path in self.arrived}  # forget the deleted
        for path in fifo:
            if path not in self.arrived:
                self.last_arrival = time.monotonic()
                with suppress(OSError):  # deleted meanwhile: it sorts first, and unlink skips it
                    self.arrived[path] = (self.listings, os.stat(path).st_mtime_ns)
        fifo.sort(key=lambda path: (*self.arrived.get(path, (0, 0)), path))
        for old in fifo[: max(len(fifo) - self.max_size, 0)]:
            Path(old).unlink(missing_ok=True)
        return {
            "buffer/fifo_files": min(len(fifo), self.max_size),
            "buffer/protected_files": len(list_trajectory_files(self.protected)),
        }

    def sample(self, files, cache, bad):
        """One training window from a file picked uniformly among the readable ones."""
        while files:
            path = random.choice(files)
            if path not in cache:
                try:
                    cache.add(path, read_trajectory(path, self.obs_space, self.A))
                except Exception as e:  # truncated/corrupt/foreign/vanished file: never sample it again
                    bad.add(path)
                    files.remove(path)
                    if not isinstance(e, FileNotFoundError):  # vanished: deleted by the FIFO since the listing
                        warnings.warn(f"skipping replay file {os.path.basename(path)}: {type(e).__name__}: {e}")
                    continue
            data = cache[path]
            T = len(data["actions"])
            w = self.max_seq_len
            lo = -w + 1 if self.padded in ("left", "both") else 0  # a start before 0 gives a shorter window from t=0
            hi = T - 2 if self.padded in ("right", "both") else T - w  # a start past T-w runs off the end (>= 2 steps)
            s = random.randint(lo, max(hi, lo)) if T > w else 0
            start, stop = max(s, 0), min(s + w, T)
            window = {
                k: v[start : stop + 1] if k in ("rl2", "time") or k.startswith("obs_") else v[start:stop]
                for k, v in data.items()
            }
            return self.relabel(window) if self.relabel else window
        raise RuntimeError(f"no readable trajectory files in {self.fifo} or {self.protected}")

    def __iter__(self):  # an endless stream of windows; the file list is refreshed every 256 samples
        cache, bad = FileCache(self.cache_files, self.cache_bytes), set()
        while True:
            files = [f for f in self.files() if f not in bad]
            cache.keep(files)  # forget deleted files
            for _ in range(256):
                yield self.sample(files, cache, bad)


def collate(samples):
    """Windows -> one batch, right-padded to the longest window: obs_*, rl2, time (B, L, ...); actions, rewards,
    terminated (B, L-1, ...); mask (B, L) marks the real timesteps. The loss averages over the mask only, so padding
    never trains anything. Small batches stay numpy arrays (see common/batch.py make_loader)."""
    L = max(len(s["rl2"]) for s in samples)
    out = {}
    for k in samples[0]:
        n = L if k in ("rl2", "time") or k.startswith("obs_") else L - 1  # L timesteps, L-1 transitions between them
        out[k] = np.stack(
            [np.concatenate([s[k], np.zeros((n - len(s[k]), *s[k].shape[1:]), s[k].dtype)]) for s in samples]
        )
    out["mask"] = np.stack([np.arange(L) < len(s["rl2"]) for s in samples])  # (B, L)
    if sum(v.nbytes for v in out.values()) > 2**20:
        out = {k: torch.from_numpy(v) for k, v in out.items()}
    out["obs"] = {k[len("obs_") :]: out.pop(k) for k in list(out) if k.startswith("obs_")}
    return out


def load_relabel(spec):  # --relabel module:function -> the function (None: no relabeling)
    return spec and load_hook(spec, "--relabel", "envs.mazerunner:relabel_some")


# ============================ Training step: learning-rate schedule, gradient accumulation ============================
def num_epochs(args):  # epochs of collect -> train -> eval that total_timesteps asks for
    return math.ceil(args.total_timesteps / (args.timesteps_per_epoch * args.num_envs))


def updates_per_epoch(args):
    """--batches-per-epoch, else the updates that train --replay-ratio timesteps per env step of the epoch: 200 at the
    default 32-step context, 63 at 101 steps, 13 at 501."""
    if args.batches_per_epoch is not None:
        return args.batches_per_epoch
    trained_per_update = args.batch_size * args.batches_per_update * args.max_seq_len
    return max(1, round(args.replay_ratio * args.timesteps_per_epoch * args.num_envs / trained_per_update))


def due(every, epoch, last):  # every `every` epochs (0: never), and at the last one
    return bool(every) and (epoch % every == 0 or epoch == last)


def evaluate_and_log(args, policy, eval_envs, accelerator, writer, counters):
    """One evaluation (eval/, and eval_sampled/ with --eval-sampled-too), logged at the run's env step -> its return."""
    seed = eval_seed(args.seed, counters["epoch"], args.num_envs)  # the same episodes for the same seed only
    ev = scale.evaluations(args, policy, eval_envs, accelerator.device, seed, accelerator)
    for k, v in ev.items():
        writer.add_scalar(k, v, counters["global_step"])
    return ev["eval/return"]


def lr_at(args, updates):
    """Linear warm-up from 0 (as the reference), then constant; --anneal-lr: a linear decay to 0 at the last update."""
    # deviation: the warm-up lasts --warmup-steps updates on any number of processes (the reference's scheduler,
    # stepped by accelerate once per process, ends it N times sooner on N processes)
    total = num_epochs(args) * updates_per_epoch(args)
    if torch.is_tensor(updates):  # --compile: the same schedule on the device, inside the compiled step
        frac = (1.0 - updates / total).clamp(min=0.0) if args.anneal_lr else 1.0
        return args.learning_rate * (updates / max(args.warmup_steps, 1)).clamp(max=1.0).clamp(max=frac)
    frac = max(0.0, 1.0 - updates / total) if args.anneal_lr else 1.0
    return args.learning_rate * min(1.0, updates / max(args.warmup_steps, 1), frac)


def train_step(agent, optimizer, accelerator, batches, args, updates):
    """One optimizer step on the mean gradient of the k batches (--batches-per-update), each a mean over its steps."""
    for g in optimizer.param_groups:
        g["lr"] = lr_at(args, updates)
    batches = [batches] if isinstance(batches, dict) else batches  # one batch, or a list of k
    optimizer.zero_grad(set_to_none=True)
    for i, batch in enumerate(batches):  # DDP: gradients are averaged across processes in the last backward only
        with accelerator.no_sync(agent) if i + 1 < len(batches) else nullcontext():
            with accelerator.autocast():
                loss, metrics = agent(batch)
            accelerator.backward(loss / len(batches))
        if not args.compile and not torch.isfinite(loss):  # a NaN/inf step makes every weight NaN: stop before it
            raise FloatingPointError(f"non-finite loss {loss.item()} at update {updates}; the weights are unchanged")
    metrics["losses/grad_norm"] = accelerator.clip_grad_norm_(
        accelerator.unwrap_model(agent).trainable_parameters(), args.grad_clip
    )
    optimizer.step()
    accelerator.unwrap_model(agent).update_targets()  # deviation: EMA after the optimizer step (the reference: before)
    return metrics


def make_exploration(args, envs):
    common = (args.num_envs, envs.single_action_space, args.eps_start, args.eps_end, args.eps_anneal_steps, args.seed)
    greedy = 1.0 if args.train_greedy else args.greedy_episodes  # --train-greedy: every episode greedy
    kw = dict(
        scale_min=args.eps_scale_min, revisit_power=args.eps_revisit_power, floor=args.eps_floor, greedy_frac=greedy
    )
    if args.exploration == "bilevel":
        return BilevelEpsilonGreedy(*common, args.bilevel_horizon, args.bilevel_eps_end, **kw)
    if args.exploration == "egreedy":
        return EpsilonGreedy(*common, **kw)
    # module:f: f(EpsilonGreedy, envs) returns a subclass, constructed like EpsilonGreedy (e.g. envs/tmaze.py)
    factory = load_hook(args.exploration, "--exploration", "envs.tmaze:TMazeEpsilonGreedy (or egreedy, bilevel)")
    return factory(EpsilonGreedy, envs)(*common, **kw)


if __name__ == "__main__":
    args = parse_flags(Args)  # tyro.cli(Args); from here on a user's mistake is one line, `error: ...`
    if args.resume and args.run_name:  # the run's saved flags (runs/NAME/flags.json), except those given here
        args = restore_flags(args, Path("runs") / args.run_name, sys.argv[1:])
    check_args(args)
    as_given = copy.copy(args)  # saved before env ids are resolved, so that a `module:Env` id still imports on resume
    args.batches_per_epoch = updates_per_epoch(args)  # as CleanRL derives its batch sizes: one number from here on
    args.env_id, args.eval_env_id = resolve_env_ids(args)  # comma-separated ids, resolved to registered ones
    accelerator = Accelerator(cpu=not (args.cuda and torch.cuda.is_available()), mixed_precision=args.mixed_precision)
    device, main_process = accelerator.device, accelerator.is_main_process  # `accelerate launch` runs one per GPU
    run_name = args.run_name or f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    run_name = broadcast_object_list([run_name])[0]  # every process takes process 0's name (its time stamp)
    run_dir = Path("runs") / run_name
    ckpt_path, buffer_root = run_dir / "checkpoint.pt", Path(args.buffer_dir) / (args.dset_name or run_name)
    # one learner per buffer, never a reused name without --resume (other ranks of one launch and collectors share it)
    lock = scale.claim(args, buffer_root, ckpt_path) if main_process and not args.eval_only else None
    stop = StopSignals()  # Ctrl-C / SIGTERM: stop at the next step or update and save a checkpoint
    writer = make_writer(args, run_name, run_dir, accelerator.process_index)  # tensorboard (+ wandb: --track)

    # TRY NOT TO MODIFY: seeding (deviation: every random stream is seeded and checkpointed; the reference: not all)
    args.seed += accelerator.process_index  # each process collects its own data into the shared buffer
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    keep_freed_memory()  # an update's large tensors reuse freed memory, not fresh pages (common/memory.py)

    # env setup
    envs = make_vec_env(args.env_id, args.num_envs, args.env_mode, args.seed, args.capture_video, run_name)
    eval_envs = make_vec_env(args.eval_env_id, args.num_envs, args.env_mode, args.seed + 10_000)
    if main_process and not args.eval_only:  # the buffer holds one env's data
        check_spec(buffer_root, args.env_id, envs.single_observation_space["obs"], envs.single_action_space)

    # ALGO LOGIC: initialize agent here:
    agent = Agent(args, envs.single_observation_space["obs"], envs.single_action_space).to(device)
    params = agent.trainable_parameters()  # the encoders, actor and critics (not the EMA targets)
    optimizer = torch.optim.AdamW(params, lr=args.learning_rate, weight_decay=args.weight_decay, fused=True)
    buffer = DiskReplayBuffer(
        buffer_root,
        args.buffer_max_size,
        args.max_seq_len,
        agent.A,
        agent.kind == "discrete",
        args.file_format,
        relabel=load_relabel(args.relabel),
        padded_sampling=args.padded_sampling,
        obs_space=envs.single_observation_space["obs"],
    )
    loader = None  # started once the buffer holds a file
    explore = make_exploration(args, envs)
    counters = {"epoch": 0, "global_step": 0, "updates": 0, "frames": {}}  # frames: env steps per env name
    saved_epoch = None  # the epoch of the last checkpoint written or resumed, for error messages
    if args.resume and ckpt_path.exists() and args.mode != "collect":  # a collector starts afresh
        counters = load_checkpoint(ckpt_path, agent, optimizer, explore)
        c, saved_epoch = counters, counters["epoch"]
        print(f"resumed {run_name} at epoch {c['epoch']}, {c['global_step']} steps, {c['updates']} updates")
    if lock is not None and args.mode != "collect":  # once the run's weights fit (a refused resume changes nothing)
        save_flags(run_dir, as_given)  # --resume --run-name NAME restores them
    agent, optimizer = accelerator.prepare(agent, optimizer)
    policy = accelerator.unwrap_model(agent)
    writer_rng = np.random.default_rng(args.seed + counters["epoch"])
    trajs = TrajectoryWriter(args.num_envs, buffer, args.traj_save_len, args.max_seq_len, writer_rng)
    if args.eval_only:  # evaluate saved weights on envs (here the eval set), print the metrics as JSON, and exit
        sys.exit(scale.eval_only(args, policy, ckpt_path, envs, trajs, device))
    if args.compile:  # the same lines compiled; on one GPU replayed as CUDA graphs (common/compiled.py)
        train_step = compiled_update(train_step, agent, optimizer, accelerator, args)
        policy.get_actions = compiled_acting(policy.get_actions, policy, accelerator)
    num_params = sum(p.numel() for p in policy.trainable_parameters())
    print(f"{run_name}: {policy.kind} actions, {args.traj_encoder} memory, {num_params:,} parameters, {device}")
    if main_process:  # e.g. --discrete-clip with Box actions: said, not silently ignored
        note_unread_flags(args, sys.argv[1:], policy.kind, isinstance(policy.tstep, CNNTstepEncoder))

    # TRY NOT TO MODIFY: start the game
    start_time, start_step = time.time(), counters["global_step"]
    next_eval = start_time + 60 * min(args.eval_minutes, 2.0)  # the first eval within 2 minutes, then --eval-minutes
    # the --eval-minutes clock is read between env steps and between updates too: a long rollout or epoch still reports
    # on time (a collector never evaluates); the time evaluations take is left out of the epoch's rates
    clock = bool(args.eval_interval) and args.eval_minutes > 0 and args.mode != "collect"
    with env_errors(args.env_id, counters["global_step"], ckpt_path, saved_epoch):  # names the env and what is saved
        obs, _ = envs.reset(seed=args.seed + counters["epoch"])
    for i in range(args.num_envs):
        trajs.start(i, index_obs(obs, i))
    hidden = policy.traj.init_hidden(args.num_envs, device)
    ep_ret, ep_len = np.zeros(args.num_envs), np.zeros(args.num_envs, int)
    steps_per_epoch = args.timesteps_per_epoch * args.num_envs
    epochs = num_epochs(args)
    owner = main_process and args.mode != "collect"  # writes checkpoints and policy_latest.pt, deletes old files
    latest = run_dir / "policy_latest.pt"  # the learner's newest weights, for collector processes
    seen = None  # a collector: which version of `latest` it acts with
    if owner:  # its weights and runs/<run>/learner.json, which collectors follow (until it writes "done" at exit)
        scale.start_learner(run_dir, latest, policy, counters)
    scale.wait_for_data(args, buffer, stop, epochs)  # --mode learn: until the collectors' first file
    progress = Progress(args, counters, epochs * steps_per_epoch, epochs * args.batches_per_epoch, epochs)
    for epoch in range(counters["epoch"], epochs):
        at_start = {"global_step": counters["global_step"], "frames": dict(counters["frames"])}
        collect = args.mode != "learn" and epoch >= args.start_collecting_at_epoch  # roles and offline phases
        learn = args.mode != "collect" and epoch >= args.start_learning_at_epoch
        if args.mode == "collect":  # follows a live learner: waits for it (and --max-steps-per-update), ends with it
            if not scale.wait_for_learner(run_dir, args, buffer, stop, epoch, counters["global_step"]):
                break
            # act with the learner's latest weights (charts/policy_updates: their updates)
            seen = scale.load_latest(latest, policy, seen, writer, counters["global_step"])
        # ALGO LOGIC: collect timesteps_per_epoch steps per actor
        policy.eval()  # acting: no dropout, and sigma-reparam layers cache their weights (SigmaReparam.train)
        t0, eval_s = time.time(), 0.0
        for _ in range(args.timesteps_per_epoch if collect else 0):
            if stop:
                break
            if clock and scale.agree(accelerator, time.time() >= next_eval):
                t_eval, next_eval = time.time(), time.time() + 60 * args.eval_minutes
                progress.evaluated(evaluate_and_log(args, policy, eval_envs, accelerator, writer, counters))
                eval_s += time.time() - t_eval
            # every actor, none, or the (N,) episodes drawn greedy (--greedy-episodes)
            greedy = explore.greedy.all() or explore.greedy.any() and torch.from_numpy(explore.greedy).to(device)
            a, hidden = policy.get_actions(*obs_to_torch(obs, device), hidden, greedy=greedy)
            a = explore(a.cpu().numpy(), obs["time"], obs["obs"])
            with env_errors(
                args.env_id, counters["global_step"], ckpt_path, saved_epoch, envs.single_observation_space
            ):
                next_obs, rew, term, trunc, info = envs.step(a)
            done = term | trunc
            # a NaN or inf, or a reward too large for the critic, stops the run before anything is saved
            check_finite(
                args.env_id, counters["global_step"], rew, next_obs, info.get("final_obs"), done, args.reward_multiplier
            )
            counters["global_step"] += args.num_envs
            progress.show(counters)
            ep_ret += rew
            ep_len += 1
            # TRY NOT TO MODIFY: save data to the buffer; a done actor's true last obs is in info["final_obs"]
            for i in range(args.num_envs):
                name = info["final_info"]["env_name"][i] if done[i] else info["env_name"][i]
                counters["frames"][name] = counters["frames"].get(name, 0) + 1
                final = info["final_obs"][i] if done[i] else index_obs(next_obs, i)
                trajs.step(i, a[i], rew[i], term[i], final, done[i])
                if done[i]:
                    trajs.start(i, index_obs(next_obs, i))
                    writer.add_scalar("charts/episodic_return", ep_ret[i], counters["global_step"])
                    writer.add_scalar("charts/episodic_length", ep_len[i], counters["global_step"])
            explore.end_episodes(done)
            ep_ret[done], ep_len[done] = 0, 0
            # TRY NOT TO MODIFY: CRUCIAL step easy to overlook
            obs = next_obs
            hidden = policy.traj.reset_hidden(hidden, torch.as_tensor(done, device=device))
        collect_sps = steps_per_epoch * collect / (time.time() - t0 - eval_s)
        if owner:  # the only process that deletes files
            for k, v in buffer.delete_oldest().items():
                writer.add_scalar(k, v, counters["global_step"])
            scale.notice_stale_data(args, buffer)  # --mode learn: says so when the collectors' files stop coming

        # ALGO LOGIC: training
        t0, metrics, updates0, eval_s = time.time(), {}, counters["updates"], 0.0
        if learn and loader is None and buffer.files():  # DataLoader workers read the buffer while the update runs
            loader = make_loader(buffer, args.batch_size, args.num_workers, collate)
        if learn and loader is not None:
            policy.train()
            for _ in range(args.batches_per_epoch):
                if stop:
                    break
                batches = [to_device(next(loader), device) for _ in range(args.batches_per_update)]
                metrics = train_step(agent, optimizer, accelerator, batches, args, counters["updates"])
                counters["updates"] += 1
                progress.show(counters)
                if clock and scale.agree(accelerator, not stop and time.time() >= next_eval):
                    t_eval, next_eval = time.time(), time.time() + 60 * args.eval_minutes
                    progress.evaluated(evaluate_and_log(args, policy, eval_envs, accelerator, writer, counters))
                    eval_s += time.time() - t_eval
            for k, v in metrics.items():
                writer.add_scalar(k, v.item(), counters["global_step"])  # each process its own batches' metrics
            if counters["updates"] > updates0:  # the rate of the updates made (a stop can cut the epoch short)
                ups = (counters["updates"] - updates0) / (time.time() - t0 - eval_s)
                writer.add_scalar("charts/updates_per_s", ups, counters["global_step"])
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], counters["global_step"])
        if owner:  # a run folder deleted meanwhile: its flags and this epoch's checkpoint written again, then a stop
            scale.check_run_dir(run_dir, as_given, policy, optimizer, explore, {**counters, "epoch": epoch + 1})
        if learn and owner:  # collector processes reload it when it changes
            scale.save_latest(latest, policy, counters["updates"])
        if owner:
            scale.write_status(run_dir, counters["updates"])
        if learn and args.mode == "learn":  # a learner that does not collect counts its collectors' env steps
            counters["global_step"] = scale.collector_steps(run_dir)
        if stop:
            break
        counters["epoch"] = epoch + 1
        sps = int((counters["global_step"] - start_step) / (time.time() - start_time))
        frames = {f"charts/frames/{name}": n for name, n in counters["frames"].items()}  # env steps per env name
        logs = {"charts/SPS": sps, "charts/collect_SPS": collect_sps, "charts/updates": counters["updates"], **frames}
        for k, v in logs.items():
            writer.add_scalar(k, v, counters["global_step"])

        on_clock = args.eval_minutes > 0 and time.time() >= next_eval
        eval_due = due(args.eval_interval, counters["epoch"], epochs) or (bool(args.eval_interval) and on_clock)
        if args.mode != "collect" and scale.agree(accelerator, eval_due):
            next_eval = time.time() + 60 * args.eval_minutes
            progress.evaluated(evaluate_and_log(args, policy, eval_envs, accelerator, writer, counters))
        if owner and due(args.checkpoint_interval, counters["epoch"], epochs):
            run_dir.mkdir(parents=True, exist_ok=True)
            save_checkpoint(ckpt_path, policy, optimizer, explore, counters)
            saved_epoch = counters["epoch"]
        progress.epoch_done(counters)
    progress.close(counters)  # the count reached, a stopped epoch's env steps included
    redone = 0
    if stop and counters["epoch"] < epochs:  # the unfinished epoch is done again on --resume: its env steps count then
        redone = counters["global_step"] - at_start["global_step"] if collect else 0
        counters.update(at_start)
    if stop and owner:
        save_checkpoint(ckpt_path, policy, optimizer, explore, counters)
        kept = f"kept: {counters['global_step']:,} env steps, {counters['updates']:,} updates"
        again = f"; collected again: the unfinished epoch's {redone:,} env steps" if redone else ""
        print(
            f"stopped: checkpoint saved at epoch {counters['epoch']}; continue with --resume --run-name {run_name}"
            f" ({kept}{again})"
        )

    if args.save_model and owner:
        torch.save(policy.state_dict(), run_dir / f"{args.exp_name}.cleanrl_model")
        print(f"model saved to {run_dir / f'{args.exp_name}.cleanrl_model'}")
    envs.close()
    eval_envs.close()
    writer.close()
    sys.exit(128 + stop.signum if stop else 0)
