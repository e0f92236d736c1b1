"""The memory and meta-RL envs (envs/): T-Maze and its pixel version, Meta-Frozen-Lake, Key-Door and the k-shot
helper: the gymnasium env checker, seeding, and each env's rules played by hand."""

import warnings
from collections import deque

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs.frozen_lake import FrozenLakeAttempt, MetaFrozenLake
from envs.key_door import RoomKeyDoor
from envs.kshot import KShot
from envs.pixel_tmaze import PixelTMaze
from envs.tmaze import TMaze

P = envs.LOG_PREFIX
IDS = [
    "TMazePassive-v0",
    "TMazeActive-v0",
    "MetaFrozenLake-v0",
    "MetaFrozenLake-HideK-v0",
    "DarkKeyDoor-v0",
    "LightKeyDoor-v0",
    "DarkKeyDoor-5x5-v0",
    "LightKeyDoor-5x5-v0",
]
CHECKED_IDS = IDS + ["TMazePassive-H100-v0", "PixelTMaze-v0", "PixelTMazeDict-v0"]
RIGHT, UP, LEFT, DOWN = range(4)  # T-Maze actions


def rollout(env, seed, actions):
    """Reset with seed, play the actions until the episode ends; -> (obs list, rewards, last info, terminated)."""
    obs, _ = env.reset(seed=seed)
    seen, rewards = [obs], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        seen.append(obs)
        rewards.append(r)
        if term or trunc:
            return seen, rewards, info, term
    raise AssertionError("episode did not end")


def rollout_from(env, actions):
    """Play all the actions from the current state; the episode must end exactly at the last one."""
    seen, rewards = [], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        seen.append(obs)
        rewards.append(r)
        if term or trunc:
            assert len(rewards) == len(actions), "episode ended early"
            return seen, rewards, info, term
    raise AssertionError("episode did not end")


@pytest.mark.parametrize("env_id", CHECKED_IDS)
def test_gymnasium_env_checker_passes_without_warnings(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        env = gym.make(env_id)
        check_env(env.unwrapped, skip_render_check=True)
        # gym.make's passive checker also watches every step of a full random episode
        env.reset(seed=0)
        env.action_space.seed(0)
        done = False
        while not done:
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            assert obs in env.observation_space and isinstance(r, float)
            done = term or trunc
        assert term and not trunc  # every rollout here ends a finite-horizon task: terminated, never bootstrapped


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode_and_other_seeds_differ(env_id):
    acts = np.random.default_rng(0).integers(0, gym.make(env_id).action_space.n, 2000)
    a, b = rollout(gym.make(env_id), 3, acts), rollout(gym.make(env_id), 3, acts)
    assert len(a[0]) == len(b[0]) and all((x == y).all() for x, y in zip(a[0], b[0])) and a[1] == b[1] and a[2] == b[2]
    others = [rollout(gym.make(env_id), s, acts) for s in range(4, 10)]
    sigs = {np.concatenate(o).tobytes() + np.array(r).tobytes() for o, r, _, _ in [a, *others]}
    assert len(sigs) >= 2  # the seed picks the task (goal side, lake, key/door)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="corridor_length must be >= 1, got 0"):
        TMaze(corridor_length=0)
    with pytest.raises(ValueError, match="lake size must be >= 2, got 1"):
        MetaFrozenLake(size=1)
    with pytest.raises(ValueError, match=r"k \(attempts per rollout\) must be >= 1, got 0"):
        MetaFrozenLake(k_attempts=0)
    with pytest.raises(ValueError, match="meta_horizon must be >= 1, got 0"):
        RoomKeyDoor(meta_horizon=0)
    env = TMaze()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 4\).*got 7"):
        env.step(7)


# ---------------------------------------------------------------- T-Maze
def test_tmaze_cue_is_seen_once_at_the_oracle_cell():
    H, goals = 6, set()
    for seed in range(20):
        env = TMaze(corridor_length=H)  # passive: the cue is in the first observation
        obs, _ = env.reset(seed=seed)
        goal = env.goal
        goals.add(goal)
        assert obs.tolist() == [0, goal]
        # walk away and back onto the oracle cell: it now looks like the corridor
        for a in [RIGHT, LEFT, LEFT, RIGHT, RIGHT]:
            obs, *_ = env.step(a)
            assert obs.tolist() == [0, 0]

        env = TMaze(corridor_length=H, active=True)  # active: one step right of the oracle cell
        obs, _ = env.reset(seed=seed)
        goal = env.goal
        assert obs.tolist() == [0, 0]
        obs, r, *_ = env.step(LEFT)
        assert obs.tolist() == [0, goal] and r == 0.0  # the step back to the cue is free
        for a in [RIGHT, LEFT]:
            obs, *_ = env.step(a)
            assert obs.tolist() == [0, 0]
    assert goals == {-1, 1}


