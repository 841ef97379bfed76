"""Writes tests/parity/golden/lstm.json and gru.json: torch.nn.LSTM and torch.nn.GRU (2 layers,
bidirectional) on fixed weights and inputs, their outputs and final states, and the gradients of
a fixed weighted sum of them.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_recurrent.py
tests/parity/test_recurrent_parity.cpp loads the same weights by name into ladder's nn::LSTM and
nn::GRU (GRUVariant::pytorch, the variant torch.nn.GRU computes).
"""
import json
import pathlib

import torch

T, B, I, H = 5, 3, 4, 6
GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden"


def flat(t):
    return t.detach().flatten().tolist()


def golden(kind):
    torch.manual_seed(0)
    net = getattr(torch.nn, kind)(I, H, num_layers=2, bidirectional=True)
    x = torch.randn(T, B, I, requires_grad=True)
    h0 = torch.randn(4, B, H, requires_grad=True)
    states = {"h0": h0}
    if kind == "LSTM":
        states["c0"] = torch.randn(4, B, H, requires_grad=True)
        output, (h_n, c_n) = net(x, (h0, states["c0"]))
        finals = {"h_n": h_n, "c_n": c_n}
    else:
        output, h_n = net(x, h0)
        finals = {"h_n": h_n}
    # Fixed weights for each result so that every element of every result reaches the gradients.
    w_out = torch.randn_like(output)
    w_final = {name: torch.randn_like(t) for name, t in finals.items()}
    loss = (output * w_out).sum() + sum((t * w_final[name]).sum() for name, t in finals.items())
    loss.backward()
    out = {
        "torch_version": torch.__version__,
        "sizes": {"T": T, "B": B, "I": I, "H": H, "layers": 2},
        "weights": {name: flat(p) for name, p in net.named_parameters()},
        "x": flat(x), **{name: flat(t) for name, t in states.items()},
        "output": flat(output), **{name: flat(t) for name, t in finals.items()},
        "w_out": flat(w_out), **{"w_" + name: flat(t) for name, t in w_final.items()},
        "grad": {"x": flat(x.grad), **{name: flat(t.grad) for name, t in states.items()},
                 **{name: flat(p.grad) for name, p in net.named_parameters()}},
    }
    path = GOLDEN / f"{kind.lower()}.json"
    path.write_text(json.dumps(out) + "\n")
    print(f"wrote {path}")


golden("LSTM")
golden("GRU")
