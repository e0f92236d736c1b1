"""Your own timestep encoder: one observation (every key) and rl2 in, one token out, nothing mixed across time.

    python amago_agent.py --tstep-encoder docs.examples.custom_tstep_encoder:make

`--tstep-encoder module:f` calls f(args, obs_space, rl2_dim) in the script's make_tstep_encoder. The module it returns
gets obs {key: (B, L, *shape)}, rl2 (B, L, rl2_dim) = [previous reward, previous action] and, in training, the mask
(B, L) of real timesteps, and returns (B, L, args.tstep_dim). This one squashes every input with symlog instead of the
default encoder's running normalization (so it keeps no statistics), then applies an MLP and a LayerNorm.
"""

import numpy as np
import torch
import torch.nn as nn


class SymlogEncoder(nn.Module):
    def __init__(self, obs_space, rl2_dim, d_hidden, d_out):
        super().__init__()
        self.keys = sorted(obs_space.keys())
        d_in = sum(int(np.prod(obs_space[k].shape)) for k in self.keys) + rl2_dim
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.LeakyReLU(), nn.Linear(d_hidden, d_out))
        self.norm = nn.LayerNorm(d_out)

    def forward(self, obs, rl2, mask=None):  # the mask is unused: no statistics to keep off the padding
        B, L = rl2.shape[:2]
        x = torch.cat([obs[k].reshape(B, L, -1).float() for k in self.keys] + [rl2], dim=-1)  # (B, L, d_in)
        x = torch.sign(x) * torch.log1p(x.abs())  # symlog: large inputs compressed, small ones kept
        return self.norm(self.net(x))  # (B, L, d_out)


def make(args, obs_space, rl2_dim):
    return SymlogEncoder(obs_space, rl2_dim, args.tstep_hidden, args.tstep_dim)