@pytest.mark.parametrize("active", [False, True])
@pytest.mark.parametrize("H", [1, 5, 50])
def test_tmaze_optimal_policy_gets_exactly_one(active, H):
    """Remember the cue, walk right, turn to it: return 1.0 (no penalty), success 1, episode length H+1 / H+3."""
    for seed in range(10):
        env = TMaze(corridor_length=H, active=active)
        obs, _ = env.reset(seed=seed)
        if active:
            obs, *_ = env.step(LEFT)
        cue = obs[1]
        plan = [RIGHT] * (H + active) + [UP if cue > 0 else DOWN]
        obs_seen, rewards, info, term = rollout_from(env, plan)
        assert sum(rewards) == 1.0 and len(rewards) + active == H + 1 + 2 * active
        assert obs_seen[-1].tolist() == [1, cue]  # at a goal cell, which shows [1, y]
        assert info[f"{P} success"] == 1.0 and info[f"{P} reached junction"] == 1.0 and term


def test_tmaze_memory_free_policy_gets_half():
    """Walk right and guess the turn: every return is 0 or 1, and the mean over 400 episodes is 0.5 (std 0.025)."""
    H, guess = 10, np.random.default_rng(0)
    env = TMaze(corridor_length=H)
    returns = []
    for seed in range(400):
        env.reset(seed=seed)
        _, rewards, info, _ = rollout_from(env, [RIGHT] * H + [guess.choice([UP, DOWN])])
        returns.append(sum(rewards))
        assert info[f"{P} success"] == sum(rewards)
    assert set(returns) == {0.0, 1.0}
    assert abs(np.mean(returns) - 0.5) < 0.08


def test_tmaze_penalty_for_every_non_right_step_and_failure_when_short():
    H = 10
    env = TMaze(corridor_length=H)
    env.reset(seed=0)
    _, rewards, info, _ = rollout_from(env, [RIGHT, UP, LEFT, DOWN] + [RIGHT] * (H - 4) + [RIGHT])
    assert rewards[:3] == [0.0, -1 / H, -1 / H] and rewards[3] == -1 / H
    # 3 wasted steps: the agent never reaches the junction, so it fails whatever the goal
    assert rewards[-1] == 0.0 and info[f"{P} success"] == 0.0 and info[f"{P} reached junction"] == 0.0


# ---------------------------------------------------------------- Pixel T-Maze
def test_pixel_tmaze_has_tmazes_rules():
    """Same seed, same actions: the same goal, rewards, ends and infos as T-Maze (corridor 10), on 24x24 uint8 frames.
    Half the episodes walk the corridor and turn at random (successes and failures), half act at random."""
    rng = np.random.default_rng(0)
    for seed in range(40):
        pix, ref = PixelTMaze(), TMaze(10)
        acts = [0] * 10 + [int(rng.choice([1, 3]))] if seed % 2 else rng.integers(0, 4, 11).tolist()
        frame, _ = pix.reset(seed=seed)
        ref.reset(seed=seed)
        assert pix.goal == ref.goal and frame.shape == (24, 24, 3) and frame.dtype == np.uint8
        for t, a in enumerate(acts):
            frame, r, term, trunc, info = pix.step(a)
            assert (r, term, trunc, info) == ref.step(a)[1:]
            assert term == (t == 10)  # H + 1 steps


def test_pixel_tmaze_shows_the_cue_in_the_first_frame_only():
    """Episodes with opposite goals and the same actions differ only in frame 0, where a yellow mark sits on the cell
    above (goal up) or below (goal down) the start."""
    episodes = {}
    for seed in range(20):
        env = PixelTMaze()
        frames = [env.reset(seed=seed)[0]] + [env.step(a)[0] for a in [0] * 10 + [1]]
        episodes.setdefault(env.goal, frames)
    up, down = episodes[1], episodes[-1]
    assert all(np.array_equal(a, b) for a, b in zip(up[1:], down[1:]))
    c, x0, y0 = env.cell, env.x0, env.y0
    above, below = (slice(y0 - c, y0), slice(x0, x0 + c)), (slice(y0 + c, y0 + 2 * c), slice(x0, x0 + c))
    assert (up[0][above] == (255, 255, 0)).all() and (down[0][below] == (255, 255, 0)).all()
    diff = up[0] != down[0]
    diff[above] = diff[below] = False
    assert not diff.any()


