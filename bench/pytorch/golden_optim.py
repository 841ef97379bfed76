"""Writes tests/parity/golden/optim.json: PyTorch's Adam and AdamW on fixed parameters and gradients.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_optim.py
The test tests/parity/test_optim_parity.cpp replays the same gradients through ladder's
optimizers and compares the parameters after every step, so the test itself needs no Python.
"""
import json
import math
import pathlib

import torch

STEPS = 5
torch.manual_seed(0)
initial = {"weight": torch.randn(3, 4), "bias": torch.randn(4)}
# Gradients of varied sign and size, including one near zero, fixed for every step.
grads = [{name: torch.randn_like(t) * (0.1 + step) for name, t in initial.items()} for step in range(STEPS)]

CASES = {
    "adam": (torch.optim.Adam, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)),
    "adam_l2": (torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)),
}

out = {
    "torch_version": torch.__version__,
    "initial": {n: t.flatten().tolist() for n, t in initial.items()},
    "shapes": {n: list(t.shape) for n, t in initial.items()},
    "grads": [{n: g.flatten().tolist() for n, g in step.items()} for step in grads],
    "cases": {},
}
for case, (cls, options) in CASES.items():
    params = {n: t.clone().requires_grad_() for n, t in initial.items()}
    opt = cls(params.values(), **options)
    trajectory = []
    for step in range(STEPS):
        for n, p in params.items():
            p.grad = grads[step][n].clone()
        opt.step()
        trajectory.append({n: p.detach().flatten().tolist() for n, p in params.items()})
    out["cases"][case] = {"options": {**options, "betas": list(options["betas"])}, "params": trajectory}

path = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden" / "optim.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")
