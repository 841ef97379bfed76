#include "models/gpt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "models/sampling.h"
#include "nn/attention/attention_registry.h"
#include "nn/init.h"
#include "nn/sequential.h"

namespace ladder::models {

namespace {

constexpr float kInitStd = 0.02f;  // GPT-2's std for every weight and embedding

// The output projections of each residual branch start smaller, by 1/sqrt(2 n_layer) (GPT-2): the
// residual stream adds 2 n_layer branches, and this keeps its variance from growing with depth.
float residual_std(const GPTConfig& config) { return kInitStd / std::sqrt(2.0f * static_cast<float>(config.n_layer)); }

nn::LinearOptions linear_options(const GPTConfig& config, float std) {
  return {.bias = config.bias, .init = nn::Init::normal, .std = std};
}

// One index of p drawn with probability p[i] (p sums to 1).
int64_t draw(const std::vector<float>& p, Generator& gen) {
  float u = gen.uniform();
  int64_t last_possible = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    if (u < p[i]) return static_cast<int64_t>(i);
    u -= p[i];
    last_possible = static_cast<int64_t>(i);
  }
  return last_possible;  // u left over by rounding: the last token that had any probability
}

}  // namespace

GPTMLP::GPTMLP(const GPTConfig& config, Generator& gen) : Module("GPTMLP") {
  c_fc = register_module("c_fc", std::make_shared<nn::Linear>(config.n_embd, 4 * config.n_embd,
                                                              linear_options(config, kInitStd), gen));
  c_proj = register_module("c_proj", std::make_shared<nn::Linear>(4 * config.n_embd, config.n_embd,
                                                                  linear_options(config, residual_std(config)), gen));
  if (config.bias) {
    c_fc->bias.fill_(0);
    c_proj->bias.fill_(0);
  }
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout, gen));
}

Tensor GPTMLP::forward(const Tensor& x) {
  const Tensor hidden = gelu(c_fc->forward(x));  // (B,T,4C)
  return dropout->forward(c_proj->forward(hidden));
}

GPTBlock::GPTBlock(const GPTConfig& config, int64_t layer, Generator& gen) : Module("GPTBlock") {
  ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(Shape{config.n_embd}));
  nn::AttentionSettings attention = config.attention;
  attention.layer = layer;
  attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(
                                     config.n_embd, config.n_head,
                                     nn::MultiheadAttentionOptions{
                                         .dropout = config.dropout, .bias = config.bias, .attention = attention},
                                     gen));
  nn::init_normal(attn->in_proj_weight, 0, kInitStd, gen);
  nn::init_normal(attn->out_proj->weight, 0, residual_std(config), gen);
  resid_dropout = register_module("resid_dropout", std::make_shared<nn::Dropout>(config.dropout, gen));
  ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(Shape{config.n_embd}));
  mlp = register_module("mlp", std::make_shared<GPTMLP>(config, gen));
}

Tensor GPTBlock::forward(const Tensor& x, nn::AttentionState* state, nn::AttentionHeads* heads,
                         const Tensor& key_padding_mask) {
  const Tensor h = ln_1->forward(x);
  Tensor attended;
  if (state) {
    attended = attn->forward_step(h, *state);
  } else {
    const nn::MultiheadAttentionOutput out = attn->forward(h, h, h, {.key_padding_mask = key_padding_mask, .causal = true});
    if (heads) *heads = out.heads;
    attended = out.output;
  }
  const Tensor y = x + resid_dropout->forward(attended);
  return y + mlp->forward(ln_2->forward(y));
}

GPTTransformer::GPTTransformer(const GPTConfig& config, Generator& gen) : Module("GPTTransformer") {
  wte = register_module("wte", std::make_shared<nn::Embedding>(config.vocab_size, config.n_embd, kInitStd, gen));
  wpe = register_module("wpe", std::make_shared<nn::Embedding>(config.block_size, config.n_embd, kInitStd, gen));
  drop = register_module("drop", std::make_shared<nn::Dropout>(config.dropout, gen));
  auto blocks = register_module("h", std::make_shared<nn::Sequential>());  // names the blocks h.0, h.1, ...
  for (int64_t i = 0; i < config.n_layer; ++i) {
    h.push_back(std::make_shared<GPTBlock>(config, i, gen));
    blocks->push_back(h.back());
  }
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(Shape{config.n_embd}));
}