# ---------------------------------------------------------------- Meta-Frozen-Lake
def shortest_path(lake, start=(0, 0)):
    """Actions (noop, +x, -x, +y, -y) of a shortest hole-free path from start to the goal."""
    N, moves = len(lake), [(1, 0), (-1, 0), (0, 1), (0, -1)]
    prev, todo = {start: None}, deque([start])
    while todo:
        x, y = todo.popleft()
        if lake[x][y] == "G":
            path, cell = [], (x, y)
            while prev[cell]:
                cell, a = prev[cell]
                path.append(a)
            return path[::-1]
        for a, (dx, dy) in enumerate(moves, start=1):
            n = (x + dx, y + dy)
            if 0 <= n[0] < N and 0 <= n[1] < N and n not in prev and lake[n[0]][n[1]] != "H":
                prev[n] = ((x, y), a)
                todo.append(n)
    raise AssertionError("generate_random_map always has a path")


def test_frozen_lake_keeps_its_lake_for_k_attempts_and_logs_each():
    K, N = 5, 4
    env = MetaFrozenLake(size=N, k_attempts=K)
    lakes = []
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        lake = list(env.lake)
        lakes.append(tuple(lake))
        assert obs.tolist() == [0, 0, 1, 0]  # start, reset flag, attempt 0 of K
        # attempts 0, 2, 4 follow the lake's shortest path (+1); attempts 1 and 3 idle until the N^2-step time limit
        for k in range(K):
            assert env.lake == lake  # the same lake in every attempt
            plan = shortest_path(lake) if k % 2 == 0 else [0] * (N * N)
            for i, a in enumerate(plan):
                obs, r, term, trunc, info = env.step(a)
                if i < len(plan) - 1:
                    assert r == 0 and obs[2] == 0 and obs[3] == pytest.approx(k / K)
            assert r == (1.0 if k % 2 == 0 else 0.0) and not trunc
            assert obs[2] == 1 and obs[3] == pytest.approx((k + 1) / K)  # soft reset flag; next attempt
            if k < K - 1:
                assert obs[:2].tolist() == [0, 0] and not term
        assert term
        for k in range(K):
            assert info[f"{P} attempt {k} success"] == info[f"{P} attempt {k} return"] == float(k % 2 == 0)
    assert len(set(lakes)) >= 8  # a new lake per rollout


def test_frozen_lake_hole_ends_the_attempt_with_zero():
    env = MetaFrozenLake(size=4, k_attempts=2)
    for seed in range(50):
        env.reset(seed=seed)
        if env.lake[1][0] == "H":  # one step +x falls in
            obs, r, term, _, _ = env.step(1)
            assert r == 0.0 and obs.tolist() == [0, 0, 1, 0.5] and not term
            return
    raise AssertionError("no lake with a hole at (1, 0) in 50 seeds")


# ---------------------------------------------------------------- Key-Door
def walk(env, target):
    """Actions (-y, -x, +y, +x) from env.pos to target, x first."""
    (x, y), (tx, ty) = env.pos, target
    return [3 if tx > x else 1] * abs(tx - x) + [2 if ty > y else 0] * abs(ty - y)


def key_door_env(**kw):
    env = RoomKeyDoor(room_size=5, episode_length=20, meta_horizon=100, **kw)
    env.reset(seed=0)
    env.start, env.key, env.door = np.array([0, 0]), np.array([4, 4]), np.array([0, 4])
    env._new_attempt()
    return env


def test_key_door_needs_the_key_before_the_door_and_keeps_the_task():
    env = key_door_env()
    # the door without the key: nothing happens
    rewards = [env.step(a)[1] for a in walk(env, env.door)]
    assert sum(rewards) == 0 and (env.pos == env.door).all()
    rewards = [env.step(a)[1] for a in walk(env, env.key)]
    assert rewards[-1] == 1.0 and sum(rewards) == 1.0 and env.step(4)[1] == 0.0  # the key pays once
    obs = None
    for a in walk(env, env.door):
        obs, r, *_ = env.step(a)
    assert r == 1.0 and obs.tolist() == [0, 0, 0, 0]  # the door ends the attempt: back at the start, no key
    # every later attempt is the same task: key then door pays 2 per attempt, each from the same start
    start_t, total, term, info = env.global_t, 0.0, False, {}
    while not term:
        for target in (env.key, env.door):
            for a in walk(env, target):
                obs, r, term, trunc, info = env.step(a)
                total += r
                if term:
                    break
            if term:
                break
    attempts, rest = divmod(100 - start_t, 12)  # key (8 steps) then door (4 steps)
    assert total == 2 * attempts + (rest >= 8)
    assert info[f"{P} doors opened"] == attempts + 1 and info[f"{P} keys found"] == attempts + 1 + (rest >= 8)
    assert not trunc and env.global_t == 100


