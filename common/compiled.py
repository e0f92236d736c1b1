"""--compile: the script's own update (train_step) and acting step (Agent.get_actions) through torch.compile, and on a
CUDA device each one recorded once as a CUDA graph and replayed, so that a step costs one launch instead of hundreds.

What runs are the script's lines; this module only arranges what compiling and graphing need:
- static shapes: every batch is padded to max_seq_len + 1 timesteps (collate pads to its longest window; padding is
  masked out of the loss), so one compiled graph and one CUDA graph serve every update;
- the learning rate computed on the device: train_step gets the update count as a 0-d tensor, so lr_at's schedule runs
  inside the step and the optimizer reads its rate from a tensor (a Python float would be baked into the graph);
- no host sync inside the step: a non-finite loss or gradient sets a flag on the device, and the fused AdamW skips
  every step from then on (its found_inf input, the one mixed-precision loss scaling uses), so the trained weights
  stay those from before; the flag is read back without waiting and raised as FloatingPointError (NonFiniteGuard);
- CUDA graphs read and write fixed memory: the arguments are copied into the graph's static inputs before a replay
  and the results copied out after it, so a caller's tensors are never the graph's.
On the CPU there is no graph: the compiled functions run as they are. With several processes (DDP), a CUDA graph
would record the gradients' all-reduce; they run compiled, without graphs. Nothing here imports a script."""

import os
import types

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from common.guards import UserError

GRAPH_WARMUP = 3  # eager calls on a side stream before a CUDA graph is recorded (lazy state, compilation, autotuning)
# torch.compile's backend. AMAGO_COMPILE_BACKEND=aot_eager (tests, debugging) keeps Dynamo's graphs and AOTAutograd's
# forward/backward split but runs them with eager kernels, skipping inductor's code generation (~40 s per graph cold)
BACKEND = os.environ.get("AMAGO_COMPILE_BACKEND", "inductor")


class Graphed:
    """fn(*args) recorded as a CUDA graph at its (GRAPH_WARMUP + 1)-th call and replayed from then on, one graph per
    distinct signature: the tensors' shapes and dtypes and the other arguments' values (e.g. greedy=True or False). A
    call copies its tensors into the graph's static inputs, replays, and returns copies of the graph's outputs. fn must
    not wait for the device (no .item(), no data-dependent Python branch) and must not depend on Python state that
    changes between calls; tensors it reads that are not arguments (weights, buffers) must be updated in place."""

    def __init__(self, fn, warmup=GRAPH_WARMUP, state=lambda: None, before_capture=lambda: None):
        self.fn, self.warmup, self.graphs, self.pool = fn, warmup, {}, None
        self.state, self.before_capture = state, before_capture  # Python state that selects the graph; a reset

    def __call__(self, *args):
        leaves, spec = tree_flatten(args)
        tensors = [i for i, x in enumerate(leaves) if torch.is_tensor(x)]
        shapes = tuple((x.shape, x.dtype, x.device) if torch.is_tensor(x) else x for x in leaves)
        key = (str(spec), shapes, self.state())
        g = self.graphs.setdefault(key, {"calls": 0})
        g["calls"] += 1
        if g["calls"] <= self.warmup:  # eager, on a side stream, as graph capture asks
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                out = self.fn(*args)
            torch.cuda.current_stream().wait_stream(side)
            return out
        if "graph" not in g:
            g["static"] = [leaves[i].clone() for i in tensors]
            static_leaves = list(leaves)
            for i, s in zip(tensors, g["static"]):
                static_leaves[i] = s
            self.pool = self.pool or torch.cuda.graph_pool_handle()  # the graphs share one memory pool
            self.before_capture()
            g["graph"] = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g["graph"], pool=self.pool):
                g["out"] = self.fn(*tree_unflatten(static_leaves, spec))
        for i, s in zip(tensors, g["static"]):
            s.copy_(leaves[i], non_blocking=True)
        g["graph"].replay()
        return tree_map(lambda x: x.clone() if torch.is_tensor(x) else x, g["out"])


def grads(optimizer):
    return [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]


def use_graphs(accelerator):
    return accelerator.device.type == "cuda" and accelerator.num_processes == 1


def pad_batch(batch, L):
    """A collated batch right-padded to L timesteps (L - 1 transitions), as collate pads: zeros, mask False."""

    def pad(x, n):
        if x.shape[1] > n:
            raise ValueError(f"--compile pads batches to max_seq_len + 1 = {L} timesteps; got a window of {x.shape[1]}")
        return x if x.shape[1] == n else torch.cat([x, x.new_zeros(x.shape[0], n - x.shape[1], *x.shape[2:])], 1)

    steps = ("obs", "rl2", "time", "mask")  # L timesteps; the rest (actions, rewards, terminated) L - 1 transitions
    return {k: tree_map(lambda x, k=k: pad(x, L if k in steps else L - 1), v) for k, v in batch.items()}


