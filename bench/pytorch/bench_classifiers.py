"""PyTorch side of the classifier lines of `./ladder bench gpt` (bench/bench_classifiers.cpp): lesson
15's two models at its size, written with torch.nn, one training step each (forward, cross entropy,
backward, clipping to norm 1, AdamW with decay 0.01 on the weight matrices only) on a batch of 16
sequences of ids below 16, lengths 128 down to 68 (the rest padding), 10 classes:
  encoder_classifier_step_2x64_t128_b16_threads{1,2}: token embedding + learned positions, two pre-LN
      nn.TransformerEncoderLayer (4 heads, GELU feed-forward 128 wide, no dropout) under a final
      LayerNorm, the padding masked, mean pooling over the real tokens, a linear head;
  lstm_classifier_step_64_t128_b16_threads{1,2}: embedding, nn.LSTM 64 wide, mean pooling, a linear head.
Each at the faster of torch.set_num_threads(1) and (2). Driven by ladder_bench; see serve.py.
"""
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

BATCH, LENGTH, VOCAB, CLASSES, WIDTH = 16, 128, 16, 10, 64


def mean_pool(x, valid):
    weights = valid.unsqueeze(2)  # (B,T,1)
    return (x * weights).sum(1) / weights.sum(1).clamp(min=1.0)


class EncoderClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = torch.nn.Embedding(VOCAB, WIDTH)
        self.positions = torch.nn.Parameter(torch.randn(LENGTH, WIDTH) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(WIDTH, 4, dim_feedforward=2 * WIDTH, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(WIDTH),
                                                   enable_nested_tensor=False)
        self.head = torch.nn.Linear(WIDTH, CLASSES)

    def forward(self, ids, valid):
        x = self.token_embedding(ids) + self.positions[: ids.size(1)]
        x = self.encoder(x, src_key_padding_mask=valid == 0)
        return self.head(mean_pool(x, valid))


class LstmClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = torch.nn.Embedding(VOCAB, WIDTH)
        self.lstm = torch.nn.LSTM(WIDTH, WIDTH, batch_first=True)
        self.head = torch.nn.Linear(WIDTH, CLASSES)

    def forward(self, ids, valid):
        return self.head(mean_pool(self.lstm(self.token_embedding(ids))[0], valid))


def training_step(model):
    # ladder's decay_groups: the Linear and LSTM weight matrices decay; biases, norms, embeddings and positions do not.
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and "embedding" not in n and n != "positions"]
    rest = [p for p in model.parameters() if all(p is not d for d in decay)]
    adamw = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                              lr=3e-3)
    ids = torch.randint(1, VOCAB, (BATCH, LENGTH))
    labels = torch.randint(0, CLASSES, (BATCH,))
    valid = torch.zeros(BATCH, LENGTH)
    for b in range(BATCH):
        valid[b, : LENGTH - 4 * b] = 1

    def step():
        adamw.zero_grad()
        F.cross_entropy(model(ids, valid), labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        adamw.step()

    return step


torch.manual_seed(0)
workloads = {}
for name, model in (("encoder_classifier_step_2x64", EncoderClassifier()), ("lstm_classifier_step_64", LstmClassifier())):
    step = training_step(model)
    for threads in (1, 2):
        workloads[f"{name}_t128_b16_threads{threads}"] = (step, (1, 2))
serve(workloads)
