// Lesson 05: recurrent neural networks.
//
//  1. N-vs-N: a character-level RNN language model on a text stream, trained with truncated
//     backpropagation through time (the state carried from window to window, detached);
//  2. N-vs-1: an RNN reads a whole sequence and classifies it (which symbol occurs most often);
//  3. 1-vs-N: an RNN writes a sequence from a class (the name of a digit);
//  4. BPTT made visible: the gradient reaching each time step's hidden state, vanishing or
//     exploding with the size of W_hh; and training with and without gradient clipping.
// The note that goes with it: docs/05_rnn.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "data/symbol_sequences.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "harness/cli.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "lessons/char_rnn/truncated_bptt.h"
#include "harness/tracker.h"
#include "models/char_rnn.h"
#include "models/classifier.h"
#include "models/rnn_shapes.h"
#include "nn/init.h"
#include "nn/recurrent.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

struct LMSettings {
  int64_t embed, hidden, block;
  float clip;
};

// The training loop of parts 1 and 4, truncated BPTT: each step one window of the stream, from
// the state the previous window ended in (the model carries it, detached), zeros when a pass over
// the stream starts again. `figures` gives an evaluation's figures, after the step's result.
void train_lm(models::CharRNN& model, optim::Optimizer& optimizer, data::ContiguousBatcher windows, float clip,
              int64_t steps, harness::Tracker& tracker,
              const std::function<std::vector<double>(const optim::StepResult&)>& figures) {
  // 1, or after --resume's checkpoint, which keeps the carried state and the stream's position too
  for (int64_t step = tracker.resume({model, optimizer, {}, lessons::bptt_carried(model, windows)}); step <= steps; ++step) {
    const data::Batch batch = windows.next();
    if (windows.restarted()) model.reset_state();  // a new pass over the stream starts from zeros
    const optim::StepResult result = optim::train_step(model, optimizer, batch, clip);
    tracker.step(step, result, optimizer.lr());
    if (tracker.evaluation_due(step)) tracker.evaluated(step, figures(result));
  }
  tracker.finish();
}

// ---- 1. N-vs-N ----
struct LMRun {
  std::unique_ptr<models::CharRNN> model;
  data::Tokenizer tokenizer;
  std::vector<int> train_ids, val_ids;
  std::string source;
  data::DroppedUnknown dropped;  // validation characters not in the training text
  double train_loss = 0, val_loss = 0;
};

// Part 1's text, read before anything runs: a bad --data or --val, or a text too short for
// --batch and --block, fails at once.
LMRun load_stream(const harness::CommonFlags& flags, const harness::TextFlags& text, const LMSettings& s) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = false, .seed = flags.seed});
  if (flags.quick) data::keep_first(lines, 250, 60);
  LMRun lm{nullptr, data::char_tokenizer(lines, false)};
  data::EncodedText ids = data::encode_text(lines, lm.tokenizer, false);
  lm.dropped = data::drop_unknown(ids.val);
  lm.train_ids = std::move(ids.train[0]);
  lm.val_ids = std::move(ids.val[0]);
  lm.source = lines.train_source;
  harness::check_windows_fit("05_rnn", lm.train_ids, "the training text", flags.batch, s.block,
                             "give a smaller --batch or --block, or a longer --data");
  harness::check_windows_fit("05_rnn", lm.val_ids, "the validation text", 1, s.block, "give a smaller --block or a longer --val");
  return lm;
}