class NonFiniteGuard:
    """The compiled step's non-finite guard, without a host sync inside the step: `bad` is set on the device once a
    loss (a forward hook on the agent) or the gradients (a hook before the optimizer step; with DDP they are the same
    on every process, so all processes skip together) are not finite, and the fused AdamW skips its step while `bad`
    is 1 (its found_inf input, as loss scaling uses it), so the trained weights and Adam's moments stay those from
    before. `check` after each update: on the CPU, where nothing runs ahead, it reads the flag and raises at once; on
    CUDA it reads the copy that an earlier check started, if it has landed (never waiting), and starts the next, so the
    error comes an update or two late."""

    def __init__(self, agent, optimizer, device):
        inner = getattr(optimizer, "optimizer", optimizer)  # accelerate's AcceleratedOptimizer wraps the torch one
        if not inner.defaults.get("fused"):
            raise ValueError("--compile needs a fused optimizer (torch.optim.AdamW(..., fused=True), as main builds)")
        self.bad = torch.zeros((), device=device)
        inner.found_inf = self.bad  # read by the fused step: 1 skips it (and keeps its step count)
        agent.register_forward_hook(lambda module, inputs, out: self.flag(out[0]))  # out: (loss, metrics)
        inner.register_step_pre_hook(lambda opt, args, kwargs: self.flag(torch.stack(torch._foreach_norm(grads(opt)))))
        self.cuda = device.type == "cuda"
        self.host = torch.zeros((), pin_memory=self.cuda)
        self.ready, self.copied_at, self.clean_at = None, None, None

    def flag(self, x):
        self.bad.copy_(torch.maximum(self.bad, (~torch.isfinite(x.detach())).any().float()))

    def check(self, updates):
        if not self.cuda:
            if self.bad.item():
                raise FloatingPointError(
                    f"non-finite loss at update {updates}; the optimizer step was skipped: the trained weights are unchanged"
                )
            return
        if self.ready is not None and self.ready.query():  # the flag as it stood after update `copied_at`
            if self.host.item():
                raise FloatingPointError(
                    f"non-finite loss at an update after {self.clean_at} and up to {self.copied_at}; --compile skipped "
                    "the optimizer step there and at every update since: the trained weights are those from before it"
                )
            self.ready, self.clean_at = None, self.copied_at
        if self.ready is None:
            self.host.copy_(self.bad, non_blocking=True)
            self.ready, self.copied_at = torch.cuda.Event(), updates
            self.ready.record()


def compiled_update(train_step, agent, optimizer, accelerator, args):
    """-> train_step with the loss compiled, same signature: batches padded to max_seq_len + 1, `updates` handed over
    as a tensor (lr_at runs on it inside the step), the non-finite guard on the device; on one CUDA device the whole
    step (forward, backward, clipping, the optimizer step, the EMA of the targets) replayed as one CUDA graph."""
    if args.mixed_precision == "fp16":  # its loss scaler reads the scale back to the host at every step
        raise UserError("--compile with --mixed-precision fp16: use bf16 (no loss scaler) or no")
    device, model = accelerator.device, accelerator.unwrap_model(agent)
    guard = NonFiniteGuard(model, optimizer, device)
    # the loss's forward and, through AOTAutograd, its backward: the hundreds of small ops of an update. Clipping,
    # the fused AdamW step and the EMA are a few foreach/fused kernels each; the CUDA graph holds them all.
    model.forward = torch.compile(model.forward, dynamic=False, backend=BACKEND)
    count = torch.zeros((), device=device)  # the update count, on the device

    def step(batches, count):
        return train_step(agent, optimizer, accelerator, batches, args, count)

    if use_graphs(accelerator):
        step = Graphed(step)

    def update(agent, optimizer, accelerator, batches, args, updates):
        count.fill_(updates)
        batches = [batches] if isinstance(batches, dict) else batches
        metrics = step([pad_batch(b, args.max_seq_len + 1) for b in batches], count)
        guard.check(updates)
        return metrics

    return update


def compiled_acting(get_actions, policy, accelerator):
    """-> policy.get_actions compiled, same signature; on one CUDA device replayed as a graph (one per kind of
    `greedy`, and per train/eval mode). It runs under no_grad: Dynamo cannot trace inference_mode's tensors (the eager
    method's decorator; the values are the same). The graph is recorded with the policy's caches dropped
    (SigmaReparam's acting weights), so that it computes them from the weights at every replay."""
    act = torch.compile(types.MethodType(get_actions.__func__.__wrapped__, policy), dynamic=False, backend=BACKEND)
    if use_graphs(accelerator):
        act = Graphed(act, state=lambda: policy.training, before_capture=lambda: policy.train(policy.training))

    @torch.no_grad()
    def acting(obs, rl2, time, hidden, greedy=False):
        return act(obs, rl2, time, hidden, greedy if torch.is_tensor(greedy) else bool(greedy))

    return acting
