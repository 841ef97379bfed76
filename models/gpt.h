// GPT: a decoder-only Transformer language model, designed as nanoGPT's (GPT-2's) and written our
// own way. Tokens and learned positions are added, n_layer pre-LN blocks of causal self-attention
// and a GELU MLP follow, then a final LayerNorm and a linear head to the vocabulary:
//   x = wte(idx) + wpe(0..T-1)
//   x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))     (each block; mlp = c_proj(gelu(c_fc(x))), 4x wide)
//   logits = lm_head(ln_f(x))                        (lm_head's weight is wte's when tie_weights)
// Parameter names follow nanoGPT's (transformer.wte, transformer.h.0.ln_1, ..., lm_head), except the
// attention, which is our MultiheadAttention with PyTorch's names (attn.in_proj_weight, attn.out_proj).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "nn/attention/multihead_attention.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norm.h"

namespace ladder::models {

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t block_size = 64;  // the longest context: wpe has this many rows
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  float dropout = 0;        // on the embeddings, the attention weights and each block's two outputs
  bool bias = true;         // in the Linears and the attention (the LayerNorms always have theirs)
  bool tie_weights = true;  // lm_head.weight is transformer.wte.weight (one tensor, counted once)
  // The attention of every block (nn/attention/attention_kind.h): full by default, or linear, bigbird, ...
  // Block i gets layer = i (BigBird draws its random blocks per layer); dropout is the field above.
  nn::AttentionSettings attention;
};

// The position-wise feed-forward block: c_proj(gelu(c_fc(x))), then dropout.
class GPTMLP : public nn::Module {
 public:
  GPTMLP(const GPTConfig& config, Generator& gen);
  Tensor forward(const Tensor& x) override;  // x (B,T,C) -> (B,T,C)

  std::shared_ptr<nn::Linear> c_fc;    // C -> 4C
  std::shared_ptr<nn::Linear> c_proj;  // 4C -> C
  std::shared_ptr<nn::Dropout> dropout;
};

// One pre-LN block: x + drop(attn(ln_1(x))), then x + mlp(ln_2(x)).
class GPTBlock : public nn::Module {
 public:
  GPTBlock(const GPTConfig& config, int64_t layer, Generator& gen);
  // x (B,T,C) -> (B,T,C). Without a state the attention is causal over x, and `heads`, when given,
  // receives the q, k, v it attended with; with a state, x continues the sequence the state holds
  // (MultiheadAttention::forward_step; for full attention the state is the KV cache).
  // key_padding_mask (B,T), when defined, hides padded positions from the attention (forward without a state only).
  Tensor forward(const Tensor& x, nn::AttentionState* state, nn::AttentionHeads* heads = nullptr,
                 const Tensor& key_padding_mask = Tensor());
  Tensor forward(const Tensor& x) override { return forward(x, nullptr); }

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Dropout> resid_dropout;  // on the attention's output
  std::shared_ptr<GPTMLP> mlp;
};

// The body nanoGPT calls `transformer`: the embeddings, the blocks (h.0, h.1, ...) and ln_f.
class GPTTransformer : public nn::Module {
 public:
  GPTTransformer(const GPTConfig& config, Generator& gen);

  std::shared_ptr<nn::Embedding> wte;  // (vocab_size, n_embd)
  std::shared_ptr<nn::Embedding> wpe;  // (block_size, n_embd)
  std::shared_ptr<nn::Dropout> drop;
  std::vector<std::shared_ptr<GPTBlock>> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
};

// What generation keeps between steps: one AttentionState per block, started by the block's
// attention (MultiheadAttention::start_state) and taking in every position fed through forward_step.
// For full attention it is the KV cache, nn::KeyValueState (the keys and values of the positions so
// far, appended and attended by FullAttention::step); linear attention keeps a sum of fixed size.
struct GPTCache {
  std::vector<std::unique_ptr<nn::AttentionState>> layers;  // one per block, started on first use
  int64_t length() const { return layers.empty() || !layers.front() ? 0 : layers.front()->length(); }
  void clear() { layers.clear(); }
};

// What forward_with_heads returns.
struct GPTForward {
  Tensor logits;                          // (B,T,V), as forward()
  std::vector<nn::AttentionHeads> heads;  // per block: the q, k, v (B,H,T,D) its attention attended with
};

