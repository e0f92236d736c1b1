"""The agent learns: a short training run of amago_agent.py (its main loop, as a user runs it) on a memory task that a
memory-free or untrained policy cannot solve, judged by the greedy eval success the run logs.

The task is T-Maze with a corridor of 4 (`tests.dummy_envs:TMaze-H4-v0`): the goal side is shown only in the first
observation, and the agent must walk right 4 steps and then turn to that side. A policy without memory walks right and
guesses (success 0.5; the ff encoder, run with this recipe, reads at most 0.58), a policy that does not walk right
scores 0. With this recipe the transformer agent reaches success 1.0 within 1,000 updates on each of seeds 1-9 and stays
there, so the run does 2,000 updates and asks for 0.9 over 200 greedy episodes.

The run fails when either half of AMAGO's loss is switched off (success 0.0 at every eval): without the critic loss the
actor follows the advantages of untrained critics, and without the actor loss the policy never learns to act. To see
it, set LEARNING_TEST_SCRIPT to a copy of amago_agent.py whose `loss = actor_loss + args.critic_loss_weight *
critic_loss` multiplies one of its two terms by 0 (or add `critic_loss_weight=0`, or `online_coeff=0, offline_coeff=0`,
to RECIPE)."""

import os

from conftest import SCRIPT, run_script

from common.logs import read_scalars

RECIPE = dict(
    env_id="tests.dummy_envs:TMaze-H4-v0",
    traj_encoder="transformer",
    seed=1,
    d_model=32,
    n_heads=2,
    d_ff=64,
    tstep_hidden=32,
    tstep_dim=32,
    actor_hidden=32,
    critic_hidden=32,
    max_seq_len=5,  # the whole episode (H + 1 steps) in context
    traj_save_len=5,
    num_envs=8,
    timesteps_per_epoch=5,  # one episode per actor per epoch
    batches_per_epoch=25,
    batch_size=24,
    total_timesteps=3200,  # 80 epochs: 2,000 updates
    warmup_steps=100,
    eval_interval=20,
    eval_episodes=200,
    num_workers=0,  # the buffer is read in the main process: the same batches on every run of the test
    run_name="r",
)


def test_agent_learns_to_remember_the_tmaze_cue(tmp_path):
    script = os.environ.get("LEARNING_TEST_SCRIPT", SCRIPT)
    run_script(tmp_path, script=script, **RECIPE)
    success = [v for _, _, v in read_scalars(tmp_path / "runs" / "r")["eval/TMaze-H4-v0/success"]]
    assert len(success) == 4 and success[-1] >= 0.9, f"greedy eval success every 500 updates: {success}"
