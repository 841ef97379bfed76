"""PyTorch side of `./ladder bench seq2seq`: models::Seq2SeqAttention of bench/bench_seq2seq.cpp,
written with torch.nn.GRU and the same additive attention, one training step (teacher-forced
forward, cross entropy ignoring padding, backward, clipping to norm 1, Adam) at the faster of
torch.set_num_threads(1) and (2). Driven by ladder_bench; see serve.py.

The same computation as models/seq2seq_attention.cpp: the encoder reads the source with its padding
moved to the front; each decoder step's query is the top layer's previous state, the context is
additive attention over the encoder outputs with padded keys masked out, and the decoder GRU reads
[embedding, context]. One difference the library has no say in: torch.nn.GRU is the reset-after
variant, (r * (h W_hn^T + b_hn)), where the model's GRU is the classic one, ((r * h) W_hn^T + b_hn);
both cost the same arithmetic. Like a careful PyTorch user, this twin projects the keys once per
sequence, embeds the whole target at once and applies the output layer once to all steps.
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

BATCH, SOURCE, TARGET, SRC_VOCAB, TGT_VOCAB = 64, 32, 12, 64, 32
EMBED, HIDDEN, LAYERS = 64, 128, 2
PAD, FIRST_ORDINARY_ID = 0, 4  # data/tokenizer.h: <pad> <bos> <eos> <unk>, then ordinary tokens


class AdditiveAttention(torch.nn.Module):
    """score(q, k) = w_v . tanh(W_q q + W_k k), softmax over the keys that are not padding."""

    def __init__(self):
        super().__init__()
        self.W_q = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.W_k = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.w_v = torch.nn.Linear(HIDDEN, 1, bias=False)

    def forward(self, query, projected_keys, values, valid):
        # query (B,H), projected_keys (B,S,H) = W_k k, values (B,S,H), valid (B,S) bool -> (B,H)
        features = torch.tanh(self.W_q(query).unsqueeze(1) + projected_keys)
        scores = self.w_v(features).squeeze(-1).masked_fill(~valid, -1e6)
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights.unsqueeze(1), values).squeeze(1)


class Seq2SeqAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embedding = torch.nn.Embedding(SRC_VOCAB, EMBED)
        self.encoder = torch.nn.GRU(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.attention = AdditiveAttention()
        self.tgt_embedding = torch.nn.Embedding(TGT_VOCAB, EMBED)
        self.decoder = torch.nn.GRU(EMBED + HIDDEN, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, TGT_VOCAB)

    def forward(self, src, src_valid, tgt_in):
        # src (B,S), src_valid (B,S) 0/1, tgt_in (B,T) -> logits (B,T,V)
        order = torch.argsort(src_valid, dim=1, stable=True)  # padding first, tokens in their order
        outputs, h = self.encoder(self.src_embedding(src.gather(1, order)))  # (B,S,H), (layers,B,H)
        valid = src_valid.gather(1, order).bool()
        keys = self.attention.W_k(outputs)
        embedded = self.tgt_embedding(tgt_in)  # (B,T,E)
        steps = []
        for t in range(tgt_in.size(1)):
            context = self.attention(h[-1], keys, outputs, valid)
            step, h = self.decoder(torch.cat([embedded[:, t], context], dim=-1).unsqueeze(1), h)
            steps.append(step)
        return self.head(torch.cat(steps, dim=1))


def random_padded(width, vocab, length):
    """Row b: length(b) random ordinary ids, then padding; the ids (B,L) and the valid mask (B,L)."""
    valid = torch.zeros(BATCH, width, dtype=torch.long)
    for b in range(BATCH):
        valid[b, : length(b)] = 1
    return torch.randint(FIRST_ORDINARY_ID, vocab, (BATCH, width)) * valid, valid


torch.manual_seed(0)
model = Seq2SeqAttention()
adam = torch.optim.Adam(model.parameters(), lr=1e-3)
src, src_valid = random_padded(SOURCE, SRC_VOCAB, lambda b: SOURCE - (b * 7) % 17)  # as bench_seq2seq.cpp
tgt_in, _ = random_padded(TARGET, TGT_VOCAB, lambda b: TARGET - (b * 5) % 7)
tgt_out, _ = random_padded(TARGET, TGT_VOCAB, lambda b: TARGET - (b * 5) % 7)


def step():
    adam.zero_grad()
    logits = model(src, src_valid, tgt_in)
    torch.nn.functional.cross_entropy(logits.reshape(-1, TGT_VOCAB), tgt_out.reshape(-1), ignore_index=PAD).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    adam.step()


serve({f"seq2seq_attention_step_b64_s32_t12_threads{threads}": (step, (1, 2)) for threads in (1, 2)})
