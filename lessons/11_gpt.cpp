// Lesson 11: a GPT, a decoder-only Transformer, as a character language model.
//
//  1. Training: nanoGPT's CPU configuration (4 layers, 4 heads, 128 wide, context 64, batch 12) on
//     random windows of a text stream, or with --lines on random lines, each framed <bos> line <eos>
//     and padded (makemore's way). The loop is `train` below: each step sets the learning rate (a
//     linear warmup, then a decay of --decay's shape, cosine by default) and takes optim::train_step
//     with AdamW (no decay on biases, norms and embeddings) and the gradient clipped to norm 1 (--clip);
//  2. samples at temperatures 0.5, 1.0 and 1.5 (with --lines, whole lines), and the checkpoint that
//     `--load` samples from later, the lesson's second program (lessons/11_gpt/sampling.h);
//  3. generation speed with and without the KV cache against the context length;
//  4. the attention of every head of the first and the last layer over a validation passage.
// --attention chooses every block's attention, any attention kind (harness/attention_flags.h);
// the rest of the lesson does not change with it.
// The model is models/gpt.h, what lessons 11, 12, 14 and 16 share lessons/char_gpt/char_gpt.h; the note
// that goes with it: docs/11_gpt.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "data/tokenizer.h"
#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/model_printout.h"
#include "harness/run.h"
#include "harness/timing.h"
#include "harness/tracker.h"
#include "lessons/11_gpt/sampling.h"
#include "lessons/char_gpt/char_gpt.h"
#include "lessons/memory/model_memory.h"
#include "models/gpt.h"
#include "models/gpt_text.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/train_step.h"
#include "plot/plot.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "11_gpt";
// nanoGPT's CPU example: 2000 steps, about a minute for the whole run on an idle 2-core machine.
constexpr int64_t kDefaultSteps = 2000;

// ---- 1. the text and the training loop ----
// What the model reads: the text's characters (or its lines) and the vocabulary they make; with
// --lines, the context, fitted to the longest line unless --context was given.
void describe_data(const data::CharCorpus& corpus, const models::GPTConfig& config, bool context_given) {
  if (corpus.lines)
    std::printf("data: %s: %zu training and %zu validation lines, vocabulary %lld; context %lld%s\n%s", corpus.source.c_str(),
                corpus.train_lines.size(), corpus.val_lines.size(), static_cast<long long>(config.vocab_size),
                static_cast<long long>(config.block_size), context_given ? "" : ": the longest line and its start marker",
                corpus.empty_lines ? cat(corpus.empty_lines, " empty lines skipped\n").c_str() : "");
  else
    std::printf("data: %s: %zu training and %zu validation characters, vocabulary %lld\n", corpus.source.c_str(),
                corpus.train_ids.size(), corpus.val_ids.size(), static_cast<long long>(config.vocab_size));
  if (corpus.dropped.unknown > 0) std::printf("%s\n", corpus.dropped.describe("character").c_str());
}

// The training loop: --steps batches of random windows of the training text (or of random lines),
// the rate warmed up then decayed, AdamW, the gradient clipped to --clip; the validation loss over
// the whole validation text every --eval-every steps.
harness::Tracker train(harness::Run& run, const harness::CommonFlags& flags, models::GPT& model,
                       const data::CharCorpus& corpus, const lessons::GPTTraining& training) {
  const int64_t context = model.config().block_size;
  optim::AdamW adamw = training.optimizer(model, flags.lr);
  const optim::Schedule lr = training.schedule.schedule(flags.lr, flags.steps);
  const data::TrainingBatches batches_of(corpus, context);
  Generator batches(flags.seed + 1);
  harness::Tracker tracker = training.tracker(run, flags, context, "metrics.csv");
  model.train();
  for (int64_t step = tracker.resume({model, adamw, {&batches}}); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
    adamw.set_lr(lr(step - 1));
    const data::Batch batch = batches_of.sample(flags.batch, batches);  // x, y (B,T)
    tracker.step(step, optim::train_step(model, adamw, batch, training.clip), adamw.lr());
    if (tracker.evaluation_due(step)) tracker.evaluated(step, lessons::validation_figures(model, corpus));
  }
  tracker.finish();
  return tracker;
}

