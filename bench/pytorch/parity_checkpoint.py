"""Shows that a checkpoint written by ladder loads in PyTorch and computes the same thing.

    ./ladder lesson 00                     # trains the sin(x) MLP, writes runs/00_autograd/
    /usr/bin/python3 bench/pytorch/parity_checkpoint.py [runs/00_autograd]

Loads model.safetensors into torch.nn.Sequential(Linear(1,h), Tanh(), Linear(h,1)) with strict
key matching (ladder names Sequential children "0", "2" as PyTorch does), evaluates the validation
MSE on the lesson's grid and compares it with the val_loss ladder wrote into summary.json.
"""
import json
import math
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from read_safetensors import read_safetensors  # noqa: E402

run = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/00_autograd")
tensors, metadata = read_safetensors(run / "model.safetensors")
hidden = int(metadata["hidden"])
model = torch.nn.Sequential(torch.nn.Linear(1, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))
model.load_state_dict(tensors, strict=True)

pi = torch.tensor(math.pi, dtype=torch.float32).item()
x = torch.arange(-pi, pi, 2 * pi / 200, dtype=torch.float32).reshape(-1, 1)
with torch.no_grad():
    mse = torch.nn.functional.mse_loss(model(x), torch.sin(x)).item()
ladder = json.loads((run / "summary.json").read_text())["metrics"]["val_loss"]
print(f"tensors: {sorted(tensors)}  metadata: {metadata}")
print(f"validation MSE  PyTorch {mse:.9g}  ladder {ladder:.9g}  difference {abs(mse - ladder):.2g}")
ok = abs(mse - ladder) <= 1e-6 * max(1.0, abs(ladder)) + 1e-9
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
