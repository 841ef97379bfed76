// Lesson 11: a GPT, a decoder-only Transformer, as a character language model.
//
//  1. Training: nanoGPT's CPU configuration (4 layers, 4 heads, 128 wide, context 64, batch 12) on
//     random windows of a text stream, with AdamW (no decay on biases, norms and embeddings), a
//     cosine learning rate after a linear warmup, and the gradient clipped to norm 1;
//  2. samples at temperatures 0.5, 1.0 and 1.5, and the checkpoint that `--load` samples from later;
//  3. generation speed with and without the KV cache against the context length;
//  4. the attention of every head of the first and the last layer over a validation passage.
// The model is models/gpt.h; the note that goes with it: docs/11_gpt.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "io/safetensors.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/progress.h"
#include "lessons/common/run.h"
#include "models/gpt.h"
#include "optim/adam.h"
#include "optim/schedule.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "11_gpt";
// As many steps as fit in about 2 minutes on 2 cores, the rest of the run taking a few seconds;
// nanoGPT's CPU example runs 2000. Re-tune it when a training step gets faster.
constexpr int64_t kDefaultSteps = 1500;

struct TrainSettings {
  int64_t warmup, eval_every;
  float weight_decay;
};

struct Corpus {
  data::Tokenizer tokenizer;
  std::vector<int> train_ids, val_ids;
  std::string source;
  data::DroppedUnknown dropped;  // validation characters not in the training text
};

// The text, read before anything runs: a bad --data or --val, or a text too short for --batch and
// --block, fails at once.
Corpus load_corpus(const lessons::CommonFlags& flags, const lessons::TextFlags& text, int64_t block) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = false, .seed = flags.seed});
  if (flags.quick) data::keep_first(lines, 250, 60);
  Corpus c{data::char_tokenizer(lines, false), {}, {}, lines.train_source, {}};
  data::EncodedText ids = data::encode_text(lines, c.tokenizer, false);
  c.dropped = data::drop_unknown(ids.val);
  c.train_ids = std::move(ids.train[0]);
  c.val_ids = std::move(ids.val[0]);
  lessons::check_windows_fit(kLesson, c.train_ids, "the training text", flags.batch, block,
                             "give a smaller --batch or --block, or a longer --data");
  lessons::check_windows_fit(kLesson, c.val_ids, "the validation text", 1, block, "give a smaller --block or a longer --val");
  return c;
}

// The prompt as ids. Every character must be in the vocabulary (an unknown one would be fed as
// <unk>, which the model never saw). An empty prompt starts from a newline, or from the first
// character of the vocabulary when the text had no newline.
std::vector<int> prompt_ids(const data::Tokenizer& tokenizer, const std::string& prompt) {
  if (prompt.empty()) {
    const int newline = tokenizer.id("\n");
    return {newline != data::Tokenizer::kUnk ? newline : data::Tokenizer::kUnk + 1};
  }
  std::string unknown;
  for (const std::string& piece : tokenizer.split(prompt))
    if (tokenizer.id(piece) == data::Tokenizer::kUnk && unknown.find(piece) == std::string::npos) unknown += piece;
  if (!unknown.empty())
    fail(kLesson, "--prompt '", prompt, "' has characters the model's vocabulary lacks: '", unknown,
         "'; write the prompt with characters of the training text");
  return tokenizer.encode(prompt);
}

// The tokenizer's special tokens (<pad>, <bos>, <eos>, <unk>) are no characters of the text: the
// model never saw one as a next character, and whatever probability it gives them is an accident
// of its weights, so samples never draw them.
std::vector<int64_t> special_ids() {
  return {data::Tokenizer::kPad, data::Tokenizer::kBos, data::Tokenizer::kEos, data::Tokenizer::kUnk};
}

std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt, int64_t length,
                        float temperature, Generator& gen) {
  const Tensor ids = tensor(std::vector<float>(prompt.begin(), prompt.end()), {1, static_cast<int64_t>(prompt.size())});
  const std::vector<float> out =
      model.generate(ids, length, {.temperature = temperature, .never_sample = special_ids()}, gen).to_vector();
  return tokenizer.decode(std::vector<int>(out.begin(), out.end()));
}

