"""--compile (common/compiled.py) against eager, on the CPU: an update (loss, gradients, the weights after the optimizer
step, the EMA targets, the running statistics) and the acting step (actions and memory) for every encoder, Discrete and
Box actions, both scripts; the learning-rate schedule computed on the device; batches padded to one shape; a
non-finite loss skipped and raised; and a short run of a script with --compile.

The comparisons run in float64: in float32, an untrained critic's advantages sit so near 0 that a last-bit difference
flips the filtered-BC indicator 1[A > 0] of a sample (tests/test_cuda.py says more). Most cases run torch.compile's
"aot_eager" backend: Dynamo's graphs and AOTAutograd's forward/backward split as inductor gets them, with eager kernels,
because inductor's C++ code generation costs ~40 s per case on one core; test_inductor_* run inductor itself, once
per script. Each case asserts that its graphs were really compiled (a backend that counts them)."""

import copy
import os
import subprocess
import sys

import pytest
import torch
from accelerate import Accelerator
from conftest import ROOT, SMALL, TINY_RUN, flags, make_agent, random_batch

import amago_agent
import amago_multitask
import common.compiled as compiled

SCRIPTS = pytest.mark.parametrize("module", [amago_agent, amago_multitask], ids=["agent", "multitask"])
KINDS = pytest.mark.parametrize("kind", ["discrete", "box"])
ENCODERS = pytest.mark.parametrize("traj", ["ff", "gru", "transformer", "mamba"])


@pytest.fixture
def backend(monkeypatch):
    """Dynamo starts empty (a code object has a cap on recompilations: after 8 agents it would run eagerly); the graphs
    go to `graphs` and then to aot_eager (inductor: `backend.use("inductor")`). Random ops stay aten's under inductor."""
    import torch._inductor.config

    torch._dynamo.reset()
    graphs = []

    class Counting:
        name = "aot_eager"

        def use(self, name):
            self.name = name

        def __call__(self, gm, example_inputs):
            graphs.append(gm)
            return torch._dynamo.lookup_backend(self.name)(gm, example_inputs)

    counting = Counting()
    counting.graphs = graphs
    monkeypatch.setattr(compiled, "BACKEND", counting)
    with torch._inductor.config.patch(fallback_random=True):  # the eager side's random stream
        yield counting
    torch._dynamo.reset()


def float64_agent(module, kind, **overrides):
    """make_agent's small agent in float64, with 64 Discrete actions: AMAGO-2's advantage Q(s, a) - V(s) is exactly 0
    where V's K = 3 sampled actions all equal the buffer's action, and then rounding alone decides the filter 1[A > 0]
    (at 3 actions, 1 sample in 27; at 64, 1 in 262,144)."""
    import gymnasium as gym

    space = {"discrete": gym.spaces.Discrete(64), "box": gym.spaces.Box(-1, 1, (2,))}[kind]
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (4,))})
    args = module.Args(**{**SMALL, "traj_encoder": "transformer", "max_seq_len": 6, **overrides})
    torch.manual_seed(0)
    return module.Agent(args, obs_space, space).double(), args


def as64(batch):
    return {k: as64(v) if isinstance(v, dict) else v.double() if v.is_floating_point() else v for k, v in batch.items()}


def learner(agent, args):
    """(the update function, optimizer, accelerator) for `agent`, as main builds them (compiled under args.compile)."""
    module = sys.modules[type(agent).__module__]
    params = agent.trainable_parameters()
    opt = torch.optim.AdamW(params, lr=args.learning_rate, weight_decay=args.weight_decay, fused=True)
    acc = Accelerator(cpu=True)
    agent, opt = acc.prepare(agent, opt)
    step = compiled.compiled_update(module.train_step, agent, opt, acc, args) if args.compile else module.train_step
    return step, opt, acc


def assert_same_state(a, b, **tol):
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        torch.testing.assert_close(y, x, **tol, msg=lambda m, n=name: f"{n}: {m}")
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        if p.grad is not None:
            torch.testing.assert_close(q.grad, p.grad, **tol, msg=lambda m, n=name: f"grad of {n}: {m}")


def compare_updates(module, kind, traj, at=(40, 1000), tol=None, **overrides):
    """Updates of the eager and the compiled step from the same agent, batches and random seeds, at the update counts
    `at`: one in the learning-rate warm-up (500 updates), one after it on --anneal-lr's decay (the compiled step
    computes the rate on the device): the metrics of each, then the two agents' whole state and gradients."""
    tol = tol or dict(rtol=1e-7, atol=1e-9)
    eager, args = float64_agent(module, kind, traj_encoder=traj, anneal_lr=True, **overrides)
    assert at[0] < args.warmup_steps < at[-1]
    comp = copy.deepcopy(eager)
    args_c = copy.copy(args)
    args_c.compile = True
    runs = []
    for agent, a in ((eager, args), (comp, args_c)):
        step, opt, acc = learner(agent, a)
        agent.train()
        metrics = []
        for u, count in enumerate(at):
            torch.manual_seed(100 + u)
            m = step(agent, opt, acc, as64(random_batch(agent, seed=u)), a, count)
            metrics.append({k: v.detach().clone() for k, v in m.items()})
        runs.append(metrics)
    for m_eager, m_comp in zip(*runs):
        for k in m_eager:
            torch.testing.assert_close(m_comp[k].double(), m_eager[k].double(), **tol, msg=k)
    assert_same_state(eager, comp, **tol)