void language_model(harness::Run& run, const harness::CommonFlags& flags, LMRun& lm, const LMSettings& s) {
  std::printf("== 1. N-vs-N: a character RNN language model ==\n");
  std::printf("data: %s: %zu training and %zu validation characters, vocabulary %lld\n", lm.source.c_str(),
              lm.train_ids.size(), lm.val_ids.size(), static_cast<long long>(lm.tokenizer.vocab_size()));
  if (lm.dropped.unknown > 0) std::printf("%s\n", lm.dropped.describe("character").c_str());
  lm.model = std::make_unique<models::CharRNN>(lm.tokenizer.vocab_size(), s.embed, s.hidden, nn::CellKind::rnn_tanh);
  models::CharRNN& model = *lm.model;
  std::printf("%s", model.summary().c_str());

  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  harness::Tracker tracker(run, {.steps = flags.steps, .eval_every = std::max<int64_t>(1, flags.steps / 25),
                                 .figures = {"val_loss", "val_ppl"}, .unit = "tok", .items_per_step = flags.batch * s.block});
  train_lm(model, adam, data::ContiguousBatcher(lm.train_ids, flags.batch, s.block), s.clip, flags.steps, tracker,
           [&](const optim::StepResult&) -> std::vector<double> {
             const double val_loss = models::stream_nll(model, lm.val_ids, s.block);
             return {val_loss, std::exp(val_loss)};
           });
  lm.train_loss = tracker.train_loss(), lm.val_loss = tracker.last("val_loss");
  plot::Series train_curve = tracker.curve("train_loss"), val_curve = tracker.curve("val_ppl");
  for (double& loss : train_curve.y) loss = std::exp(loss);  // perplexity
  val_curve.name = "validation";
  std::printf("validation perplexity %.2f (%.4f nats per character)\n", std::exp(lm.val_loss), lm.val_loss);
  run.wrote(plot::save_line_chart(run.path("perplexity"), {"Character RNN: perplexity", "step", "perplexity (log scale)",
                                                              {train_curve, val_curve}, /*log_y=*/true}));
  Generator gen(flags.seed);
  const std::string prompt = "The ";
  const std::string sample = prompt + lm.tokenizer.decode(model.sample(lm.tokenizer.encode(prompt), 300, gen, 0.8f));
  std::printf("sample (temperature 0.8):\n%s\n", sample.c_str());
  std::FILE* out = std::fopen(run.file("samples.txt").c_str(), "w");
  if (!out) fail("05_rnn", "cannot write samples.txt");
  std::fprintf(out, "%s\n", sample.c_str());
  std::fclose(out);
  run.save_checkpoint(model, {{"tokenizer", lm.tokenizer.to_json()}});
}

// ---- 2. N-vs-1: which of a, b, c occurs most often? ----
double many_to_one(harness::Run& run, const harness::CommonFlags& flags) {
  std::printf("\n== 2. N-vs-1: which symbol occurs most often? ==\n");
  Generator gen(flags.seed + 3);
  // Only the final state decides: that is what makes it N-vs-1.
  models::Classifier model(std::make_shared<models::ManyToOne>(/*vocab=*/3, /*embed_size=*/8, /*hidden=*/32, /*classes=*/3, gen));
  optim::Adam adam(model.named_parameters(), {.lr = 0.01f});
  const int64_t steps = flags.quick ? 150 : 600;
  harness::Tracker tracker(run, {.steps = steps, .eval_every = steps, .figures = {}, .csv = "", .unit = "seq",
                                 .items_per_step = 64, .loss_kind = harness::LossKind::plain, .name = "N-vs-1 RNN"});
  for (int64_t step = 1; step <= steps; ++step) {
    // 64 sequences of 15 symbols from {0, 1, 2}, each labelled with its most frequent symbol
    const data::LabelledBatch batch = data::most_frequent_symbol(64, 15, 3, gen);
    tracker.step(step, optim::train_step(model, adam, batch, 1.0f), adam.lr());
  }
  tracker.finish();
  const data::LabelledBatch test = data::most_frequent_symbol(1000, 15, 3, gen);
  NoGradGuard no_grad;
  const Tensor guess = argmax(model(test.inputs), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < 1000; ++i) right += guess.data()[i] == test.labels.data()[i];
  std::printf("test accuracy %.3f after %lld steps (always guessing one symbol: about 0.33)\n", right / 1000.0,
              static_cast<long long>(steps));
  return right / 1000.0;
}