// The mean cross-entropy over up to `max_windows` consecutive windows of `block` tokens of the
// stream, each predicting the token after every position; in eval mode, without a graph.
double stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t block, int64_t batch, int64_t max_windows) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const int64_t windows = std::min<int64_t>(max_windows, (static_cast<int64_t>(ids.size()) - 1) / block);
  double total = 0;
  for (int64_t first = 0; first < windows; first += batch) {
    const int64_t rows = std::min(batch, windows - first);
    std::vector<float> x, y;
    for (int64_t r = 0; r < rows; ++r) {
      const auto start = ids.begin() + (first + r) * block;
      x.insert(x.end(), start, start + block);
      y.insert(y.end(), start + 1, start + block + 1);
    }
    const Tensor loss = cross_entropy(model.forward(tensor(x, {rows, block})), tensor(y, {rows, block}));
    total += loss.item() * static_cast<double>(rows);
  }
  return total / static_cast<double>(windows);
}

struct Trained {
  double train_loss = 0, val_loss = 0;
};

// ---- 1. training ----
Trained train(lessons::Run& run, const lessons::CommonFlags& flags, models::GPT& model, const Corpus& corpus, const TrainSettings& s) {
  const int64_t block = model.config().block_size;
  const int64_t eval_windows = flags.quick ? 8 : 48;
  // nanoGPT's betas for its character models: beta2 0.99, as the batches are small and the steps few.
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), s.weight_decay), {.lr = flags.lr, .beta2 = 0.99f});
  const optim::Schedule schedule = optim::cosine_lr(flags.lr, s.warmup, flags.steps, flags.lr / 10);
  const data::StreamBatcher batcher(corpus.train_ids, block);
  Generator gen(flags.seed + 1);

  lessons::CsvWriter metrics(run.file("metrics.csv"),
                             {"step", "train_loss", "val_loss", "train_ppl", "val_ppl", "lr", "tokens_per_s", "grad_norm"});
  lessons::Progress progress(flags.steps, "tok", /*show_ppl=*/true);
  lessons::Series train_curve{"train"}, val_curve{"validation"};
  const auto start = std::chrono::steady_clock::now();
  Trained result;
  double recent = 0;
  int64_t recent_steps = 0;
  model.train();
  for (int64_t step = 1; step <= flags.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::Batch b = batcher.sample(flags.batch, gen);  // x, y (B,T)
    const Tensor loss = cross_entropy(model.forward(b.x), b.y);
    adamw.zero_grad();
    loss.backward();
    const float norm = optim::clip_grad_norm(model.parameters(), 1.0f);
    adamw.step();
    const double value = loss.item();
    run.check_loss(step, value, lessons::LossKind::cross_entropy);
    recent += value, ++recent_steps;
    progress.update(step, value, step * flags.batch * block);
    if (step % s.eval_every != 0 && step != flags.steps) continue;
    result.train_loss = recent / static_cast<double>(recent_steps);
    recent = 0, recent_steps = 0;
    result.val_loss = stream_loss(model, corpus.val_ids, block, flags.batch, eval_windows);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics.row({static_cast<double>(step), result.train_loss, result.val_loss, std::exp(result.train_loss), std::exp(result.val_loss),
                 adamw.lr(), static_cast<double>(step * flags.batch * block) / seconds, norm});
    train_curve.x.push_back(static_cast<double>(step)), train_curve.y.push_back(std::exp(result.train_loss));
    val_curve.x.push_back(static_cast<double>(step)), val_curve.y.push_back(std::exp(result.val_loss));
  }
  progress.finish();
  model.eval();
  std::printf("validation perplexity %.2f (%.4f nats per character, over %lld windows of %lld)\n", std::exp(result.val_loss),
              result.val_loss, static_cast<long long>(std::min<int64_t>(eval_windows, (static_cast<int64_t>(corpus.val_ids.size()) - 1) / block)),
              static_cast<long long>(block));
  run.wrote(lessons::save_line_chart(run.path("perplexity"), {"GPT: perplexity", "step", "perplexity (log scale)",
                                                              {train_curve, val_curve}, /*log_y=*/true}));
  return result;
}

