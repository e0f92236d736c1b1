"""Your own trajectory encoder (the memory): a sequence of tokens in, a sequence of states out.

    python amago_agent.py --traj-encoder docs.examples.custom_traj_encoder:make

`--traj-encoder module:f` calls f(args, d_in) in the script's make_traj_encoder. The module needs `emb_dim` (the width
of its states) and four methods:
- forward(x (B, L, d_in), time (B, L)) -> (B, L, emb_dim): training, on a window that starts from an empty memory;
- init_hidden(N, device) -> the empty memory of N actors;
- step(x (N, 1, d_in), time (N, 1), hidden) -> ((N, 1, emb_dim), hidden): rollouts, one new token per actor;
- reset_hidden(hidden, done (N,) bool) -> hidden with the memory of the `done` actors emptied.
Stepping through an episode must give what forward gives on the whole episode: the agent learns with forward and acts
with step. tests/test_sequence_models.py checks exactly that for this encoder, as for the script's own.
This one is an LSTM: its memory is the pair (h, c) of every layer.
"""

import torch
import torch.nn as nn


class LSTMTrajEncoder(nn.Module):
    def __init__(self, d_in, d_model, n_layers):
        super().__init__()
        self.lstm = nn.LSTM(d_in, d_model, num_layers=n_layers, batch_first=True)
        self.out = nn.LayerNorm(d_model)
        self.n_layers, self.emb_dim = n_layers, d_model

    def forward(self, x, time):  # the time index is unused: an LSTM keeps order itself
        return self.out(self.lstm(x)[0])

    def step(self, x, time, hidden):
        y, hidden = self.lstm(x, hidden)
        return self.out(y), hidden

    def init_hidden(self, n, device):
        h = torch.zeros(self.n_layers, n, self.emb_dim, device=device)  # (layers, N, d)
        return h, h.clone()

    def reset_hidden(self, hidden, done):
        return tuple(h.masked_fill(done.view(1, -1, 1), 0.0) for h in hidden)


def make(args, d_in):
    return LSTMTrajEncoder(d_in, args.d_model, args.n_layers)