GPT::GPT(const GPTConfig& config, Generator& gen) : Module("GPT"), config_(config) {
  if (config.vocab_size <= 0 || config.block_size <= 0 || config.n_layer <= 0 || config.n_head <= 0 || config.n_embd <= 0)
    fail("GPT", "vocab_size, block_size, n_layer, n_head and n_embd must be positive, got ", config.vocab_size, ", ",
         config.block_size, ", ", config.n_layer, ", ", config.n_head, ", ", config.n_embd);
  if (config.n_embd % config.n_head != 0)
    fail("GPT", "n_embd ", config.n_embd, " is not divisible by n_head ", config.n_head,
         "; each head takes n_embd / n_head features, so choose n_head dividing n_embd");
  if (!(config.dropout >= 0 && config.dropout < 1)) fail("GPT", "dropout must be in [0, 1), got ", config.dropout);
  transformer = register_module("transformer", std::make_shared<GPTTransformer>(config, gen));
  lm_head = register_module("lm_head", std::make_shared<nn::Linear>(
                                           config.n_embd, config.vocab_size,
                                           nn::LinearOptions{.bias = false, .init = nn::Init::normal, .std = kInitStd}, gen));
  if (config.tie_weights) lm_head->weight = lm_head->share_parameter("weight", transformer->wte->weight);
}

void GPT::check_ids(const Tensor& idx) const {
  if (idx.dim() != 2 || idx.size(1) == 0)
    fail("GPT", "idx must be (B,T) token ids with T >= 1, got ", shape_str(idx.shape()));
  const int64_t T = idx.size(1);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const float id = idx.data()[i];
    if (!(id >= 0 && id < static_cast<float>(config_.vocab_size)) || id != std::floor(id))
      fail("GPT", "token id ", id, " at (", i / T, ",", i % T, ") is outside the vocabulary [0, ", config_.vocab_size,
           "); ids must be whole numbers below vocab_size");
  }
}

Tensor GPT::run(const Tensor& idx, GPTCache* cache, std::vector<nn::AttentionHeads>* heads,
                const Tensor& key_padding_mask) {
  const int64_t offset = cache ? cache->length() : 0;
  check_ids(idx);
  const int64_t T = idx.size(1);
  if (offset + T > config_.block_size)
    fail("GPT", offset > 0 ? cat("the cache holds ", offset, " positions and ", T, " more make ", offset + T) : cat(T, " tokens"),
         ", longer than block_size ", config_.block_size, " (the positions wpe has learned); feed at most the last ",
         config_.block_size, " tokens");
  const Tensor positions = arange(static_cast<float>(offset), static_cast<float>(offset + T));  // (T)
  Tensor x = transformer->drop->forward(transformer->wte->forward(idx) + transformer->wpe->forward(positions));  // (B,T,C)
  if (cache && cache->layers.empty()) cache->layers.resize(transformer->h.size());
  if (cache && cache->layers.size() != transformer->h.size())
    fail("GPT", "the cache has ", cache->layers.size(), " layers but the model ", transformer->h.size(),
         "; a cache belongs to the model that filled it (clear() it to start again)");
  for (size_t i = 0; i < transformer->h.size(); ++i) {
    if (cache && !cache->layers[i]) cache->layers[i] = transformer->h[i]->attn->start_state();
    nn::AttentionHeads seen;
    x = transformer->h[i]->forward(x, cache ? cache->layers[i].get() : nullptr, heads ? &seen : nullptr, key_padding_mask);
    if (heads) heads->push_back(seen);
  }
  return lm_head->forward(transformer->ln_f->forward(x));  // (B,T,V)
}

Tensor GPT::forward(const Tensor& idx) { return run(idx, nullptr, nullptr); }

Tensor GPT::forward(const Tensor& idx, const Tensor& key_padding_mask) {
  return run(idx, nullptr, nullptr, key_padding_mask);
}

Tensor GPT::loss(const data::Batch& batch) { return cross_entropy(forward(batch.x, batch.key_padding_mask), batch.y); }