// ---- 2. samples and the checkpoint ----
void samples(lessons::Run& run, const lessons::CommonFlags& flags, models::GPT& model, const data::Tokenizer& tokenizer,
             const std::vector<int>& prompt) {
  std::printf("\n== 2. samples ==\n");
  const int64_t length = flags.quick ? 80 : 300;
  std::FILE* out = std::fopen(run.file("samples.txt").c_str(), "w");
  if (!out) fail(kLesson, "cannot write samples.txt");
  for (const float temperature : {0.5f, 1.0f, 1.5f}) {
    Generator gen(flags.seed + 2);
    const std::string text = sample_text(model, tokenizer, prompt, length, temperature, gen);
    std::printf("-- temperature %.1f:\n%s\n", temperature, text.c_str());
    std::fprintf(out, "-- temperature %.1f:\n%s\n", temperature, text.c_str());
  }
  std::fclose(out);
  const models::GPTConfig& c = model.config();
  const nlohmann::json config = {{"vocab_size", c.vocab_size}, {"block_size", c.block_size}, {"n_layer", c.n_layer},
                                 {"n_head", c.n_head},         {"n_embd", c.n_embd},         {"dropout", c.dropout},
                                 {"bias", c.bias},             {"tie_weights", c.tie_weights}};
  const std::string file = run.save_checkpoint(model, {{"lesson", kLesson}, {"tokenizer", tokenizer.to_json()}, {"gpt_config", config.dump()}});
  std::printf("saved with its tokenizer and settings: sample from it with --load %s --sample 500 --prompt \"...\"\n", file.c_str());
}

// ---- 3. generation speed ----
// Tokens per second while generating a sequence of each context length from one token.
// Without the cache each new token runs the model over the whole sequence so far; with it, over
// the new token alone, its keys and values appended to those kept.
void generation_speed(lessons::Run& run, const lessons::CommonFlags& flags, models::GPT& model, int first_token,
                      nlohmann::ordered_json& metrics) {
  std::printf("\n== 3. generation speed with and without the KV cache ==\n");
  std::printf("tokens per second while generating a sequence of each length from one token\n");
  std::printf("%10s %16s %16s %10s\n", "context", "cached tok/s", "uncached tok/s", "speed-up");
  lessons::CsvWriter csv(run.file("generation_speed.csv"), {"context", "cached_tokens_per_s", "uncached_tokens_per_s"});
  lessons::Series cached{"with the KV cache"}, uncached{"without"};
  const int64_t block = model.config().block_size;
  for (int64_t context = std::min<int64_t>(8, block);; context = std::min(2 * context, block)) {
    double speed[2];
    for (const bool use_cache : {true, false}) {
      Generator gen(flags.seed + 3);
      const int64_t repeats = std::max<int64_t>(1, 256 / context);  // about the same number of tokens at every length
      const auto start = std::chrono::steady_clock::now();
      for (int64_t r = 0; r < repeats; ++r) model.generate(full({1, 1}, static_cast<float>(first_token)), context - 1, {.use_cache = use_cache}, gen);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      speed[use_cache ? 0 : 1] = static_cast<double>(repeats * (context - 1)) / seconds;
    }
    std::printf("%10lld %16.0f %16.0f %9.1fx\n", static_cast<long long>(context), speed[0], speed[1], speed[0] / speed[1]);
    csv.row({static_cast<double>(context), speed[0], speed[1]});
    cached.x.push_back(static_cast<double>(context)), cached.y.push_back(speed[0]);
    uncached.x.push_back(static_cast<double>(context)), uncached.y.push_back(speed[1]);
    if (context == block) {
      metrics["cached_tokens_per_s"] = speed[0];
      metrics["uncached_tokens_per_s"] = speed[1];
      break;
    }
  }
  run.wrote(lessons::save_line_chart(run.path("generation_speed"),
                                     {"Generation speed", "context length (tokens)", "tokens per second", {cached, uncached}}));
}

