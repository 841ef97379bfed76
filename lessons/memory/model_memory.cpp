#include "lessons/memory/model_memory.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/attention_registry.h"

namespace ladder::lessons {

namespace {

// Floats a block keeps per position for backward, beyond its feed-forward and scores: the norms'
// inputs and outputs, q, k, v and their per-head copies, the attention output, both residuals.
constexpr double kFloatsPerWidth = 16;
// Copies of the scores kept per block: the scores, the softmax, and its mask or dropout.
constexpr double kScoreCopies = 3;
// The logits, their softmax in the loss and the gradient.
constexpr double kLogitCopies = 3;
// A GRU layer keeps per step its gates (3 H), the new state and the reset product.
constexpr double kGruFloatsPerHidden = 8;
// An LSTM layer keeps per step its four gates, the cell, its tanh and the new state.
constexpr double kLstmFloatsPerHidden = 12;
// A character vocabulary, before the text is read: generous for the lessons' texts.
constexpr double kCharacters = 256;

double d(int64_t v) { return static_cast<double>(v); }


}  // namespace

int64_t keys_per_query(const nn::AttentionSettings& s, int64_t length) {
  return nn::registered_kind(s.kind).kept_scores(s, length);
}

void add_transformer_stack(harness::MemoryEstimate& estimate, const StackShape& s, const std::string& flags) {
  const double positions = d(s.batch) * d(s.length) * d(s.layers);
  estimate.parameters(d(s.layers) * (4 * d(s.width) * d(s.width) + 2 * d(s.width) * d(s.ff)), flags);
  estimate.add("activations", positions * (kFloatsPerWidth * d(s.width) + 2 * d(s.ff)), 4, flags);
  estimate.add("attention scores", positions * kScoreCopies * d(s.heads) * d(s.keys_per_query), 4, flags);
}

std::string gpt_flags_text(const models::GPTConfig& c) {
  return cat("--embd ", c.n_embd, ", --layers ", c.n_layer, ", --context ", c.block_size);
}

harness::MemoryEstimate gpt_training_memory(const models::GPTConfig& c, int64_t batch, const std::string& flags) {
  harness::MemoryEstimate estimate;
  add_transformer_stack(estimate,
                        {batch, c.block_size, c.n_embd, c.n_layer, 4 * c.n_embd, c.n_head,
                         keys_per_query(c.attention, c.block_size)},
                        flags);
  estimate.parameters(d(c.vocab_size + c.block_size) * d(c.n_embd), cat("--embd ", c.n_embd));
  estimate.add("logits", d(batch) * d(c.block_size) * d(c.vocab_size) * kLogitCopies, 4, cat("--batch ", batch));
  return estimate;
}

harness::MemoryEstimate data_parallel_memory(const models::GPTConfig& c, int64_t batch, int processes, const std::string& flags) {
  harness::MemoryEstimate estimate = gpt_training_memory(c, batch, flags);
  if (processes == 1) return estimate;
  const int64_t shard = (batch + processes - 1) / processes;  // the largest
  return estimate.processes(processes - 1, gpt_training_memory(c, shard, flags), cat("--procs ", processes));
}

harness::MemoryEstimate gpt_sampling_memory(const models::GPTConfig& c) {
  const double width = d(c.n_embd), layers = d(c.n_layer);
  harness::MemoryEstimate estimate;
  estimate.add("parameters", layers * 12 * width * width + d(c.vocab_size + c.block_size) * width, 4,
               "the checkpoint's n_embd and n_layer");
  estimate.add("KV cache", layers * 2 * d(c.block_size) * width, 4, "the checkpoint's block_size");
  return estimate;
}

harness::MemoryEstimate mlp_language_model_memory(int64_t batch, int64_t context, int64_t embed, int64_t hidden) {
  harness::MemoryEstimate estimate;
  estimate.parameters((d(context * embed) + kCharacters) * d(hidden), cat("--hidden ", hidden));
  estimate.add("activations", d(batch) * (4 * d(hidden) + kLogitCopies * kCharacters), 4, cat("--batch ", batch));
  return estimate;
}

harness::MemoryEstimate glyph_cnn_memory(int64_t batch, int64_t canvas) {
  // Each image: 16 feature maps of the canvas, kept about 8 times (conv, batch norm, ReLU, their gradients).
  return harness::MemoryEstimate().add("activations", d(batch) * 16 * d(canvas * canvas) * 8, 4, cat("--batch ", batch));
}

harness::MemoryEstimate recurrent_memory(int64_t batch, int64_t block, int64_t embed, int64_t hidden, int64_t layers,
                                const std::string& flags) {
  const double h = d(hidden), positions = d(batch) * d(block);
  harness::MemoryEstimate estimate;
  estimate.parameters(d(layers) * 4 * (d(embed) + 2 * h) * h + kCharacters * (d(embed) + h), flags);
  estimate.add("activations", positions * d(layers) * kLstmFloatsPerHidden * h, 4, cat(flags, ", --batch ", batch));
  estimate.add("logits", positions * kCharacters * kLogitCopies, 4, cat("--batch ", batch, ", --block ", block));
  return estimate;
}

harness::MemoryEstimate seq2seq_memory(const models::Seq2SeqConfig& c, int64_t batch, int64_t source, int64_t target) {
  const double hidden = d(c.hidden), embed = d(c.embed), layers = d(c.layers);
  const std::string sizes = cat("--hidden ", c.hidden, ", --layers ", c.layers);
  harness::MemoryEstimate estimate;
  // Two GRU stacks (3 gates over the input and the state), the attention and the output layer.
  estimate.parameters(2 * layers * 3 * (embed + 2 * hidden) * hidden + 4 * hidden * hidden, sizes);
  estimate.parameters(d(c.src_vocab + c.tgt_vocab) * embed + 2 * hidden * d(c.tgt_vocab), "the vocabularies");
  estimate.add("activations", d(batch) * d(source + target) * layers * kGruFloatsPerHidden * hidden, 4,
               cat(sizes, ", --batch ", batch, ", pairs of ", source, " and ", target, " tokens"));
  estimate.add("attention scores", d(batch) * d(target) * d(source) * kScoreCopies, 4, cat("pairs of ", source, " tokens"));
  estimate.add("logits", d(batch) * d(target) * d(c.tgt_vocab) * kLogitCopies, 4, "the target vocabulary");
  return estimate;
}

harness::MemoryEstimate transformer_memory(const models::TransformerConfig& c, int64_t batch, int64_t source, int64_t target) {
  const std::string sizes = cat("--embed ", c.d_model, ", --layers ", c.encoder_layers, ", --ff ", c.dim_feedforward);
  harness::MemoryEstimate estimate;
  add_transformer_stack(estimate, {batch, source, c.d_model, c.encoder_layers, c.dim_feedforward, c.nhead,
                                   keys_per_query(c.encoder_attention, source)},
                        sizes);
  // The decoder: its own attention and the cross attention over the source.
  add_transformer_stack(estimate, {batch, target, c.d_model, c.decoder_layers, c.dim_feedforward, c.nhead, 0}, sizes);
  estimate.parameters(d(c.src_vocab + 2 * c.tgt_vocab) * d(c.d_model), "the vocabularies");
  estimate.add("logits", d(batch) * d(target) * d(c.tgt_vocab) * kLogitCopies, 4, "the target vocabulary");
  return estimate;
}

harness::MemoryEstimate encoder_memory(const EncoderRun& r, const std::string& data_flags, const std::string& model_flags) {
  harness::MemoryEstimate estimate;
  estimate.add("data", d(r.examples) * d(r.length) * 2, 4, data_flags);
  add_transformer_stack(estimate, {r.batch, r.length, r.width, r.layers, 2 * r.width, r.heads, r.keys_per_query},
                        cat(model_flags, ", ", r.batch_flag, " ", r.batch));
  return estimate;
}

harness::MemoryEstimate retrieval_memory(const data::RetrievalTaskOptions& task, int64_t batch, int64_t width, int64_t layers,
                                int64_t heads) {
  return encoder_memory({task.train + task.val + task.test, task.length, batch, width, layers, heads, 0},
                        cat("--task-length ", task.length, ", --train-size ", task.train, ", --test-size ", task.test),
                        cat("--task-length ", task.length, ", --width ", width, ", --layers ", layers));
}

}  // namespace ladder::lessons
