"""Writes tests/parity/golden/core.json: PyTorch's values for the core ops, forward and backward.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_core.py
Each case records its inputs, its output, a fixed random upstream gradient g and the gradient of
sum(output * g) for every input that takes one. tests/parity/test_core_parity.cpp computes the
case of the same name with ladder's ops and compares, so the test itself needs no Python.
Masks and class targets are stored as floats (ladder's index tensors hold whole numbers as floats);
NaN and infinities as the strings "nan", "inf" and "-inf", which JSON has no numbers for.
"""
import json
import math
import pathlib

import torch

from golden_values import values
import torch.nn.functional as F

torch.manual_seed(0)
CASES = {}


def case(name, fn, inputs, grad):
    """Runs fn on the inputs, then backward from a random upstream gradient into the inputs in grad."""
    leaves = {n: t.clone().requires_grad_(n in grad) for n, t in inputs.items()}
    out = fn(**leaves)
    upstream = torch.randn(out.shape)
    (out * upstream).sum().backward()
    CASES[name] = {
        "inputs": {n: {"shape": list(t.shape), "values": values(t)} for n, t in leaves.items()},
        "output": {"shape": list(out.shape), "values": values(out)},
        "upstream": values(upstream),
        "grads": {n: values(leaves[n].grad) for n in grad},
    }


x = torch.randn(3, 5, 7) * 2

# ---- softmax and log_softmax over the last, the first and a middle dim ----
for dim, where in ((-1, "last"), (0, "dim0"), (1, "dim1")):
    case(f"softmax_{where}", lambda x, dim=dim: torch.softmax(x, dim), {"x": x}, grad=("x",))
    case(f"log_softmax_{where}", lambda x, dim=dim: torch.log_softmax(x, dim), {"x": x}, grad=("x",))

# ---- cross entropy; ladder has no label smoothing, so neither do these cases ----
logits = torch.randn(8, 7) * 2
targets = torch.randint(0, 7, (8,)).float()
partly_ignored = targets.clone()
partly_ignored[[1, 4, 5]] = -100
class_weight = torch.rand(7) + 0.25


def ce(**options):
    return lambda logits, targets, **w: F.cross_entropy(logits, targets.long(), **w, **options)


case("cross_entropy_mean", ce(), {"logits": logits, "targets": targets}, grad=("logits",))
case("cross_entropy_weight", ce(), {"logits": logits, "targets": targets, "weight": class_weight},
     grad=("logits",))
case("cross_entropy_ignore", ce(), {"logits": logits, "targets": partly_ignored}, grad=("logits",))
case("cross_entropy_weight_ignore", ce(), {"logits": logits, "targets": partly_ignored, "weight": class_weight},
     grad=("logits",))
ignored_class_3 = targets.clone()
ignored_class_3[[0, 6]] = 3  # ignore_index may be a real class: those rows count for nothing
case("cross_entropy_ignore_index_3", ce(ignore_index=3), {"logits": logits, "targets": ignored_class_3},
     grad=("logits",))
case("cross_entropy_sum", ce(reduction="sum"), {"logits": logits, "targets": partly_ignored}, grad=("logits",))
case("cross_entropy_none", ce(reduction="none"), {"logits": logits, "targets": partly_ignored, "weight": class_weight},
     grad=("logits",))
sequence_targets = torch.randint(0, 7, (3, 5)).float()
case("cross_entropy_btv",
     lambda logits, targets: F.cross_entropy(logits.flatten(0, 1), targets.flatten().long()),
     {"logits": x, "targets": sequence_targets}, grad=("logits",))

# ---- layer norm over one and two trailing dims, with and without weight and bias ----
for shape, where in (((7,), "last"), ((5, 7), "last2")):
    case(f"layer_norm_{where}", lambda x, shape=shape: F.layer_norm(x, shape), {"x": x}, grad=("x",))
    case(f"layer_norm_{where}_affine", lambda x, weight, bias, shape=shape: F.layer_norm(x, shape, weight, bias),
         {"x": x, "weight": torch.randn(shape), "bias": torch.randn(shape)}, grad=("x", "weight", "bias"))

