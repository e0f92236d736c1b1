"""Pink (1/f) exploration noise for Box actions, as an `--exploration` hook: a measurement, not a default.

    python amago_agent.py --env-id envs:SparsePointRobot-v0 --exploration benchmarks.probes.pink_noise:pink

The scripts' Box exploration adds white Gaussian noise of std eps to each action: steps that are independent in time,
so a point moved by them wanders ~sqrt(t) away, and a goal 1.0 away is rarely reached (envs:SparsePointRobot-v0: 2-3%
of attempts at AMAGO's per-episode eps ~ U[0, 1), 0-0.1% at eps 0.3; benchmarks/probes/point_robot_exploration.py).
Pink noise (Eberhard et al., ICLR 2023, "Pink Noise Is All You Need") has the same per-step std but power falling as
1/frequency, so consecutive steps agree and a random walk travels further, while each step stays as random. This
hook keeps everything else of EpsilonGreedy (the schedule, the per-episode scale, revisits, the floor) and replaces
only the Box noise: each actor draws a sequence of `LENGTH` pink-noise steps per action dimension at each episode's
start and reads one step of it per env step (a new sequence when it runs out). Discrete and MultiBinary are unchanged.
"""

import gymnasium as gym
import numpy as np

LENGTH = 1000  # steps per drawn sequence: its lowest frequency is 1 / LENGTH


def pink_sequences(rng, n, length, dim):
    """(n, length, dim) noise with power spectrum ~ 1/f and unit std per sequence and dimension (the DC term, the
    frequency 0, takes the lowest frequency's power, as in the colorednoise package)."""
    f = np.fft.rfftfreq(length)
    f[0] = f[1]
    amp = f**-0.5  # power 1/f: amplitude 1/sqrt(f)
    spec = amp[None, :, None] * (rng.standard_normal((n, len(f), dim)) + 1j * rng.standard_normal((n, len(f), dim)))
    x = np.fft.irfft(spec, n=length, axis=1)
    return x / x.std(axis=1, keepdims=True)


def pink(base, envs):
    """--exploration hook: f(EpsilonGreedy, envs) -> the subclass with pink Box noise."""

    class PinkNoiseEpsilonGreedy(base):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            if isinstance(self.space, gym.spaces.Box):
                n, dim = len(self.scale), int(np.prod(self.space.shape))
                self.noise, self.t = pink_sequences(self.rng, n, LENGTH, dim), np.zeros(n, dtype=int)

        def __call__(self, actions, time_idx, obs=None):
            if not isinstance(self.space, gym.spaces.Box):
                return super().__call__(actions, time_idx, obs)
            eps = np.maximum(self.epsilon(time_idx) * self.revisit_factor(obs), self.floor)
            z = self.noise[np.arange(len(actions)), self.t].reshape(actions.shape)  # (N, A): one step per actor
            self.t += 1
            self.redraw(self.t >= LENGTH)
            self.step_count += 1
            return np.clip(actions + eps[:, None] * z, -1.0, 1.0).astype(np.float32)

        def redraw(self, which):
            idx = np.flatnonzero(which)
            if len(idx):
                self.noise[idx] = pink_sequences(self.rng, len(idx), LENGTH, self.noise.shape[-1])
                self.t[idx] = 0

        def end_episodes(self, done):
            super().end_episodes(done)
            if isinstance(self.space, gym.spaces.Box):
                self.redraw(done)

    return PinkNoiseEpsilonGreedy
