"""PyTorch side of `./ladder bench gpt`: models::GPT of bench/bench_gpt.cpp written as nanoGPT writes
its model with torch.nn (LayerNorm; causal self-attention as one Linear to q, k, v, then matmul,
masked_fill, softmax, matmul; a GELU MLP 4x wide; the head tied to the token embedding). PyTorch 1.13
has no torch.nn.functional.scaled_dot_product_attention (it came in 2.0), so the attention is composed
as nanoGPT's CPU path composes it. Driven by ladder_bench; see serve.py.

Workloads, each at the faster of torch.set_num_threads(1) and (2):
  gpt_step_<layers>x<embd>_t<context>_b<batch>_threads{1,2}: one training step (forward, cross entropy,
      backward, clipping to norm 1, AdamW with weight decay on the weight matrices only, as ladder's
      decay_groups), on random ids;
  gpt_generate_uncached_ctx<context>: generating context - 1 tokens from one token, without a cache
      (each token runs the model over the whole sequence so far), as nanoGPT's generate does.
"""
import math
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

VOCAB = 65
# (layers, heads, embd, context, batch): bench_gpt.cpp's two training configurations.
STEP_SIZES = ((4, 4, 128, 64, 12), (6, 6, 384, 256, 16))
GENERATE_CONTEXTS = (64, 512)  # generation runs the (4, 4, 128) model with block_size = context


class CausalSelfAttention(torch.nn.Module):
    def __init__(self, embd, heads, context):
        super().__init__()
        self.heads = heads
        self.c_attn = torch.nn.Linear(embd, 3 * embd)
        self.c_proj = torch.nn.Linear(embd, embd)
        self.register_buffer("hidden", torch.ones(context, context, dtype=torch.bool).triu(1))  # key j > query i

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))  # (B,H,T,D)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        weights = torch.softmax(scores.masked_fill(self.hidden[:T, :T], float("-inf")), dim=-1)
        y = (weights @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(torch.nn.Module):
    def __init__(self, embd, heads, context):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(embd)
        self.attn = CausalSelfAttention(embd, heads, context)
        self.ln_2 = torch.nn.LayerNorm(embd)
        self.c_fc = torch.nn.Linear(embd, 4 * embd)
        self.c_proj = torch.nn.Linear(4 * embd, embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class GPT(torch.nn.Module):
    def __init__(self, layers, heads, embd, context):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, embd)
        self.wpe = torch.nn.Embedding(context, embd)
        self.blocks = torch.nn.ModuleList([Block(embd, heads, context) for _ in range(layers)])
        self.ln_f = torch.nn.LayerNorm(embd)
        self.lm_head = torch.nn.Linear(embd, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():  # GPT-2's initialisation, as models/gpt.cpp's
            if name.endswith("bias"):
                torch.nn.init.zeros_(p)
            elif p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("c_proj.weight") else 0.02
                torch.nn.init.normal_(p, 0.0, std)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def train_step(layers, heads, embd, context, batch):
    model = GPT(layers, heads, embd, context)
    # ladder's decay_groups: the Linear weights decay; biases, norms and embeddings (the tied head) do not.
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.dim() == 2 and "wte" not in n
             and "wpe" not in n]
    rest = [p for n, p in model.named_parameters() if all(p is not d for d in decay)]
    adamw = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                              lr=1e-3, betas=(0.9, 0.99))
    x = torch.randint(0, VOCAB, (batch, context))
    y = torch.randint(0, VOCAB, (batch, context))

    def step():
        adamw.zero_grad()
        F.cross_entropy(model(x).view(-1, VOCAB), y.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        adamw.step()

    return step


def generate_uncached(context):
    model = GPT(4, 4, 128, context).eval()
    generator = torch.Generator().manual_seed(context)

    @torch.no_grad()
    def run():
        seq = torch.zeros(1, 1, dtype=torch.long)
        for _ in range(context - 1):
            probs = torch.softmax(model(seq)[:, -1, :], dim=-1)
            seq = torch.cat([seq, torch.multinomial(probs, 1, generator=generator)], dim=1)

    return run


torch.manual_seed(0)
workloads = {}
for size in STEP_SIZES:
    step = train_step(*size)
    layers, _, embd, context, batch = size
    for threads in (1, 2):
        workloads[f"gpt_step_{layers}x{embd}_t{context}_b{batch}_threads{threads}"] = (step, (1, 2))
for context in GENERATE_CONTEXTS:
    workloads[f"gpt_generate_uncached_ctx{context}"] = (generate_uncached(context), (1, 2))
serve(workloads)
