// What the lessons' models need in memory, as costs for memory_estimate.h: parameters (with their
// gradients and AdamW's moments), the activations training keeps for backward, the attention
// scores, the logits. Against the peak resident size measured (/usr/bin/time -v) of lessons 07,
// 11, 13 and 15, --quick and larger, the estimates were within 2x: 0.9x to 1.8x.
#pragma once

#include <cstdint>
#include <string>

#include "data/listops.h"
#include "data/mqar.h"
#include "data/retrieval.h"
#include "harness/memory_estimate.h"
#include "models/gpt.h"
#include "models/seq2seq.h"
#include "models/transformer.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

// The scores per query that attention `s` keeps for backward over `length` positions, as its kind says.
int64_t keys_per_query(const nn::AttentionSettings& s, int64_t length);

// A Transformer stack in training: `batch` sequences of `length` positions through `layers` blocks
// `width` wide, feed-forward `ff` wide, `heads` heads each scoring `keys_per_query` keys per query
// (what the attention kind keeps: KindDescription::kept_scores).
struct StackShape {
  int64_t batch, length, width, layers, ff, heads, keys_per_query;
};
void add_transformer_stack(harness::MemoryEstimate& estimate, const StackShape& s, const std::string& flags);

// "--embd 4096, --layers 48, --context 4096"
std::string gpt_flags_text(const models::GPTConfig& config);

// Lessons 11, 12, 14 and 16: the GPT trained on `batch` windows of its context.
harness::MemoryEstimate gpt_training_memory(const models::GPTConfig& config, int64_t batch, const std::string& flags);
// Lesson 16's `processes` processes, each with the whole GPT: rank 0 also runs the whole batch alone
// (part 1's gradient, part 2's one-process run), each other process its shard of the batch.
harness::MemoryEstimate data_parallel_memory(const models::GPTConfig& config, int64_t batch, int processes, const std::string& flags);
// Lesson 11's --load: the weights and the KV cache of one sequence, no gradients.
harness::MemoryEstimate gpt_sampling_memory(const models::GPTConfig& config);

// Lesson 03's MLP language model: `context` embeddings `embed` wide in, `hidden` units, characters out.
harness::MemoryEstimate mlp_language_model_memory(int64_t batch, int64_t context, int64_t embed, int64_t hidden);
// Lesson 04's CNN on `batch` images of `canvas` x `canvas` pixels.
harness::MemoryEstimate glyph_cnn_memory(int64_t batch, int64_t canvas);

// Lessons 05 and 06: a character language model of `layers` recurrent layers (LSTM's four gates at
// most) `hidden` wide over `batch` windows of `block` characters.
harness::MemoryEstimate recurrent_memory(int64_t batch, int64_t block, int64_t embed, int64_t hidden, int64_t layers,
                                const std::string& flags);

// Lessons 07 and 09: the GRU encoder-decoder on `batch` pairs of `source` and `target` tokens.
harness::MemoryEstimate seq2seq_memory(const models::Seq2SeqConfig& config, int64_t batch, int64_t source, int64_t target);
// Lesson 10: the encoder-decoder Transformer.
harness::MemoryEstimate transformer_memory(const models::TransformerConfig& config, int64_t batch, int64_t source, int64_t target);

// An encoder classifier over `examples` sequences of `length` tokens, held as token ids and their
// examples (two float copies), trained on `batch` of them at a time.
struct EncoderRun {
  int64_t examples, length, batch, width, layers, heads, keys_per_query;
  std::string batch_flag = "--batch";  // the flag that sets batch, for the message
};
harness::MemoryEstimate encoder_memory(const EncoderRun& run, const std::string& data_flags, const std::string& model_flags);

// Lesson 13's classifier on the retrieval task (its patterns are all fused: no scores kept).
harness::MemoryEstimate retrieval_memory(const data::RetrievalTaskOptions& task, int64_t batch, int64_t width, int64_t layers,
                                int64_t heads);

}  // namespace ladder::lessons