GPTForward GPT::forward_with_heads(const Tensor& idx) {
  GPTForward out;
  out.logits = run(idx, nullptr, &out.heads);
  return out;
}

Tensor GPT::forward_cached(const Tensor& idx, GPTCache& cache) { return run(idx, &cache, nullptr); }

Tensor GPT::generate(const Tensor& prompt, int64_t max_new_tokens, const GenerateOptions& options, Generator& gen) {
  check_generate_options(options, "GPT::generate");
  if (max_new_tokens < 0) fail("GPT::generate", "max_new_tokens must be >= 0, got ", max_new_tokens);
  check_ids(prompt);  // a prompt longer than block_size is cropped below
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(*this);
  const int64_t B = prompt.size(0), V = config_.vocab_size, block = config_.block_size;
  Tensor seq = prompt;
  GPTCache cache;
  int64_t start = 0;  // with the cache: the position in seq of the first token the cache holds
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    const int64_t len = seq.size(1);
    Tensor logits;  // (B,T,V) of the tokens fed in this step
    if (!options.use_cache) {
      const int64_t context = std::min(len, block);
      logits = forward(narrow(seq, 1, len - context, context));
    } else {
      if (len - start > block) {  // the window would pass block_size: start it again
        start = len - (cache.length() == 0 ? block : std::max<int64_t>(1, block / 2));
        cache.clear();
      }
      const int64_t fed = start + cache.length();
      logits = forward_cached(narrow(seq, 1, fed, len - fed), cache);
    }
    const Tensor last = reshape(narrow(logits, 1, logits.size(1) - 1, 1), {B, V});
    std::vector<float> next(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b)
      next[static_cast<size_t>(b)] = static_cast<float>(draw(next_token_distribution(last.data() + b * V, V, options), gen));
    seq = concat({seq, tensor(next, {B, 1})}, 1);
  }
  return seq;
}

std::string GPT::describe() const {
  return cat("vocab_size=", config_.vocab_size, ", block_size=", config_.block_size, ", n_layer=", config_.n_layer,
             ", n_head=", config_.n_head, ", n_embd=", config_.n_embd, ", dropout=", config_.dropout,
             ", bias=", config_.bias ? "true" : "false", ", tie_weights=", config_.tie_weights ? "true" : "false",
             nn::is_default_kind(config_.attention.kind) ? "" : ", attention=" + config_.attention.kind_name());
}

namespace {

// The saved fields of a config, each named once for writing and for reading: visit(name, field).
template <class Config, class Visit>
void config_fields(Config& c, Visit&& visit) {
  visit("vocab_size", c.vocab_size), visit("block_size", c.block_size), visit("n_layer", c.n_layer);
  visit("n_head", c.n_head), visit("n_embd", c.n_embd), visit("dropout", c.dropout), visit("bias", c.bias);
  visit("tie_weights", c.tie_weights);
}

// The largest sizes a checkpoint's config may name: far above any lesson's flags, far below what
// would build for minutes or ask for tens of GB (a damaged or crafted file).
void check_config_limits(const GPTConfig& c) {
  for (const auto& [name, value, most] : {std::tuple{"vocab_size", c.vocab_size, int64_t{1} << 24},
                                          std::tuple{"block_size", c.block_size, int64_t{1} << 20},
                                          std::tuple{"n_layer", c.n_layer, int64_t{1024}}, std::tuple{"n_head", c.n_head, int64_t{1024}},
                                          std::tuple{"n_embd", c.n_embd, int64_t{1} << 16}})
    if (value < 1 || value > most)
      fail("gpt_config_from_json", name, " is ", value, ", outside 1 to ", most, "; the config must be the JSON gpt_config_to_json writes");
}

// The attention as its kind, its seed and every setting its kind registered (nn/attention/attention_registry.h),
// each under its checkpoint key.
nlohmann::json attention_to_json(const nn::AttentionSettings& a) {
  nlohmann::json json{{"kind", a.kind_name()}, {"seed", a.seed}};
  for (const nn::KindSetting& setting : nn::registered_kind(a.kind).settings)
    std::visit([&](const auto& value) { json[setting.key] = value; }, setting.get(a.kind));
  return json;
}

// `field` names what is being read, for the message when reading fails. A setting the file lacks
// (saved before the setting existed) keeps its default; fields of other kinds (older files wrote
// every kind's) are not read.
nn::AttentionSettings attention_from_json(const nlohmann::json& json, std::string& field) {
  nn::AttentionSettings a;
  field = "attention.kind";
  const nn::KindDescription& kind = nn::registered_kind(json.at("kind").get<std::string>());
  a.kind = kind.defaults;
  field = "attention.seed";
  a.seed = json.at("seed").get<uint64_t>();
  for (const nn::KindSetting& setting : kind.settings) {
    if (!json.contains(setting.key)) continue;
    field = "attention." + setting.key;
    setting.set(a.kind, std::visit(
                            [&](const auto& default_value) -> nn::SettingValue {
                              return json.at(setting.key).get<std::decay_t<decltype(default_value)>>();
                            },
                            setting.get(kind.defaults)));
  }
  return a;
}

}  // namespace