@SCRIPTS
@KINDS
@ENCODERS
def test_compiled_update_equals_eager(module, kind, traj, backend):
    compare_updates(module, kind, traj)
    assert backend.graphs  # the loss was compiled (one graph, more around the GRU or the Mamba scan)


def compare_acting(module, kind, traj, steps=9, tol=None):
    """The eager and the compiled acting step over `steps` steps of 3 actors, greedy for all, for none, and for some
    (a tensor), with one actor's memory reset midway: the same actions and the same memory."""
    agent, _ = float64_agent(module, kind, traj_encoder=traj)
    agent.eval()
    acc = Accelerator(cpu=True)
    g = torch.Generator().manual_seed(0)
    N = 3
    inputs = [
        ({"observation": torch.randn(N, 4, generator=g).double()}, torch.randn(N, agent.A + 1, generator=g).double())
        for _ in range(steps)
    ]
    results = []
    for act in (agent.get_actions, compiled.compiled_acting(agent.get_actions, agent, acc)):
        hidden, out = agent.traj.init_hidden(N, "cpu"), []
        if hidden is not None:
            hidden = tuple(h.double() for h in hidden) if isinstance(hidden, tuple) else hidden.double()
            if traj == "transformer":  # the step count stays an integer
                hidden = (*hidden[:2], hidden[2].long())
        for t, (obs, rl2) in enumerate(inputs):
            torch.manual_seed(t)
            greedy = [True, False, torch.tensor([True, False, True])][t % 3]
            a, hidden = act(obs, rl2, torch.full((N,), t), hidden, greedy=greedy)
            out.append(a)
            if t == 4:
                hidden = agent.traj.reset_hidden(hidden, torch.tensor([False, True, False]))
        results.append((out, hidden))
    (a_eager, h_eager), (a_comp, h_comp) = results
    tol = tol or dict(rtol=1e-7, atol=1e-9)
    for x, y in zip(a_eager, a_comp):
        torch.testing.assert_close(y, x, **tol)
    torch.testing.assert_close(h_comp, h_eager, **tol)


@SCRIPTS
@KINDS
@ENCODERS
def test_compiled_acting_equals_eager(module, kind, traj, backend):
    compare_acting(module, kind, traj)
    assert backend.graphs


@pytest.mark.parametrize(
    "module, kind, traj",
    [(amago_agent, "discrete", "transformer"), (amago_multitask, "box", "ff")],
    ids=["agent-transformer", "multitask-ff"],
)
def test_inductor_update_equals_eager(module, kind, traj, backend):
    """The scripts' own backend, inductor's C++ kernels: the user's command (AMAGO, Discrete, transformer) with its
    acting step, and AMAGO-2's critic with Box actions (its sampled actions drawn by aten's generator: fallback_random).
    The transformer's time table is float32, from each side's own sin and cos: 1e-5 relative there."""
    backend.use("inductor")
    tol = dict(rtol=1e-5, atol=1e-7) if traj == "transformer" else None
    compare_updates(module, kind, traj, tol=tol)
    if module is amago_agent:  # get_actions is the same lines in both scripts
        compare_acting(module, kind, traj, tol=tol)
    assert backend.graphs


@SCRIPTS
def test_learning_rate_on_the_device_equals_the_hosts(module):
    """lr_at(args, tensor) (the compiled step's, in float32) is lr_at(args, int) through the warm-up, the plateau and
    the decay, to float32's rounding of the schedule (1e-6 of the peak rate)."""
    args = module.Args(
        total_timesteps=4000, timesteps_per_epoch=100, num_envs=2, batches_per_epoch=50, warmup_steps=100
    )
    for anneal in (False, True):
        args.anneal_lr = anneal
        for u in (0, 1, 50, 99, 100, 101, 500, 999, 1000, 1200):
            host, device = module.lr_at(args, u), module.lr_at(args, torch.tensor(float(u))).item()
            assert device == pytest.approx(host, rel=0, abs=1e-6 * args.learning_rate), (anneal, u)
    assert (
        module.lr_at(args, torch.tensor(0.0)).item() == 0.0 and module.lr_at(args, torch.tensor(1000.0)).item() == 0.0
    )