// ---- 4. attention maps ----
// The per-head attention weights (H,T,T) of layers `wanted` over ids (1,T): the blocks run one by
// one, and each wanted layer's attention is run again on its input asking for the weights.
std::vector<Tensor> attention_of(models::GPT& model, const Tensor& ids, const std::vector<size_t>& wanted) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  models::GPTTransformer& t = *model.transformer;
  Tensor x = t.wte->forward(ids) + t.wpe->forward(arange(static_cast<float>(ids.size(1))));  // (1,T,C)
  std::vector<Tensor> maps;
  for (size_t layer = 0; layer < t.h.size(); ++layer) {
    if (std::find(wanted.begin(), wanted.end(), layer) != wanted.end()) {
      const Tensor h = t.h[layer]->ln_1->forward(x);
      maps.push_back(squeeze(t.h[layer]->attn->forward(h, h, h, {.causal = true, .weights = nn::AttentionWeights::per_head}).weights, 0));
    }
    x = t.h[layer]->forward(x);
  }
  return maps;
}

void attention_maps(lessons::Run& run, models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& val_ids) {
  const int64_t T = std::min<int64_t>(model.config().block_size, 48);
  std::printf("\n== 4. attention of every head over the first %lld validation characters ==\n", static_cast<long long>(T));
  const std::vector<int> passage(val_ids.begin(), val_ids.begin() + T);
  std::vector<std::string> labels;
  for (const int id : passage) labels.push_back(tokenizer.token(id));  // the heatmap shows a space as ␣, a newline as ⏎
  const size_t last = model.transformer->h.size() - 1;
  const std::vector<size_t> layers = last == 0 ? std::vector<size_t>{0} : std::vector<size_t>{0, last};
  const std::vector<Tensor> maps = attention_of(model, tensor(std::vector<float>(passage.begin(), passage.end()), {1, T}), layers);
  for (size_t m = 0; m < maps.size(); ++m)
    for (int64_t head = 0; head < maps[m].size(0); ++head) {
      lessons::Heatmap map{cat("Layer ", layers[m] + 1, ", head ", head + 1, ": attention over a validation passage"),
                           "key (the character attended to)", "query (the character predicting the next)", "weight"};
      const float* w = maps[m].data() + head * T * T;
      for (int64_t i = 0; i < T; ++i) map.values.emplace_back(w + i * T, w + (i + 1) * T);
      map.row_labels = map.col_labels = labels;
      map.scale_min = 0, map.scale_max = 1;  // every map on one scale, so that heads can be compared
      run.wrote(lessons::save_heatmap(run.path(cat("attention_layer", layers[m] + 1, "_head", head + 1)), map));
    }
  std::printf("each row: one position; each column: a position it may see (the causal mask hides the future); a row sums to 1\n");
}

// With --load the model, its settings and its tokenizer come from the checkpoint, and nothing is
// trained or written: a flag that would change any of that is refused rather than ignored.
void refuse_training_flags(const lessons::LessonCli& cli) {
  std::string given;
  for (const char* flag : {"--steps", "--lr", "--batch", "--layers", "--heads", "--embd", "--dropout", "--weight-decay", "--warmup",
                           "--eval-every", "--data", "--val", "--lines", "--out", "--quick"})
    if (cli.given(flag)) given += cat(given.empty() ? "" : ", ", flag);
  if (!given.empty())
    fail(kLesson, "--load samples from a trained model, so ", given,
         " would be ignored (the model's settings come from the checkpoint, and nothing is trained); leave them out, "
         "or train without --load");
}