std::string gpt_config_to_json(const GPTConfig& config) {
  nlohmann::json json;
  config_fields(config, [&json](const char* name, const auto& value) { json[name] = value; });
  json["attention"] = attention_to_json(config.attention);
  return json.dump();
}

GPTConfig gpt_config_from_json(const std::string& text) {
  std::string field = "the text";  // what was being read when reading failed
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    GPTConfig config;
    config_fields(config, [&]<class T>(const char* name, T& value) {
      field = name;
      value = json.at(name).get<T>();
    });
    if (json.contains("attention")) config.attention = attention_from_json(json.at("attention"), field);
    check_config_limits(config);
    return config;
  } catch (const nlohmann::json::exception& e) {
    fail("gpt_config_from_json", "cannot read ", field, " of the GPT config: ", e.what(),
         "; the config must be the JSON gpt_config_to_json writes");
  }
}

void check_generate_options(const GenerateOptions& options, const char* op) {
  if (!(options.temperature > 0))
    fail(op, "temperature must be > 0, got ", options.temperature, "; for greedy decoding use top_k = 1");
  if (options.top_k < 0) fail(op, "top_k must be >= 0 (0 keeps every token), got ", options.top_k);
  if (!(options.top_p > 0 && options.top_p <= 1))
    fail(op, "top_p must be in (0, 1] (1 keeps every token), got ", options.top_p);
}

std::vector<float> next_token_distribution(const float* logits, int64_t V, const GenerateOptions& options) {
  check_generate_options(options, "next_token_distribution");
  check_finite_logits("next_token_distribution", logits, V);
  std::vector<bool> allowed(static_cast<size_t>(V), true);
  for (const int64_t id : options.never_sample) {
    if (id < 0 || id >= V) fail("next_token_distribution", "never_sample holds id ", id, ", outside the vocabulary [0, ", V, ")");
    allowed[id] = false;
  }
  if (std::find(allowed.begin(), allowed.end(), true) == allowed.end())
    fail("next_token_distribution", "never_sample holds all ", V, " ids: nothing is left to sample");
  // The largest allowed logit is subtracted: with a tiny temperature a larger excluded one would
  // make every allowed exp() underflow to 0.
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < V; ++i)
    if (allowed[i]) top = std::max(top, logits[i]);
  std::vector<double> p(static_cast<size_t>(V), 0.0);
  for (int64_t i = 0; i < V; ++i)
    if (allowed[i]) p[i] = std::exp((static_cast<double>(logits[i]) - top) / options.temperature);
  std::vector<int64_t> order(static_cast<size_t>(V));  // token ids, most likely first
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
  int64_t keep = options.top_k > 0 ? std::min(options.top_k, V) : V;
  double kept = 0;  // the mass of the top_k tokens: top_p is a share of it
  for (int64_t r = 0; r < keep; ++r) kept += p[order[r]];
  if (options.top_p < 1) {
    double reached = 0;
    for (int64_t r = 0; r < keep; ++r) {
      reached += p[order[r]];
      if (reached >= options.top_p * kept) {
        keep = r + 1;
        kept = reached;
        break;
      }
    }
  }
  std::vector<float> out(static_cast<size_t>(V), 0.0f);
  for (int64_t r = 0; r < keep; ++r) out[order[r]] = static_cast<float>(p[order[r]] / kept);
  return out;
}

}  // namespace ladder::models
