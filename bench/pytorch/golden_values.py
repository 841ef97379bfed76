"""Tensors as golden-file numbers, shared by the golden_*.py scripts."""
import math


def number(v):
    if math.isfinite(v):
        return float(f"{v:.9g}")  # nine significant digits give back every float32 exactly
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def values(t):
    return [number(v) for v in t.detach().flatten().tolist()]