struct GenerateOptions {
  float temperature = 1.0f;  // > 0; the logits are divided by it (small: nearly greedy)
  int64_t top_k = 0;         // keep only the k most likely tokens; 0: all
  float top_p = 1.0f;        // in (0, 1]: keep the smallest set of most likely tokens whose probability reaches p
  bool use_cache = true;     // a GPTCache (full attention: a KV cache): a step feeds only the new token
  std::vector<int64_t> never_sample;  // ids given probability 0, such as a tokenizer's <unk> and <pad>
};

class GPT : public nn::Module {
 public:
  explicit GPT(const GPTConfig& config, Generator& gen = default_generator());

  // idx (B,T) of token ids, T <= block_size -> logits (B,T,V): the scores of the token after each position.
  Tensor forward(const Tensor& idx) override;
  // The same, with the padded positions of idx (key_padding_mask (B,T), 0 = padding) hidden from every
  // block's attention: framed lines (data/line_batch.h), whose padding vq attention must not learn from.
  Tensor forward(const Tensor& idx, const Tensor& key_padding_mask);
  // The model contract of training (optim::train_step): the mean cross-entropy of
  // forward(batch.x, batch.key_padding_mask) (B,T,V) against the next tokens batch.y (B,T).
  Tensor loss(const data::Batch& batch);
  // forward(), with what every block's attention attended with on the way: for attention maps
  // (attn->attention_kind->implied_weights(q, k, {.causal = true})) and for reading its keys.
  GPTForward forward_with_heads(const Tensor& idx);
  // New tokens idx (B,T_new) continuing the sequence in `cache` (empty: a new sequence), at positions
  // L .. L+T_new-1 with L = cache.length(); each block's state takes them in (full attention: their
  // keys and values appended) -> logits (B,T_new,V), equal to the last T_new rows of forward() over
  // the whole sequence. L + T_new <= block_size.
  Tensor forward_cached(const Tensor& idx, GPTCache& cache);

  // Continues each row of prompt (B,T) by max_new_tokens sampled tokens -> (B, T + max_new_tokens),
  // in eval mode and without recording a graph. Each token is drawn from
  // softmax(logits / temperature), cut to top_k and then to top_p (next_token_distribution).
  // The model sees at most block_size tokens. Without the cache every step runs forward() on the
  // last block_size tokens. With the cache, when the next token would not fit, the cache starts
  // again from the last block_size / 2 tokens (fed at once), so that positions stay those the
  // model was trained on and the cost of refilling is paid once every block_size / 2 tokens; its
  // samples then differ from the uncached ones, which always see a full block_size of context.
  Tensor generate(const Tensor& prompt, int64_t max_new_tokens, const GenerateOptions& options,
                  Generator& gen);

  const GPTConfig& config() const { return config_; }

  std::shared_ptr<GPTTransformer> transformer;
  std::shared_ptr<nn::Linear> lm_head;  // n_embd -> vocab_size, without bias

 protected:
  std::string describe() const override;

 private:
  // The blocks over idx at positions offset.. (continuing the cache's states when it is given; each
  // block's heads appended to `heads` when it is given).
  Tensor run(const Tensor& idx, GPTCache* cache, std::vector<nn::AttentionHeads>* heads,
             const Tensor& key_padding_mask = Tensor());
  void check_ids(const Tensor& idx) const;  // (B,T), whole numbers in [0, vocab_size)
  GPTConfig config_;
};

// The distribution generate draws the next token from, for one row of logits (V): softmax of
// logits / temperature over the ids not in never_sample (those get 0), zero outside the top_k most
// likely tokens (when top_k > 0), then zero outside the smallest set of most likely tokens whose
// probability reaches top_p, renormalised. Ties in probability keep the lower token id first.
// Throws when never_sample holds an id outside [0, V) or every id.
std::vector<float> next_token_distribution(const float* logits, int64_t V, const GenerateOptions& options);
// Checks temperature > 0, top_k >= 0 and top_p in (0, 1]; throws naming `op` otherwise.
void check_generate_options(const GenerateOptions& options, const char* op);

// GPTConfig as JSON text (a checkpoint's metadata) and back: every field, the attention's settings
// included (BigBird's seed too, which draws its random blocks), so that the checkpoint rebuilds the
// model it was saved from. A config without "attention" (saved before the kinds) is full attention;
// a missing or mistyped field fails naming it, and so does a size outside the limits a checkpoint may
// hold (n_layer up to 1024, block_size up to 2^20, ...), before any model is built.
std::string gpt_config_to_json(const GPTConfig& config);
GPTConfig gpt_config_from_json(const std::string& text);

}  // namespace ladder::models
