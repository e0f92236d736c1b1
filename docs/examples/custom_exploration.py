"""Your own exploration: a subclass of the script's EpsilonGreedy, here one whose epsilon halves every `half_life`
steps of an episode, so that random actions gather at the start of each episode (where a meta-RL agent must find out
which task it is in) and the rest of it is nearly the policy's own.

    python amago_agent.py --exploration docs.examples.custom_exploration:make

`--exploration module:f` calls f(EpsilonGreedy, envs) in the script's make_exploration and constructs the class it
returns as it constructs EpsilonGreedy: six arguments (num_envs, action_space, eps_start, eps_end, anneal_steps, seed)
and the keywords scale_min, revisit_power, floor and greedy_frac. An __init__ of your own takes them all (here as
**kw) and passes them on; f's closure holds whatever your class needs from the envs.
"""

import numpy as np


def make(base, envs):
    half_life = 25  # env steps; a value read from `envs` (e.g. envs.get_attr(...)) would go here

    class EpisodeStartEpsilonGreedy(base):
        def __init__(self, num_envs, action_space, eps_start, eps_end, anneal_steps, seed, **kw):
            super().__init__(num_envs, action_space, eps_start, eps_end, anneal_steps, seed, **kw)
            self.half_life = half_life

        def epsilon(self, time_idx):  # time_idx: (N,) steps since each actor's reset -> (N,)
            return super().epsilon(time_idx) * 0.5 ** (np.asarray(time_idx) / self.half_life)

    return EpisodeStartEpsilonGreedy