def test_batches_are_padded_to_one_shape_without_changing_the_update(backend):
    """A batch of 5 timesteps, padded to max_seq_len + 1 = 7 by the compiled step, gives the eager update on the
    batch as it is; and a 7-step batch after it compiles nothing new. One critic and no dropout: no random draw
    depends on the batch's length."""
    overrides = dict(num_critics=1, num_critics_td=1, dropout=0.0, traj_encoder="ff")
    eager, args = float64_agent(amago_agent, "discrete", **overrides)
    comp = copy.deepcopy(eager)
    args_c = copy.copy(args)
    args_c.compile = True
    short = as64(random_batch(eager, L=5))
    for agent, a in ((eager, args), (comp, args_c)):
        step, opt, acc = learner(agent, a)
        agent.train()
        step(agent, opt, acc, short, a, 30)
    assert_same_state(eager, comp, rtol=1e-7, atol=1e-9)
    graphs = len(backend.graphs)
    with torch._dynamo.config.patch(error_on_recompile=True):
        step(comp, opt, acc, as64(random_batch(comp, L=7)), args_c, 31)
    assert len(backend.graphs) == graphs


@SCRIPTS
def test_nonfinite_loss_skips_the_step_and_is_raised(module, backend):
    """As eager's guard (tests/test_faults.py): the update with a non-finite loss raises, and the optimizer step was
    skipped, so no trained weight and no Adam moment changed (the EMA targets moved towards those unchanged weights)."""
    agent, args = make_agent("box", module, compile=True)
    step, opt, acc = learner(agent, args)
    agent.train()
    step(agent, opt, acc, random_batch(agent), args, 6)  # a good update first: the optimizer has its state
    with torch.no_grad():  # a diverged weight
        agent.actor.net[-1].weight[0, 0] = float("inf")
    before = [p.clone() for p in agent.trainable_parameters()]
    moments = [{k: v.clone() for k, v in s.items()} for s in opt.state_dict()["state"].values()]
    with pytest.raises(FloatingPointError, match="non-finite loss at update 7; the optimizer step was skipped"):
        step(agent, opt, acc, random_batch(agent), args, 7)
    assert all(torch.equal(b, p) for b, p in zip(before, agent.trainable_parameters()))
    for m, s in zip(moments, opt.state_dict()["state"].values()):
        assert all(torch.equal(m[k], v) for k, v in s.items())  # step counts too
    assert all(torch.isfinite(p).all() for p in agent.target_critics.parameters())


def test_fp16_is_refused_with_the_flags_to_use():
    agent, args = make_agent("discrete", compile=True, mixed_precision="fp16")
    opt = torch.optim.AdamW(agent.trainable_parameters(), fused=True)
    with pytest.raises(ValueError, match="--compile with --mixed-precision fp16: use bf16"):
        compiled.compiled_update(amago_agent.train_step, agent, opt, Accelerator(cpu=True), args)


def test_a_script_runs_compiled_and_its_checkpoint_resumes_eagerly(tmp_path):
    """The main loop with --compile: collection with the compiled acting step, updates, evaluation, a checkpoint (whose
    optimizer holds the learning rate as a tensor), then --resume without --compile."""
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": str(os.path.dirname(sys.executable)),
        "OMP_NUM_THREADS": "1",
        "AMAGO_COMPILE_BACKEND": "aot_eager",
    }
    run = dict(TINY_RUN, traj_encoder="ff", total_timesteps=64, timesteps_per_epoch=16, batches_per_epoch=2)
    run.update(run_name="c", checkpoint_interval=2)
    for extra in (dict(compile=True), dict(resume=True, total_timesteps=96)):
        cmd = [sys.executable, str(ROOT / "amago_agent.py"), *flags(**{**run, **extra})]
        out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
    state = torch.load(tmp_path / "runs/c/checkpoint.pt", weights_only=False)
    assert state["counters"]["epoch"] == 3 and state["counters"]["updates"] == 6


def test_gpu_script_parses_and_refuses_an_unknown_stage():
    """benchmarks/gpu.sh runs only on a GPU; here: its syntax, and a clear error for a stage it does not have (its
    commands themselves run on the CPU with `DRY=1 bash benchmarks/gpu.sh all`, a few minutes)."""
    script = str(ROOT / "benchmarks/gpu.sh")
    assert subprocess.run(["bash", "-n", script], capture_output=True).returncode == 0
    out = subprocess.run(["bash", script, "speeed"], capture_output=True, text=True)
    assert out.returncode == 2 and "[all|quick|tests|speed|reference|loop|budget], got 'speeed'" in out.stderr


def test_loop_split_prices_each_epoch_at_its_logged_rates():
    """Three epochs of 800 env steps and 200 updates, logged at 100 s, 160 s, 230 s: from the first epoch's end on,
    800/400 + 800/200 s collecting and 200/20 + 200/10 s updating of 130 s."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from loop_split import split

    ends = [(100.0, 800, 200), (160.0, 1600, 400), (230.0, 2400, 600)]
    scalars = {
        "charts/updates": ends,
        "charts/collect_SPS": [(t, s, r) for (t, s, _), r in zip(ends, (900.0, 400.0, 200.0))],
        "charts/updates_per_s": [(t, s, r) for (t, s, _), r in zip(ends, (5.0, 20.0, 10.0))],
    }
    r = split(scalars)
    assert r["wall_s"] == 130.0 and r["collect_s"] == 6.0 and r["update_s"] == 30.0 and r["other_s"] == 94.0
    assert r["env_steps"] == 1600 and r["updates"] == 400 and r["steady_update_rate"] == 15.0
