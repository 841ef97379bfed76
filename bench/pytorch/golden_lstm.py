"""Writes tests/parity/golden/lstm.json: torch.nn.LSTM (2 layers, bidirectional) on fixed weights and
inputs, its outputs and final states, and the gradients of a fixed weighted sum of them.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_lstm.py
tests/parity/test_lstm_parity.cpp loads the same weights by name into ladder's nn::LSTM.
"""
import json
import pathlib

import torch

torch.manual_seed(0)
T, B, I, H = 5, 3, 4, 6
lstm = torch.nn.LSTM(I, H, num_layers=2, bidirectional=True)
x = torch.randn(T, B, I, requires_grad=True)
h0 = torch.randn(4, B, H, requires_grad=True)
c0 = torch.randn(4, B, H, requires_grad=True)
output, (h_n, c_n) = lstm(x, (h0, c0))
# Fixed weights for each output so that every element of every result reaches the gradients.
w_out, w_h, w_c = torch.randn_like(output), torch.randn_like(h_n), torch.randn_like(c_n)
loss = (output * w_out).sum() + (h_n * w_h).sum() + (c_n * w_c).sum()
loss.backward()


def flat(t):
    return t.detach().flatten().tolist()


out = {
    "torch_version": torch.__version__,
    "sizes": {"T": T, "B": B, "I": I, "H": H, "layers": 2},
    "weights": {name: flat(p) for name, p in lstm.named_parameters()},
    "x": flat(x), "h0": flat(h0), "c0": flat(c0),
    "output": flat(output), "h_n": flat(h_n), "c_n": flat(c_n),
    "w_out": flat(w_out), "w_h": flat(w_h), "w_c": flat(w_c),
    "grad": {"x": flat(x.grad), "h0": flat(h0.grad), "c0": flat(c0.grad),
             **{name: flat(p.grad) for name, p in lstm.named_parameters()}},
}
path = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden" / "lstm.json"
path.write_text(json.dumps(out) + "\n")
print(f"wrote {path}")