def test_key_door_attempt_times_out_back_to_start():
    env = key_door_env()
    for t in range(1, 20):
        obs, *_ = env.step(2)  # +y along the edge, never on the key
        assert obs[3] == pytest.approx(t / 20)
    obs, *_ = env.step(2)
    assert obs.tolist() == [0, 0, 0, 0]


def test_dark_room_hides_key_and_door_and_light_room_shows_them():
    def obs_seq(light, key, door):
        env = key_door_env(light_room=light)
        env.key, env.door = np.array(key), np.array(door)
        return np.stack([env.step(a)[0] for a in [3, 3, 2, 1, 4]])

    a, b = obs_seq(False, (4, 4), (3, 0)), obs_seq(False, (0, 4), (4, 2))
    assert a.shape == (5, 4) and (a == b).all()
    a, b = obs_seq(True, (4, 4), (3, 0)), obs_seq(True, (0, 4), (4, 2))
    assert a.shape == (5, 8) and (a[:, :4] == b[:, :4]).all()
    np.testing.assert_allclose(a[:, 4:], [[0.8, 0.8, 0.6, 0.0]] * 5)
    np.testing.assert_allclose(b[:, 4:], [[0.0, 0.8, 0.8, 0.4]] * 5)


# ---------------------------------------------------------------- k-shot helper
class Bandit(gym.Env):
    """One-step task: reward 1 for pulling the arm equal to the hidden task; the task comes from the reset seed,
    or from reset_task(rng) when `hook`. Reports success."""

    def __init__(self, hook):
        self.observation_space, self.action_space = gym.spaces.Box(0, 1, (1,), np.float32), gym.spaces.Discrete(10)
        if hook:
            self.reset_task = lambda rng: setattr(self, "task", int(rng.integers(10)))

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if not hasattr(self, "reset_task"):
            self.task = int(self.np_random.integers(10))
        return np.zeros(1, np.float32), {}

    def step(self, a):
        return np.ones(1, np.float32), float(a == self.task), True, False, {"success": float(a == self.task)}


@pytest.mark.parametrize("hook", [True, False])
def test_kshot_keeps_the_task_for_k_attempts_then_a_new_rollout(hook):
    k = 4
    env = KShot(Bandit(hook), k)
    obs, _ = env.reset(seed=0)
    tasks = []
    for _rollout_i in range(6):
        assert obs.tolist() == [0, 1, 0]  # inner obs, reset flag, attempt 0
        rollout_tasks = []
        for i in range(k):
            rollout_tasks.append(env.env.task)
            obs, r, term, trunc, info = env.step(i)  # arm i in attempt i
            assert obs.tolist() == [0 if i < k - 1 else 1, 1, (i + 1) / k] and term == (i == k - 1) and not trunc
        assert len(set(rollout_tasks)) == 1  # the same task in all k attempts
        tasks.append(rollout_tasks[0])
        for i in range(k):
            assert info[f"{P} attempt {i} success"] == info[f"{P} attempt {i} return"] == float(i == rollout_tasks[0])
        obs, _ = env.reset()  # the (k+1)-th reset: a new rollout, a new task
    assert len(set(tasks)) >= 3


def test_kshot_can_hide_the_attempt_index_but_keeps_the_reset_flag():
    k = 3
    env = KShot(Bandit(True), k, show_attempt=False)
    assert env.observation_space.shape == (2,)  # inner obs + reset flag, no attempt / k
    obs, _ = env.reset(seed=0)
    seen = [obs.tolist()]
    for i in range(k):
        obs, r, term, trunc, info = env.step(i)
        seen.append(obs.tolist())
    assert seen == [[0, 1], [0, 1], [0, 1], [1, 1]] and term  # every attempt starts alike: only memory tells them apart
    assert f"{P} attempt {k - 1} return" in info
    lake = gym.make("envs:MetaFrozenLake-HideK-v0")
    obs, _ = lake.reset(seed=0)
    assert obs.tolist() == [0, 0, 1] and lake.observation_space.shape == (3,)


def test_kshot_rejects_what_it_cannot_extend():
    with pytest.raises(ValueError, match="flat Box observation space"):
        KShot(gym.make("Blackjack-v1"), 2)
    with pytest.raises(ValueError, match=r"k \(attempts per rollout\) must be >= 1, got 0"):
        KShot(FrozenLakeAttempt(), 0)