// ---- 3. 1-vs-N: write the name of a digit ----
double one_to_many(harness::Run& run, const harness::CommonFlags& flags) {
  std::printf("\n== 3. 1-vs-N: from a digit to its name ==\n");
  const std::vector<std::string> names = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};
  const data::Tokenizer tokenizer = data::Tokenizer::chars(names);
  Generator gen(flags.seed + 4);
  // The digit's embedding becomes the first hidden state, from which the RNN writes the letters.
  models::OneToMany model(/*classes=*/10, tokenizer.vocab_size(), /*embed_size=*/16, /*hidden=*/32, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 0.01f});
  // Teacher forcing: the RNN reads <bos> + name and must predict name + <eos>; padding does not count.
  std::vector<data::IdPair> pairs;
  for (int d = 0; d < 10; ++d) pairs.push_back({{d}, tokenizer.encode(names[static_cast<size_t>(d)])});
  const data::Seq2SeqBatch all_ten = data::pad_pairs(pairs);
  const int64_t steps = flags.quick ? 150 : 400;
  harness::Tracker tracker(run, {.steps = steps, .eval_every = steps, .figures = {}, .csv = "", .unit = "names",
                                 .items_per_step = 10, .loss_kind = harness::LossKind::plain, .name = "1-vs-N RNN"});
  for (int64_t step = 1; step <= steps; ++step) tracker.step(step, optim::train_step(model, adam, all_ten, 1.0f), adam.lr());
  tracker.finish();
  int right = 0;
  std::printf("  ");
  for (int d = 0; d < 10; ++d) {
    const std::string word = tokenizer.decode(model.write(d, 10));  // greedy: the most likely letter, fed back
    right += word == names[static_cast<size_t>(d)];
    std::printf("%d -> %s   ", d, word.c_str());
  }
  std::printf("\n%d of 10 names written correctly\n", right);
  return right / 10.0;
}

// ---- 4. BPTT made visible ----
// || dL/dh_t || for every step t of a tanh RNN, with L a function of the last state only.
std::vector<double> gradient_per_step(nn::RNNCell& cell, const Tensor& inputs, const Tensor& h0, const Tensor& last_weights) {
  const int64_t T = inputs.size(0);
  std::vector<Tensor> states;
  Tensor h = h0;
  for (int64_t t = 0; t < T; ++t) {
    h = cell.forward(squeeze(narrow(inputs, 0, t, 1), 0), h);
    h.retain_grad();  // keep dL/dh_t, which backward() would otherwise drop
    states.push_back(h);
  }
  sum(h * last_weights).backward();
  std::vector<double> norms;
  for (const Tensor& s : states) {
    double squares = 0;
    for (float g : s.grad().to_vector()) squares += static_cast<double>(g) * g;
    norms.push_back(std::sqrt(squares));
  }
  return norms;
}

// The same on text, for a language model: a cell with the model's first-layer weights reads the
// first T characters of `ids` from a zero state.
std::vector<double> gradient_on_text(models::CharRNN& model, const std::vector<int>& ids, int64_t T, Generator& gen) {
  const int64_t E = model.embedding->weight.size(1), H = model.rnn->hidden_size();
  nn::RNNCell cell(E, H, false, gen);
  cell.load_state_dict({{"weight_ih", model.rnn->weight("weight_ih", 0, false)},
                        {"weight_hh", model.rnn->weight("weight_hh", 0, false)},
                        {"bias_ih", model.rnn->weight("bias_ih", 0, false)},
                        {"bias_hh", model.rnn->weight("bias_hh", 0, false)}});
  const int64_t n = std::min<int64_t>(T, static_cast<int64_t>(ids.size()));
  std::vector<float> window(ids.begin(), ids.begin() + n);
  const Tensor embedded = reshape((*model.embedding)(tensor(window, {n, 1})).detach(), {n, 1, E});
  return gradient_per_step(cell, embedded, zeros({1, H}), randn({1, H}, gen));
}

plot::Series per_step_series(const std::string& name, const std::vector<double>& norms) {
  plot::Series line{name};
  for (size_t t = 0; t < norms.size(); ++t) line.x.push_back(static_cast<double>(t)), line.y.push_back(norms[t]);
  return line;
}