# ---- rms_norm, from its formula: y = x / sqrt(mean(x^2) + eps) * weight, eps = 1e-6 ----
for shape, where in (((7,), "last"), ((5, 7), "last2")):
    dims = tuple(range(-len(shape), 0))
    case(f"rms_norm_{where}",
         lambda x, weight, dims=dims: x / torch.sqrt((x * x).mean(dims, keepdim=True) + 1e-6) * weight,
         {"x": x, "weight": torch.randn(shape)}, grad=("x", "weight"))

# ---- masked attention: q, k, v (B, heads, T, d) ----
B, HEADS, T, D = 2, 3, 6, 4
q, k, v = (torch.randn(B, HEADS, T, D) for _ in range(3))
causal = torch.triu(torch.ones(T, T), diagonal=1)  # 1 above the diagonal: a key in the future


def attention(q, k, v, mask, valid=None):
    p = torch.softmax((q @ k.transpose(-1, -2) / math.sqrt(D)).masked_fill(mask.bool(), -math.inf), -1)
    if valid is not None:
        p = torch.where(valid.bool(), p, torch.zeros(()))
    return p @ v


case("attention_causal", attention, {"q": q, "k": k, "v": v, "mask": causal}, grad=("q", "k", "v"))
# Sequence 1 ends in two padding tokens: they are masked as keys, and their own rows (queries) are
# masked entirely, then set to 0 by where. The fully masked rows are NaN after softmax, as in PyTorch.
padding = torch.zeros(B, T)
padding[1, -2:] = 1
pad_mask = ((padding[:, None, :, None] + padding[:, None, None, :]) > 0).float()  # (B,1,T,T)
valid_rows = (1 - padding)[:, None, :, None]  # (B,1,T,1)
case("attention_padded", attention, {"q": q, "k": k, "v": v, "mask": pad_mask, "valid": valid_rows},
     grad=("q", "k", "v"))

# ---- gelu, exact and with the tanh approximation ----
case("gelu", lambda x: F.gelu(x), {"x": x}, grad=("x",))
case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), {"x": x}, grad=("x",))

# ---- reductions over the last dim, dim 0 and every dim ----
ties = torch.randint(-3, 4, (3, 5, 7)).float()  # few distinct values: every max is shared
with_inf = x.clone()
with_inf[1, 2, :3] = -math.inf  # one row with -inf entries (not all: that row's logsumexp stays finite)
REDUCTIONS = {
    "sum": (torch.sum, x),
    "mean": (torch.mean, x),
    "amax": (torch.amax, ties),
    "logsumexp": (torch.logsumexp, with_inf),
    "var": (torch.var, x),
}
for op, (fn, data) in REDUCTIONS.items():
    for dims, where in (((-1,), "last"), ((0,), "dim0"), ((0, 1, 2), "all")):
        case(f"{op}_{where}", lambda x, fn=fn, dims=dims: fn(x, dims), {"x": data}, grad=("x",))

# ---- cases whose gradients must not be NaN ----
positive = torch.rand(3, 5, 7) + 0.5
mask = (torch.rand(3, 5, 7) < 0.3).float()
# log of the masked entries is log(0) = -inf, selected away by where: their gradient is 0, not NaN.
case("where_log_masked_fill",
     lambda x, mask: torch.where(mask.bool(), torch.zeros(()), torch.log(x.masked_fill(mask.bool(), 0))),
     {"x": positive, "mask": mask}, grad=("x",))
# An all-padding batch: the mean loss is 0/0 = NaN, the gradient 0.
case("cross_entropy_all_ignored", ce(), {"logits": logits, "targets": torch.full((8,), -100.0)}, grad=("logits",))
case("cross_entropy_all_ignored_sum", ce(reduction="sum"), {"logits": logits, "targets": torch.full((8,), -100.0)},
     grad=("logits",))

path = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden" / "core.json"
path.write_text(json.dumps({"torch_version": torch.__version__, "cases": CASES}, separators=(",", ":")) + "\n")
print(f"wrote {path}: {len(CASES)} cases, {path.stat().st_size} bytes")