// Prints the last validation loss and draws the training and validation perplexity against step.
void report_perplexity(harness::Run& run, const harness::Tracker& tracker, const data::CharCorpus& corpus, int64_t context) {
  const double val_loss = tracker.last("val_loss");
  std::printf("validation perplexity %.2f (%.4f nats per character, over %s)\n", std::exp(val_loss), val_loss,
              lessons::validation_extent(corpus, context).c_str());
  plot::Series train_curve = tracker.curve("train_loss"), val_curve = tracker.curve("val_ppl");
  for (double& loss : train_curve.y) loss = std::exp(loss);  // perplexity
  val_curve.name = "validation";
  run.wrote(plot::save_line_chart(run.path("perplexity"), {"GPT: perplexity", "step", "perplexity (log scale)",
                                                              {train_curve, val_curve}, /*log_y=*/true}));
}

// ---- 2. samples and the checkpoint ----
void samples(harness::Run& run, const harness::CommonFlags& flags, models::GPT& model, const data::CharCorpus& corpus,
             const std::vector<int>& prompt) {
  std::printf("\n== 2. samples ==\n");
  const int64_t length = flags.quick ? 80 : 300, lines = flags.quick ? 5 : 10;
  std::FILE* out = std::fopen(run.file("samples.txt").c_str(), "w");
  if (!out) fail(kLesson, "cannot write samples.txt");
  for (const float temperature : {0.5f, 1.0f, 1.5f}) {
    Generator gen(flags.seed + 2);
    const std::string text = corpus.lines ? lessons::line_samples(model, corpus, prompt, lines, temperature, gen)
                                          : models::sample_text(model, corpus.tokenizer, prompt, length, temperature, gen);
    std::printf("-- temperature %.1f:\n%s\n", temperature, text.c_str());
    std::fprintf(out, "-- temperature %.1f:\n%s\n", temperature, text.c_str());
  }
  std::fclose(out);
  const std::string file = lessons::save_for_sampling(run, model, corpus);
  std::printf("saved with its tokenizer and settings (the attention kind too): sample from it with --load %s --sample-chars 500 --prompt \"...\"\n",
              file.c_str());
}

// ---- 3. generation speed ----
constexpr int kGenerationRepeats = 9;  // sequences timed at each length, the median kept
// Tokens per second while generating a sequence of each context length from one token.
// Without the cache each new token runs the model over the whole sequence so far; with it, over
// the new token alone, its keys and values appended to those kept.
void generation_speed(harness::Run& run, const harness::CommonFlags& flags, models::GPT& model, int first_token,
                      nlohmann::ordered_json& metrics) {
  std::printf("\n== 3. generation speed with and without the KV cache ==\n");
  if (model.config().attention.kind_name() == nn::LinearAttention::kName)
    std::printf("(linear attention carries a fixed-size sum instead of keys and values: the cache here is that state)\n");
  std::printf("tokens per second while generating a sequence of each length from one token: the median of %d\n"
              "sequences after one to warm up, and (+-) how far the fastest and the slowest were apart, against it\n",
              kGenerationRepeats);
  std::printf("%10s %16s %7s %16s %7s %10s\n", "context", "cached tok/s", "+-", "uncached tok/s", "+-", "speed-up");
  harness::CsvWriter csv(run.file("generation_speed.csv"),
                         {"context", "cached_tokens_per_s", "cached_spread", "uncached_tokens_per_s", "uncached_spread"});
  plot::Series cached{"with the KV cache"}, uncached{"without"};
  const int64_t full_context = model.config().block_size;
  for (int64_t context = std::min<int64_t>(8, full_context);; context = std::min(2 * context, full_context)) {
    double speed[2], spread[2];
    for (const bool use_cache : {true, false}) {
      Generator gen(flags.seed + 3);
      const harness::Timed timed = harness::time_calls(
          [&] { model.generate(full({1, 1}, static_cast<float>(first_token)), context - 1, {.use_cache = use_cache}, gen); },
          kGenerationRepeats);
      speed[use_cache ? 0 : 1] = static_cast<double>(context - 1) / (timed.median_ms / 1000);
      spread[use_cache ? 0 : 1] = timed.spread();
    }
    std::printf("%10lld %16.0f %6.0f%% %16.0f %6.0f%% %9.1fx\n", static_cast<long long>(context), speed[0], 100 * spread[0], speed[1],
                100 * spread[1], speed[0] / speed[1]);
    csv.row({static_cast<double>(context), speed[0], spread[0], speed[1], spread[1]});
    cached.x.push_back(static_cast<double>(context)), cached.y.push_back(speed[0]);
    uncached.x.push_back(static_cast<double>(context)), uncached.y.push_back(speed[1]);
    if (context == full_context) {
      metrics["cached_tokens_per_s"] = speed[0];
      metrics["uncached_tokens_per_s"] = speed[1];
      break;
    }
  }
  run.wrote(plot::save_line_chart(run.path("generation_speed"),
                                     {"Generation speed", "context length (tokens)", "tokens per second", {cached, uncached}}));
}

