"""Writes tests/parity/golden/gpt.json: a small GPT (nanoGPT's Block written out with torch.nn) and
10 steps of AdamW on fixed batches: the initial weights, the batches and the loss before each step.

Run with Debian's PyTorch:  /usr/bin/python3 bench/pytorch/golden_gpt.py
tests/parity/test_gpt_parity.cpp builds models::GPT with the same settings, loads the weights by
name (ladder's names are these modules' names; the tied lm_head.weight is transformer.wte.weight),
trains with the same batches and optimizer settings, and compares the 10 losses.

The attention is torch.nn.MultiheadAttention with a causal mask, as ladder's GPT uses its
MultiheadAttention with PyTorch's parameter names. Weight decay follows ladder's decay_groups:
the Linear and attention weights decay; biases, LayerNorms and the embeddings (the tied head
with them) do not.
"""
import json
import pathlib

import torch
import torch.nn.functional as F

from golden_values import values

CONFIG = dict(vocab_size=13, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True, tie_weights=True)
BATCH, STEPS = 4, 10
ADAMW = dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)


class MLP(torch.nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = torch.nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = torch.nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(torch.nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(n_embd)
        self.attn = torch.nn.MultiheadAttention(n_embd, n_head, batch_first=True)
        self.ln_2 = torch.nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        T = x.shape[1]
        hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True: a later position
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=hidden, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class GPT(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=torch.nn.Embedding(c["block_size"], c["n_embd"]),
            h=torch.nn.ModuleList([Block(c["n_embd"], c["n_head"]) for _ in range(c["n_layer"])]),
            ln_f=torch.nn.LayerNorm(c["n_embd"]),
        ))
        self.lm_head = torch.nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx):
        positions = torch.arange(idx.shape[1])
        x = self.transformer.wte(idx) + self.transformer.wpe(positions)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def decays(name):
    return name.endswith("weight") and ".ln_" not in name and "ln_f" not in name and ".wte." not in name \
        and ".wpe." not in name


torch.manual_seed(0)
model = GPT(CONFIG)
with torch.no_grad():  # GPT-2's scale for the embeddings; random biases and norms test that they are used
    model.transformer.wte.weight.normal_(0, 0.3)
    model.transformer.wpe.weight.normal_(0, 0.3)
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            p.normal_(0, 0.1)
        elif ".ln_" in name or "ln_f" in name:
            p.add_(0.1 * torch.randn_like(p))
state = {name: values(t) for name, t in model.state_dict().items() if name != "lm_head.weight"}

batches = [torch.randint(0, CONFIG["vocab_size"], (BATCH, CONFIG["block_size"] + 1)) for _ in range(STEPS)]
named = list(model.named_parameters())  # the tied tensor once, as transformer.wte.weight
optimizer = torch.optim.AdamW(
    [{"params": [p for n, p in named if decays(n)], "weight_decay": ADAMW["weight_decay"]},
     {"params": [p for n, p in named if not decays(n)], "weight_decay": 0.0}],
    lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"])
losses = []
for batch in batches:
    x, y = batch[:, :-1], batch[:, 1:]
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, CONFIG["vocab_size"]), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

path = pathlib.Path(__file__).resolve().parents[2] / "tests" / "parity" / "golden" / "gpt.json"
path.write_text(json.dumps({
    "torch_version": torch.__version__,
    "config": CONFIG,
    "adamw": {**ADAMW, "betas": list(ADAMW["betas"])},
    "decayed": [n for n, _ in named if decays(n)],
    "state": state,
    "batches": [b.flatten().tolist() for b in batches],
    "batch_shape": [BATCH, CONFIG["block_size"] + 1],
    "losses": [float(f"{v:.9g}") for v in losses],
}) + "\n")
print(f"wrote {path}: losses {[round(v, 4) for v in losses]}")
