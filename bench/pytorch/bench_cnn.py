"""PyTorch side of `./ladder bench cnn`: the CNN of lesson 04 (models/cnn.cpp), one training step
on a batch of 64 images, at torch.set_num_threads(1) and (2), the faster counting. Driven by
ladder_bench; see serve.py.
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(1, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1, bias=False), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.MaxPool2d(5), torch.nn.Flatten(), torch.nn.Linear(32, 10))
adam = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(64, 1, 20, 20)
y = torch.randint(0, 10, (64,))


def step():
    adam.zero_grad()
    torch.nn.functional.cross_entropy(net(x), y).backward()
    adam.step()


serve({"cnn_train_step_b64_20x20": (step, (1, 2))})
