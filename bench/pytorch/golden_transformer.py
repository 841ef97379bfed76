"""Writes tests/parity/golden/transformer.json: torch.nn.MultiheadAttention (self and cross
attention, key padding and causal masks), TransformerEncoderLayer and TransformerDecoderLayer (post-LN
and pre-LN, relu and gelu) on fixed weights and inputs, dropout 0: outputs, attention weights, and the
gradients of sum(output * upstream) for every input and every parameter.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_transformer.py
tests/parity/test_transformer_parity.cpp loads the same weights by name (the state dicts map one to
one) into ladder's modules. Masks are stored in ladder's polarity, 1 = a real key and 0 = padding;
PyTorch's key_padding_mask is the opposite (True = ignore), so it gets `mask == 0`. A causal mask is
PyTorch's boolean (T, S) attn_mask with True above the diagonal (query i sees keys j <= i).
"""
import json
import pathlib

import torch

from golden_values import values

B, T, S, E, H, F = 2, 5, 7, 8, 2, 16
GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden"
CASES = {}


def padding(lengths, size):
    """Ladder's key padding mask (B, size): 1 for the first `length` keys of each row, 0 after."""
    return (torch.arange(size)[None, :] < torch.tensor(lengths)[:, None]).float()


def causal(rows, cols):
    return torch.triu(torch.ones(rows, cols, dtype=torch.bool), diagonal=1)


def record(name, module, inputs, run, settings):
    """Runs module through run(**inputs) -> (output, attention weights or None), backward from a
    random upstream, and stores it all."""
    out, weights = run(**inputs)
    upstream = torch.randn(out.shape)
    (out * upstream).sum().backward()
    CASES[name] = {
        "settings": settings,
        "state": {n: values(p) for n, p in module.state_dict().items()},
        "inputs": {n: {"shape": list(t.shape), "values": values(t)} for n, t in inputs.items()},
        "output": values(out),
        "upstream": values(upstream),
        "grads": {**{n: values(t.grad) for n, t in inputs.items() if t.requires_grad},
                  **{n: values(p.grad) for n, p in module.named_parameters()}},
    }
    if weights is not None:
        CASES[name]["weights"] = values(weights)


def leaf(*shape):
    return torch.randn(*shape).requires_grad_()


def attention_cases():
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True)
    with torch.no_grad():  # PyTorch starts the biases at 0; random ones test that they are used
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    x, mask = leaf(B, T, E), padding([T, 3], T)
    record("mha_self_causal_padded", mha, {"x": x, "key_padding_mask": mask},  # weights averaged: (B,T,T)
           lambda x, key_padding_mask: mha(x, x, x, key_padding_mask=key_padding_mask == 0, attn_mask=causal(T, T)),
           {"causal": True})
    mha.zero_grad()

    query, memory, mask = leaf(B, T, E), leaf(B, S, E), padding([4, S], S)
    record("mha_cross_padded", mha, {"query": query, "memory": memory, "key_padding_mask": mask},  # per head: (B,H,T,S)
           lambda query, memory, key_padding_mask: mha(query, memory, memory, key_padding_mask=key_padding_mask == 0,
                                                       average_attn_weights=False),
           {"causal": False})


def layer_cases():
    for norm_first in (False, True):
        order = "pre" if norm_first else "post"
        for activation in ("relu", "gelu"):
            settings = {"norm_first": norm_first, "activation": activation}
            encoder = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.0, activation=activation,
                                                       batch_first=True, norm_first=norm_first)
            with torch.no_grad():  # LayerNorm starts at (1, 0); random ones test that they are used
                for norm in (encoder.norm1, encoder.norm2):
                    norm.weight.add_(0.3 * torch.randn(E))
                    norm.bias.normal_()
            src, mask = leaf(B, T, E), padding([T, 3], T)
            record(f"encoder_{order}_{activation}", encoder, {"src": src, "src_key_padding_mask": mask},
                   lambda src, src_key_padding_mask: (encoder(src, src_key_padding_mask=src_key_padding_mask == 0), None),
                   settings)

            decoder = torch.nn.TransformerDecoderLayer(E, H, F, dropout=0.0, activation=activation,
                                                       batch_first=True, norm_first=norm_first)
            with torch.no_grad():
                for norm in (decoder.norm1, decoder.norm2, decoder.norm3):
                    norm.weight.add_(0.3 * torch.randn(E))
                    norm.bias.normal_()
            tgt, memory, mask = leaf(B, T, E), leaf(B, S, E), padding([S, 4], S)
            record(f"decoder_{order}_{activation}", decoder,
                   {"tgt": tgt, "memory": memory, "memory_key_padding_mask": mask},
                   lambda tgt, memory, memory_key_padding_mask: (decoder(
                       tgt, memory, tgt_mask=causal(T, T), memory_key_padding_mask=memory_key_padding_mask == 0), None),
                   settings)


torch.manual_seed(0)
attention_cases()
layer_cases()
path = GOLDEN / "transformer.json"
path.write_text(json.dumps({"torch_version": torch.__version__,
                            "sizes": {"B": B, "T": T, "S": S, "E": E, "H": H, "F": F},
                            "cases": CASES}) + "\n")
print(f"wrote {path}")