// ---- 4. attention maps ----
// The per-head attention weights (H,T,T) of layers `wanted` over ids (1,T): the matrix each wanted
// block's kind implies for the q and k it attended with in the model's forward.
std::vector<Tensor> attention_of(models::GPT& model, const Tensor& ids, const std::vector<size_t>& wanted) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const models::GPTForward seen = model.forward_with_heads(ids);
  std::vector<Tensor> maps;
  for (const size_t layer : wanted) {
    const nn::AttentionHeads& heads = seen.heads[layer];  // (1,H,T,D)
    nn::AttentionKind& kind = *model.transformer->h[layer]->attn->attention_kind;
    maps.push_back(squeeze(kind.implied_weights(heads.q, heads.k, {.causal = true}), 0));
  }
  return maps;
}

// The maps show the matrix each kind implies (AttentionKind::implied_weights): linear attention
// never builds it when it trains, BigBird leaves the blocks out of its pattern at zero.
// The passage: the first 48 validation characters, or with lines, the first validation line framed.
void attention_maps(harness::Run& run, models::GPT& model, const data::CharCorpus& corpus) {
  const data::Tokenizer& tokenizer = corpus.tokenizer;
  const std::vector<int>& first = corpus.lines ? corpus.val_lines.front() : corpus.val_ids;
  std::vector<int> passage(first.begin(), first.begin() + std::min<int64_t>(std::ssize(first), 48));
  if (corpus.lines) passage.insert(passage.begin(), tokenizer.bos());
  passage.resize(std::min<size_t>(passage.size(), static_cast<size_t>(model.config().block_size)));
  const auto T = std::ssize(passage);
  const std::string kind = model.config().attention.kind_name();
  std::printf("\n== 4. %s attention of every head over the first %lld validation characters ==\n", kind.c_str(),
              static_cast<long long>(T));
  std::vector<std::string> labels;
  for (const int id : passage) labels.push_back(tokenizer.token(id));  // the heatmap shows a space as ␣, a newline as ⏎
  const size_t last = model.transformer->h.size() - 1;
  const std::vector<size_t> layers = last == 0 ? std::vector<size_t>{0} : std::vector<size_t>{0, last};
  const std::vector<Tensor> maps = attention_of(model, tensor(std::vector<float>(passage.begin(), passage.end()), {1, T}), layers);
  for (size_t m = 0; m < maps.size(); ++m)
    for (int64_t head = 0; head < maps[m].size(0); ++head) {
      plot::Heatmap map{cat("Layer ", layers[m] + 1, ", head ", head + 1, ": ", kind, " attention over a validation passage"),
                           "key (the character attended to)", "query (the character predicting the next)", "weight"};
      const float* w = maps[m].data() + head * T * T;
      for (int64_t i = 0; i < T; ++i) map.values.emplace_back(w + i * T, w + (i + 1) * T);
      map.row_labels = map.col_labels = labels;
      map.scale_min = 0, map.scale_max = 1;  // every map on one scale, so that heads can be compared
      run.wrote(plot::save_heatmap(run.path(cat("attention_layer", layers[m] + 1, "_head", head + 1)), map));
    }
  std::printf("each row: one position; each column: a position it may see (the causal mask hides the future); a row sums to 1\n");
  if (kind == nn::LinearAttention::kName)
    std::printf("linear attention's weights, phi(q) . phi(k) normalised by row, spread over every visible position: no exponential sharpens them\n");
  if (kind == nn::BigBirdAttention::kName)
    std::printf("the blocks BigBird's pattern leaves out stay 0: block 0 (global), the window and the random blocks are lit\n");
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson, "Lesson 11: a GPT (decoder-only Transformer) as a character language model, with a KV cache.",
                           {.steps = kDefaultSteps, .lr = 1e-3f, .batch = 12});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig config{.block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128, .dropout = 0};
    lessons::GPTTraining training;
    cli.option("--layers", config.n_layer, "Transformer blocks (nanoGPT: n_layer)", {1, 48});
    cli.option("--heads", config.n_head, "attention heads per block, dividing --embd (n_head)", {1, 64});
    cli.option("--embd", config.n_embd, "width of the residual stream (n_embd)", {1, 4096});
    lessons::heads_divide_embd(cli, config);
    cli.option("--context", config.block_size,
               "context length: the positions the model learns (block_size); with --lines, unless given, the longest line + 1; "
               "with --load, at most the checkpoint's", {1, 4096});
    cli.option("--dropout", config.dropout, "dropout on embeddings, residual branches and full attention's weights (the other kinds form no weights)", {0.0f, 0.9f});
    training.add_to(cli);
    harness::AttentionFlags attention{.defaults = {nn::BigBirdAttention::Settings{.block = 8, .random_blocks = 2},
                                                   nn::VQAttention::Settings{.block = 8}}};  // 8 blocks in the default context of 64
    harness::add_attention_options(cli, attention, "every block's causal self attention", /*causal=*/true);
    lessons::SamplingFlags sampling;
    sampling.add_to(cli);
    harness::ModelPrintout printout;
    printout.add_to(cli);
    cli.parse(argc, argv);
    if (!sampling.load.empty()) {  // the second program: sample from a checkpoint, train nothing
      lessons::sample_checkpoint(cli, attention, sampling, config.block_size);
      return;
    }
    sampling.refuse_without_load(cli);
    config.attention = harness::attention_settings(kLesson, cli, attention, cli.common.seed);
    training.settle(kLesson, cli.common);
    const bool context_given = cli.given("--context");  // else, with --lines, the context fits the longest line
    const data::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, config.block_size, context_given);
    harness::check_pattern_fits(kLesson, config.attention, config.block_size, /*causal=*/true, cat("--context ", config.block_size));
    config.vocab_size = corpus.tokenizer.vocab_size();
    harness::check_memory(kLesson, lessons::gpt_training_memory(config, cli.common.batch, lessons::gpt_flags_text(config)));
    // Without --prompt, the samples continue the start of the validation text (lines: start from <bos> alone).
    const std::vector<int> prompt_start =
        !sampling.prompt.empty() ? lessons::prompt_ids(kLesson, corpus.tokenizer, sampling.prompt)
        : corpus.lines  ? std::vector<int>{}
                        : std::vector<int>(corpus.val_ids.begin(), corpus.val_ids.begin() + std::min<int64_t>(32, config.block_size));
    harness::Run run(cli);

    std::printf("== 1. a character GPT ==\n");
    describe_data(corpus, config, context_given);
    std::printf("attention: %s\n", harness::describe_attention(config.attention, /*causal=*/true).c_str());
    Generator init(cli.common.seed);
    models::GPT model(config, init);
    printout.print(model);
    const harness::Tracker trained = train(run, cli.common, model, corpus, training);
    report_perplexity(run, trained, corpus, config.block_size);
    samples(run, cli.common, model, corpus, prompt_start);
    nlohmann::ordered_json metrics = {{"attention", config.attention.kind_name()}, {"train_loss", trained.train_loss()},
                                      {"val_loss", trained.last("val_loss")}, {"val_ppl", trained.last("val_ppl")},
                                      {"val_tokens", corpus.dropped.total()}, {"val_unknown_tokens", corpus.dropped.unknown}};
    generation_speed(run, cli.common, model, corpus.lines ? corpus.tokenizer.bos() : prompt_start.front(), metrics);
    attention_maps(run, model, corpus);
    run.finish(metrics,
               {{"attention", "the attention kind of every block (--attention)"},
                {"train_loss", "mean training loss since the last evaluation, nats per character"},
                {"val_loss", "the GPT over the whole validation text, nats per character (lines: <eos> counted as one)"},
                {"val_ppl", "exp(val_loss)"},
                {"val_tokens", "characters of the validation text, known or not"},
                {"val_unknown_tokens", "validation characters not in the training text, left out of val_loss"},
                {"cached_tokens_per_s", "part 3: generating a full context with the KV cache"},
                {"uncached_tokens_per_s", "part 3: the same without it, the whole context run again for every token"}},
               "docs/11_gpt.md, section 8 (Choosing the attention kind); then exercise 7: --attention linear and\n"
               "      --attention bigbird, each with its own --out");
  });
}