void bptt(harness::Run& run, const harness::CommonFlags& flags, const LMRun& lm, const LMSettings& s) {
  std::printf("\n== 4. BPTT: the gradient reaching each time step ==\n");
  constexpr int64_t T = 50, H = 32;
  Generator gen(flags.seed + 5);
  std::vector<plot::Series> series;
  // With zero inputs a tanh RNN stays at h = 0, where tanh is linear: going back one step
  // multiplies the gradient by W_hh^T, so with W_hh = sigma * (orthogonal) its size is
  // sigma^(T-1-t) (steps 0..T-1, the loss on the last state).
  for (const float sigma : {0.8f, 1.0f, 1.25f}) {
    nn::RNNCell cell(1, H, false, gen);
    nn::init_orthogonal(cell.weight_hh, gen, sigma);
    for (const Tensor& b : {cell.bias_ih, cell.bias_hh}) b.fill_(0);
    const std::vector<double> norms = gradient_per_step(cell, zeros({T, 1, 1}), zeros({1, H}), randn({1, H}, gen));
    std::printf("  sigma %.2f: |dL/dh| at t = 0 is %.3g times that at t = %lld\n", sigma, norms.front() / norms.back(),
                static_cast<long long>(T - 1));
    series.push_back(per_step_series("sigma " + std::to_string(sigma).substr(0, 4), norms));
  }
  const std::vector<double> norms = gradient_on_text(*lm.model, lm.val_ids, T, gen);
  std::printf("  the trained model on text: %.3g times\n", norms.front() / norms.back());
  series.push_back(per_step_series("trained, on text", norms));
  run.wrote(plot::save_line_chart(run.path("bptt_gradients"),
                                     {"Gradient reaching each step (BPTT)", "time step t", "|dL/dh_t| (log scale)", series, /*log_y=*/true}));

  // Plain SGD from a large W_hh, with and without clipping. (Adam divides every gradient by its
  // own running size, which hides an explosion; SGD steps in proportion to it.) Before and after
  // each run, the gradient reaching each time step on text, measured as above (the same w each time).
  const int64_t steps = flags.quick ? 60 : 300;
  std::vector<plot::Series> losses_by_run, norms_by_run, per_step;
  for (const float clip : {0.0f, 1.0f}) {
    Generator init(flags.seed + 6);
    models::CharRNN model(lm.tokenizer.vocab_size(), s.embed, s.hidden, nn::CellKind::rnn_tanh, {}, init);
    nn::init_orthogonal(model.rnn->weight("weight_hh", 0, false), init, 2.0f);
    const std::string name = clip > 0 ? "clipped to norm 1" : "not clipped";
    if (clip == 0) {  // both runs start from these weights
      Generator probe(flags.seed + 7);
      const std::vector<double> before = gradient_on_text(model, lm.val_ids, T, probe);
      std::printf("  W_hh = 2 x orthogonal, before training: |dL/dh| at t = 0 is %.3g times that at t = %lld\n",
                  before.front() / before.back(), static_cast<long long>(before.size() - 1));
      per_step.push_back(per_step_series("before training", before));
    }
    optim::SGD sgd(model.named_parameters(), {.lr = 2.0f});
    std::printf("  -- SGD, %s\n", name.c_str());
    // Every step a point of each curve; a loss that explodes is what this part shows, not a reason to stop.
    harness::Tracker tracker(run, {.steps = steps, .eval_every = 1, .figures = {"grad_norm"}, .csv = "", .unit = "tok",
                                   .items_per_step = flags.batch * s.block, .name = name, .stop_if_diverged = false,
                                   .checkpoints = false});  // a checkpoint every step would cost more than training again
    train_lm(model, sgd, data::ContiguousBatcher(lm.train_ids, flags.batch, s.block), clip, steps, tracker,
             [](const optim::StepResult& result) -> std::vector<double> { return {result.grad_norm}; });
    const plot::Series& losses = tracker.curve("train_loss");
    const plot::Series& norms = tracker.curve("grad_norm");
    std::printf("  SGD, W_hh = 2 x orthogonal, %s: largest gradient norm %.3g, final training loss %.3f\n", name.c_str(),
                *std::max_element(norms.y.begin(), norms.y.end()), losses.y.back());
    Generator probe(flags.seed + 7);
    const std::vector<double> after = gradient_on_text(model, lm.val_ids, T, probe);
    // Units stuck at tanh = +-1 have slope exactly 0 and pass nothing back: a log scale cannot show 0.
    const auto zero_steps = std::count(after.begin(), after.end(), 0.0);
    std::printf("    after training: |dL/dh| at t = 0 is %.3g times that at t = %lld", after.front() / after.back(),
                static_cast<long long>(after.size() - 1));
    if (zero_steps > 0) std::printf(" (exactly 0 at %lld of %zu steps)", static_cast<long long>(zero_steps), after.size());
    std::printf("\n");
    per_step.push_back(per_step_series(clip > 0 ? "clipped, after" : "not clipped, after", after));
    losses_by_run.push_back(losses), norms_by_run.push_back(norms);
  }
  const std::string title = "SGD (lr 2) from W_hh = 2 x orthogonal";
  run.wrote(plot::save_line_chart(run.path("clipping"), {title, "step", "training loss (nats per character)", losses_by_run}));
  run.wrote(plot::save_line_chart(run.path("clipping_grad_norm"),
                                     {title, "step", "gradient norm (log scale)", norms_by_run, /*log_y=*/true}));
  run.wrote(plot::save_line_chart(run.path("clipping_bptt"), {"Gradient reaching each step, before and after SGD", "time step t",
                                                                  "|dL/dh_t| (log scale)", per_step, /*log_y=*/true}));
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("05_rnn", "Lesson 05: RNNs: a character language model, N-vs-1 and 1-vs-N tasks, BPTT and clipping.",
                           {.steps = 600, .lr = 3e-3f, .batch = 32});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    LMSettings s{32, 128, 64, 1.0f};
    cli.option("--embed", s.embed, "size of each character's embedding", {1, 1 << 16});
    cli.option("--hidden", s.hidden, "hidden units of the language model", {1, 1 << 16});
    cli.option("--block", s.block, "characters per truncated-BPTT window", {1, 1 << 16});
    cli.option("--clip", s.clip, "clip the gradient norm to this (0: no clipping)", harness::non_negative);
    cli.parse(argc, argv);
    if (text.lines) fail("05_rnn", "the language model reads one character stream; --lines does not apply");
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 100);
    harness::check_memory("05_rnn", lessons::recurrent_memory(cli.common.batch, s.block, s.embed, s.hidden, 1,
                                                              "--hidden " + std::to_string(s.hidden)));
    LMRun lm = load_stream(cli.common, text, s);
    harness::Run run(cli);

    language_model(run, cli.common, lm, s);
    const double most_frequent = many_to_one(run, cli.common);
    const double names = one_to_many(run, cli.common);
    bptt(run, cli.common, lm, s);
    run.finish({{"train_loss", lm.train_loss}, {"val_loss", lm.val_loss}, {"val_ppl", std::exp(lm.val_loss)},
                {"val_tokens", lm.dropped.total()}, {"val_unknown_tokens", lm.dropped.unknown},
                {"most_frequent_test_acc", most_frequent}, {"digit_names_right", names}},
               {{"train_loss", "part 1, the character RNN: mean training loss since the last evaluation, nats per character"},
                {"val_loss", "part 1, the character RNN on the validation text, nats per character"},
                {"val_ppl", "exp(val_loss)"},
                {"val_tokens", "characters of the validation text, known or not"},
                {"val_unknown_tokens", "validation characters not in the training text, left out of val_loss"},
                {"most_frequent_test_acc", "part 2 (N-vs-1): the most frequent symbol, 1000 test sequences"},
                {"digit_names_right", "part 3 (1-vs-N): share of the 10 digit names written right"}},
               "docs/05_rnn.md, section 6 (Gradient clipping); then exercise 2: --clip 0, and Adam in part 4");
  });
}
