"""PyTorch side of `./ladder bench rnn`: the 2-layer LSTM character LM of bench/bench_rnn.cpp,
one training step. Prints "name milliseconds" for torch.set_num_threads(1) and (2).
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_core import time_ms  # noqa: E402


class CharLSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(65, 64)
        self.rnn = torch.nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(256, 65)

    def forward(self, ids):
        return self.head(self.rnn(self.embedding(ids))[0])


torch.manual_seed(0)
model = CharLSTM()
adam = torch.optim.Adam(model.parameters(), lr=2e-3)
x = torch.randint(0, 65, (32, 64))
y = torch.randint(0, 65, (32, 64))


def step():
    adam.zero_grad()
    torch.nn.functional.cross_entropy(model(x).reshape(-1, 65), y.reshape(-1)).backward()
    adam.step()


for threads in (1, 2):
    torch.set_num_threads(threads)
    print(f"lstm_lm_step_2x256_b32_t64_threads{threads} {time_ms(step):.6f}")
