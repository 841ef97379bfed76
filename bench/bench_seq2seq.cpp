// The Bahdanau encoder-decoder of lesson 09 (models::Seq2SeqAttention: embedding 64, a 2-layer GRU
// of 128 each side, additive attention) on a batch of 64 random pairs, sources of 16-32 ids padded
// to 32, targets of 6-12 padded to 12: one training step (teacher-forced forward, cross entropy
// ignoring padding, backward, clipping to norm 1, Adam), in ladder at one and at two threads, and
// the same model in PyTorch (bench/pytorch/bench_seq2seq.py) at the faster of its 1 and 2 threads.
#include "bench/bench.h"
#include "core/ops.h"
#include "data/tokenizer.h"
#include "models/seq2seq_attention.h"
#include "optim/adam.h"

namespace ladder::bench {

namespace {

constexpr int64_t kBatch = 64, kSource = 32, kTarget = 12, kSrcVocab = 64, kTgtVocab = 32;

// Row b holds `length(b)` random ids (never a special token) and then padding: (B,L) ids and their
// (B,L) valid mask. bench_seq2seq.py builds the same pattern of lengths.
struct Padded {
  Tensor ids, valid;
};
Padded random_padded(int64_t width, int64_t vocab, int64_t (*length)(int64_t), Generator& gen) {
  const Tensor random = randint(data::Tokenizer::kUnk + 1, vocab, {kBatch, width}, gen);
  Padded out{zeros({kBatch, width}), zeros({kBatch, width})};
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t s = 0; s < length(b); ++s) {
      out.ids.data()[b * width + s] = random.data()[b * width + s];
      out.valid.data()[b * width + s] = 1;
    }
  return out;
}

int64_t source_length(int64_t b) { return kSource - (b * 7) % 17; }  // 16 ... 32
int64_t target_length(int64_t b) { return kTarget - (b * 5) % 7; }   // 6 ... 12

}  // namespace

void run_seq2seq() {
  Generator gen(5);
  models::Seq2SeqAttention model(
      {.src_vocab = kSrcVocab, .tgt_vocab = kTgtVocab, .embed = 64, .hidden = 128, .layers = 2}, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 1e-3f});
  const Padded src = random_padded(kSource, kSrcVocab, source_length, gen);
  const Tensor tgt_in = random_padded(kTarget, kTgtVocab, target_length, gen).ids;
  const Tensor tgt_out = random_padded(kTarget, kTgtVocab, target_length, gen).ids;
  auto step = [&] {
    adam.zero_grad();
    cross_entropy(model.forward(src.ids, src.valid, tgt_in), tgt_out, {.ignore_index = data::Tokenizer::kPad})
        .backward();
    optim::clip_grad_norm(model.parameters(), 1.0f);
    adam.step();
  };
  std::vector<Workload> workloads;
  for (int threads : {1, 2})
    workloads.push_back(
        {.name = "seq2seq_attention_step_b64_s32_t12_threads" + std::to_string(threads),
         .step = step,
         .threads = threads,
         .note = "(ref: PyTorch nn.GRU + the same additive attention, its faster of 1 and 2 threads; "
                 "embed 64, hidden 128, 2 layers; fwd + bwd + clip + Adam)"});
  compare_with_pytorch("bench_seq2seq.py", workloads);
}

}  // namespace ladder::bench