// `--load FILE`: samples from a checkpoint that this lesson saved, without training. A `block`
// shorter than the checkpoint's block_size keeps the first `block` learned positions, the only
// ones the model then uses: its samples see at most `block` characters of context.
void sample_from(const std::string& file, std::optional<int64_t> block, const std::string& prompt, int64_t length,
                 float temperature, uint64_t seed) {
  io::TensorFile checkpoint = io::load_safetensors(file);
  const std::map<std::string, std::string>& metadata = checkpoint.metadata;
  const auto lesson = metadata.find("lesson");
  if (lesson == metadata.end() || lesson->second != kLesson || !metadata.count("gpt_config") || !metadata.count("tokenizer"))
    fail(kLesson, "--load ", file, " is a checkpoint of ", lesson == metadata.end() ? "an unknown lesson" : "lesson " + lesson->second,
         ", not a GPT of lesson 11 (its metadata needs lesson 11_gpt, gpt_config and tokenizer); give the model.safetensors a run "
         "of this lesson wrote");
  const data::Tokenizer tokenizer = data::Tokenizer::from_json(metadata.at("tokenizer"));
  const nlohmann::json c = nlohmann::json::parse(metadata.at("gpt_config"));
  const int64_t learned = c.at("block_size").get<int64_t>(), context = block.value_or(learned);
  if (context > learned)
    fail(kLesson, "--block ", context, " is longer than the ", learned, " positions the model of ", file,
         " learned (its block_size); give --block ", learned, " or less, or leave --block out");
  const models::GPTConfig config{.vocab_size = c.at("vocab_size").get<int64_t>(),
                                 .block_size = context,
                                 .n_layer = c.at("n_layer").get<int64_t>(),
                                 .n_head = c.at("n_head").get<int64_t>(),
                                 .n_embd = c.at("n_embd").get<int64_t>(),
                                 .dropout = c.at("dropout").get<float>(),
                                 .bias = c.at("bias").get<bool>(),
                                 .tie_weights = c.at("tie_weights").get<bool>()};
  const auto wpe = checkpoint.tensors.find("transformer.wpe.weight");  // (learned, n_embd)
  if (context < learned && wpe != checkpoint.tensors.end()) wpe->second = narrow(wpe->second, 0, 0, context);
  models::GPT model(config);
  model.load_state_dict(checkpoint.tensors);
  const std::vector<int> ids = prompt_ids(tokenizer, prompt);
  std::printf("%s: a GPT of %s parameters, %lld layers, %lld heads, %lld wide, context %s\n", file.c_str(),
              nn::with_commas(model.num_parameters()).c_str(), static_cast<long long>(config.n_layer),
              static_cast<long long>(config.n_head), static_cast<long long>(config.n_embd),
              (context < learned ? cat(context, " of the ", learned, " it learned") : cat(learned)).c_str());
  Generator gen(seed);
  std::printf("%s\n", sample_text(model, tokenizer, ids, length, temperature, gen).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson, "Lesson 11: a GPT (decoder-only Transformer) as a character language model, with a KV cache.",
                           {.steps = kDefaultSteps, .lr = 1e-3f, .batch = 12});
    lessons::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig config{.block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128, .dropout = 0};
    TrainSettings s{100, 100, 0.1f};
    std::string load, prompt;
    int64_t sample_length = 500;
    float temperature = 1.0f;
    cli.option("--layers", config.n_layer, "Transformer blocks (nanoGPT: n_layer)", {1, 48});
    cli.option("--heads", config.n_head, "attention heads per block, dividing --embd (n_head)", {1, 64});
    cli.option("--embd", config.n_embd, "width of the residual stream (n_embd)", {1, 4096});
    cli.option("--block", config.block_size,
               "context length: the positions the model learns (block_size); with --load, at most the checkpoint's", {1, 4096});
    cli.option("--dropout", config.dropout, "dropout on embeddings, attention weights and residual branches", {0.0f, 0.9f});
    cli.option("--weight-decay", s.weight_decay, "AdamW's decoupled weight decay, on the weight matrices only", {0.0f, 1.0f});
    cli.option("--warmup", s.warmup, "steps of linear learning-rate warmup before the cosine decay", lessons::non_negative);
    cli.option("--eval-every", s.eval_every, "steps between validation losses", lessons::positive);
    cli.option("--load", load, "a checkpoint of this lesson to sample from, instead of training");
    cli.option("--sample", sample_length, "with --load: characters to sample", {1, 100000});
    cli.option("--prompt", prompt, "the text samples continue (empty: the start of the validation text; with --load, a newline)");
    cli.option("--temperature", temperature, "with --load: the sampling temperature", {0.01f, 100.0f});
    cli.parse(argc, argv);
    if (text.lines) fail(kLesson, "the GPT reads one character stream; --lines does not apply");
    if (!load.empty()) {
      refuse_training_flags(cli);
      sample_from(load, cli.given("--block") ? std::optional(config.block_size) : std::nullopt, prompt, sample_length, temperature,
                  cli.common.seed);
      return;
    }
    for (const char* flag : {"--sample", "--temperature"})
      if (cli.given(flag)) fail(kLesson, flag, " applies to sampling from a checkpoint: give it with --load FILE");
    if (config.n_embd % config.n_head != 0)
      fail(kLesson, "--heads ", config.n_head, " does not divide --embd ", config.n_embd,
           "; each head takes --embd / --heads features: choose --heads dividing --embd");
    if (s.warmup >= cli.common.steps)
      fail(kLesson, "--warmup ", s.warmup, " leaves no step of --steps ", cli.common.steps, " for the cosine decay; give a smaller --warmup");
    if (cli.common.quick) {
      cli.common.steps = std::min<int64_t>(cli.common.steps, 60);
      s.eval_every = std::min<int64_t>(s.eval_every, 10);
      s.warmup = std::min<int64_t>(s.warmup, 10);
    }
    const Corpus corpus = load_corpus(cli.common, text, config.block_size);
    config.vocab_size = corpus.tokenizer.vocab_size();
    // Without --prompt, the samples continue the start of the validation text.
    const std::vector<int> prompt_start =
        prompt.empty() ? std::vector<int>(corpus.val_ids.begin(), corpus.val_ids.begin() + std::min<int64_t>(32, config.block_size))
                       : prompt_ids(corpus.tokenizer, prompt);
    lessons::Run run(cli);

    std::printf("== 1. a character GPT ==\n");
    std::printf("data: %s: %zu training and %zu validation characters, vocabulary %lld\n", corpus.source.c_str(),
                corpus.train_ids.size(), corpus.val_ids.size(), static_cast<long long>(config.vocab_size));
    if (corpus.dropped.unknown > 0) std::printf("%s\n", corpus.dropped.describe("character").c_str());
    Generator init(cli.common.seed);
    models::GPT model(config, init);
    std::printf("%s", model.summary().c_str());
    const Trained trained = train(run, cli.common, model, corpus, s);
    samples(run, cli.common, model, corpus.tokenizer, prompt_start);
    nlohmann::ordered_json metrics = {{"train_loss", trained.train_loss}, {"val_loss", trained.val_loss},
                                      {"val_ppl", std::exp(trained.val_loss)}, {"val_tokens", corpus.dropped.total()},
                                      {"val_unknown_tokens", corpus.dropped.unknown}};
    generation_speed(run, cli.common, model, prompt_start.front(), metrics);
    attention_maps(run, model, corpus.tokenizer, corpus.val_ids);
    run.finish(metrics,
               {{"train_loss", "mean training loss since the last evaluation, nats per character"},
                {"val_loss", "the GPT on windows of the validation text, nats per character"},
                {"val_ppl", "exp(val_loss)"},
                {"val_tokens", "characters of the validation text, known or not"},
                {"val_unknown_tokens", "validation characters not in the training text, left out of val_loss"},
                {"cached_tokens_per_s", "part 3: generating a full context with the KV cache"},
                {"uncached_tokens_per_s", "part 3: the same without it, the whole context run again for every token"}},
               "docs/11_gpt.md; then try --layers 6 --heads 6 --embd 384 --block 256, nanoGPT's Shakespeare model");
  });
}
