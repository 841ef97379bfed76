"""PyTorch side of `./ladder bench rnn`: the 2-layer LSTM character LM of bench/bench_rnn.cpp,
one training step, at torch.set_num_threads(1) and at (2), each compared with ladder at the same
thread count. Driven by ladder_bench; see serve.py.
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402


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


serve({f"lstm_lm_step_2x256_b32_t64_threads{threads}": (step, (threads,)) for threads in (1, 2)})
