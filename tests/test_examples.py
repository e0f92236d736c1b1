"""The guides' worked examples (docs/examples/): your own env, timestep encoder, trajectory encoder and exploration,
each run through the script by its `module:name` flag, as the guides' commands do (tests/test_sequence_models.py
checks the trajectory encoder's rollout against its forward)."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import check_strict, run_script

import amago_agent as amago
from common.logs import read_scalars
from docs.examples.custom_env import HiddenGoal


def test_the_custom_env_is_a_valid_gymnasium_env_with_k_shot_resets():
    env = HiddenGoal()
    check_strict(env)
    obs, _ = env.reset(seed=0)
    goal, tries, info, done = env.goal, [], {}, False
    while not done:  # always move right: finds the goal only if it lies right of the middle, the same way every try
        obs, r, done, _, info = env.step(2)
        assert env.goal == goal  # the goal stays for the whole episode
        tries.append(obs["attempt"])
    assert max(tries) == 2 and info["AMAGO_LOG_METRIC last_try_success"] == float(goal >= 3)


@pytest.mark.parametrize(
    "flags",
    [
        dict(env_id="docs.examples.custom_env:HiddenGoal-v0"),
        dict(env_id="CartPole-v1", tstep_encoder="docs.examples.custom_tstep_encoder:make"),
        dict(env_id="CartPole-v1", traj_encoder="docs.examples.custom_traj_encoder:make"),
        dict(env_id="CartPole-v1", exploration="docs.examples.custom_exploration:make", greedy_episodes=0.5),
    ],
    ids=["env", "tstep_encoder", "traj_encoder", "exploration"],
)
def test_the_worked_examples_train_through_the_script(tmp_path, flags):
    run_script(tmp_path, **flags, total_timesteps=96, timesteps_per_epoch=16, batches_per_epoch=2, run_name="r")
    scalars = read_scalars(tmp_path / "runs/r")
    assert scalars["charts/updates"][-1][2] > 0 and "eval/return" in scalars
    if "env_id" in flags and "HiddenGoal" in flags["env_id"]:
        assert "eval/HiddenGoal-v0/last_try_success" in scalars  # the env's own metric, through LOG_PREFIX


def test_encoder_flags_name_what_they_accept():
    with pytest.raises(ValueError, match="--traj-encoder 'lstm': choose ff, gru, transformer, mamba, or module:f"):
        amago.check_args(amago.Args(traj_encoder="lstm"))
    with pytest.raises(ValueError, match="--tstep-encoder 'mlp': choose auto, ff, cnn, or module:f"):
        amago.check_args(amago.Args(tstep_encoder="mlp"))
    assert isinstance(gym.make("HiddenGoal-v0").observation_space["attempt"], gym.spaces.Discrete)
    assert np.isfinite(HiddenGoal().observation_space["position"].high).all()


def test_the_exploration_example_takes_every_keyword_the_script_passes_and_decays_within_episodes():
    """make_exploration constructs the example's class with EpsilonGreedy's arguments and every keyword (greedy_frac
    included); its epsilon halves every 25 steps of an episode."""
    args = amago.Args(
        exploration="docs.examples.custom_exploration:make", greedy_episodes=0.5, eps_floor=0.01, num_envs=4
    )
    envs = amago.make_vec_env("CartPole-v1", 4, "sync", 0, False, "r")
    explore = amago.make_exploration(args, envs)
    envs.close()
    assert isinstance(explore, amago.EpsilonGreedy) and type(explore).__name__ == "EpisodeStartEpsilonGreedy"
    assert (explore.greedy_frac, explore.floor, explore.revisit_power) == (0.5, 0.01, args.eps_revisit_power)
    t = np.array([0, 25, 50, 75])
    assert np.allclose(
        explore.epsilon(t), explore.scale * args.eps_start / np.array([1, 2, 4, 8])
    )  # each actor's scale
