// Lesson 06: gated recurrent networks.
//
//  1. RNN, GRU and LSTM (and a 2-layer GRU) as character language models on the same text with
//     the same budget: perplexity curves and a table;
//  2. what the gates do: the LSTM's input and forget gates (with --cell gru, the GRU's update and
//     reset gates) over a piece of text;
//  3. a fill-in-the-missing-character task, where a bidirectional network, which reads the text
//     after the blank too, beats a unidirectional one.
// The note that goes with it: docs/06_gated_rnn.md.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
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
#include "nn/recurrent.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr int64_t kFillWindow = 32;  // characters in each window of the fill-in task

struct Config {
  std::string name;  // "GRU 2 layers": in the tables and plots
  std::string key;   // "gru_2_layers": in its metric's name, val_ppl_gru_2_layers
  nn::CellKind cell;
  int64_t layers;
  std::string csv;  // its metrics file
};

const std::map<std::string, nn::CellKind> kCells = {{"rnn", nn::CellKind::rnn_tanh}, {"gru", nn::CellKind::gru}, {"lstm", nn::CellKind::lstm}};

// Part 1's models when no --cell picks one.
const std::vector<Config> kCompared = {{"RNN", "rnn", nn::CellKind::rnn_tanh, 1, "metrics_rnn.csv"},
                                       {"GRU", "gru", nn::CellKind::gru, 1, "metrics_gru.csv"},
                                       {"LSTM", "lstm", nn::CellKind::lstm, 1, "metrics_lstm.csv"},
                                       {"GRU 2 layers", "gru_2_layers", nn::CellKind::gru, 2, "metrics_gru_2_layers.csv"}};

// The model --cell and --layers pick, named as the same model is among the compared ones, so
// that its metric and its file pair with theirs (./ladder compare); a deeper one is named alike.
Config model_config(const std::string& cell, int64_t layers) {
  for (const Config& c : kCompared)
    if (c.cell == kCells.at(cell) && c.layers == layers) return c;
  const Config one = model_config(cell, 1);  // every cell is compared with one layer
  const std::string deeper = cat("_", layers, "_layers");
  return {cat(one.name, " ", layers, " layers"), one.key + deeper, one.cell, layers, cat("metrics_", one.key, deeper, ".csv")};
}

struct Scores {
  std::string name, key;
  int64_t parameters;
  double train_loss, val_loss, seconds;
};

// ---- 1. the same language model task for every cell ----
Scores train_language_model(harness::Run& run, const Config& c, const harness::CommonFlags& flags, int64_t hidden, int64_t block,
                            const data::EncodedText& ids, int64_t vocab, std::vector<plot::Series>& curves,
                            std::unique_ptr<models::CharRNN>& keep) {
  Generator init(flags.seed + 1);  // every model starts from the same seed
  auto model = std::make_unique<models::CharRNN>(vocab, 32, hidden, c.cell, nn::RecurrentOptions{.num_layers = c.layers}, init);
  optim::Adam adam(model->named_parameters(), {.lr = flags.lr});
  data::ContiguousBatcher windows(ids.train[0], flags.batch, block);  // every model reads the same windows
  harness::Tracker tracker(run, {.steps = flags.steps, .eval_every = std::max<int64_t>(1, flags.steps / 20),
                                 .figures = {"val_loss", "val_ppl"}, .csv = c.csv, .unit = "tok",
                                 .items_per_step = flags.batch * block, .name = c.name});
  // 1, or after --resume's checkpoint; the checkpoints keep the carried state and the stream's position too
  for (int64_t step = tracker.resume({*model, adam, {}, lessons::bptt_carried(*model, windows)}); step <= flags.steps; ++step) {
    const data::Batch batch = windows.next();
    if (windows.restarted()) model->reset_state();  // truncated BPTT, as in lesson 05
    tracker.step(step, optim::train_step(*model, adam, batch, 1.0f), adam.lr());
    if (!tracker.evaluation_due(step)) continue;
    const double val_loss = models::stream_nll(*model, ids.val[0], block);
    tracker.evaluated(step, {val_loss, std::exp(val_loss)});
  }
  tracker.finish();
  curves.push_back(tracker.curve("val_ppl"));
  const Scores s{c.name, c.key, model->num_parameters(), tracker.train_loss(), tracker.last("val_loss"), tracker.seconds()};
  // Part 2 plots the first LSTM trained, or else the first model.
  if (!keep || (c.cell == nn::CellKind::lstm && keep->rnn->kind() != nn::CellKind::lstm)) keep = std::move(model);
  return s;
}

// ---- 2. the gates over a piece of text ----
struct GateMap {
  const char* stem;
  const char* title;
  size_t gate;                              // its index in what the cell's gates() returns
  std::vector<std::vector<double>> values;  // (units, T)
};

// A cell with the first layer's weights replays the text one character at a time; `step` returns
// one step's gates and moves the cell's state on.
std::function<std::vector<Tensor>(const Tensor&)> first_layer_replay(models::CharRNN& model) {
  const int64_t H = model.rnn->hidden_size(), E = model.embedding->weight.size(1);
  const std::map<std::string, Tensor> weights = {
      {"weight_ih", model.rnn->weight("weight_ih", 0, false)}, {"weight_hh", model.rnn->weight("weight_hh", 0, false)},
      {"bias_ih", model.rnn->weight("bias_ih", 0, false)}, {"bias_hh", model.rnn->weight("bias_hh", 0, false)}};
  if (model.rnn->kind() == nn::CellKind::lstm) {
    auto cell = std::make_shared<nn::LSTMCell>(E, H);
    cell->load_state_dict(weights);
    return [cell, state = nn::LSTMState{zeros({1, H}), zeros({1, H})}](const Tensor& x) mutable {
      std::vector<Tensor> gates = cell->gates(x, state);  // i, f, g, o
      state = cell->forward(x, state);
      return gates;
    };
  }
  const auto variant = model.rnn->kind() == nn::CellKind::gru ? GRUVariant::classic : GRUVariant::pytorch;
  auto cell = std::make_shared<nn::GRUCell>(E, H, variant);
  cell->load_state_dict(weights);
  return [cell, h = zeros({1, H})](const Tensor& x) mutable {
    std::vector<Tensor> gates = cell->gates(x, h);  // r, z, n
    h = cell->forward(x, h);
    return gates;
  };
}

void plot_gates(harness::Run& run, models::CharRNN& model, const data::Tokenizer& tokenizer, const std::vector<int>& ids) {
  const int64_t T = std::min<int64_t>(48, static_cast<int64_t>(ids.size())), units = std::min<int64_t>(24, model.rnn->hidden_size());
  std::vector<GateMap> maps;
  if (model.rnn->kind() == nn::CellKind::lstm)
    maps = {{"lstm_forget_gate", "LSTM forget gate f_t (1: keep the cell, 0: erase it)", 1, {}},
            {"lstm_input_gate", "LSTM input gate i_t (1: write the candidate in)", 0, {}}};
  else
    maps = {{"gru_update_gate", "GRU update gate z_t (1: keep the state, 0: renew it)", 1, {}},
            {"gru_reset_gate", "GRU reset gate r_t (0: the candidate ignores h)", 0, {}}};
  for (GateMap& m : maps) m.values.assign(static_cast<size_t>(units), std::vector<double>(static_cast<size_t>(T)));
  NoGradGuard no_grad;
  auto step = first_layer_replay(model);
  std::vector<std::string> chars;
  for (int64_t t = 0; t < T; ++t) {
    const int id = ids[static_cast<size_t>(t)];
    const std::vector<Tensor> gates = step((*model.embedding)(tensor({static_cast<float>(id)})));
    for (GateMap& m : maps)
      for (int64_t u = 0; u < units; ++u) m.values[static_cast<size_t>(u)][static_cast<size_t>(t)] = gates[m.gate].data()[u];
    chars.push_back(tokenizer.token(id));
  }
  std::vector<std::string> unit_names;
  for (int64_t u = 0; u < units; ++u) unit_names.push_back(std::to_string(u));
  for (const GateMap& m : maps)
    run.wrote(plot::save_heatmap(run.path(m.stem), {m.title, "character read", "hidden unit", "gate value", m.values, unit_names, chars}));
}

// ---- 3. fill in the blank ----
// n windows of kFillWindow characters of `stream`, each with one character (at 4..27) replaced by a
// blank (<pad>, never a character of the text): inputs (n, kFillWindow), labels (n) the missing characters.
data::LabelledBatch blanked_windows(const std::vector<int>& stream, int64_t n, Generator& gen) {
  data::LabelledBatch b{empty({n, kFillWindow}), empty({n})};
  for (int64_t r = 0; r < n; ++r) {
    const int64_t start = gen.randint(0, static_cast<int64_t>(stream.size()) - kFillWindow), blank = gen.randint(4, kFillWindow - 4);
    for (int64_t t = 0; t < kFillWindow; ++t) b.inputs.data()[r * kFillWindow + t] = static_cast<float>(stream[static_cast<size_t>(start + t)]);
    b.labels.data()[r] = b.inputs.data()[r * kFillWindow + blank];
    b.inputs.data()[r * kFillWindow + blank] = data::Tokenizer::kPad;
  }
  return b;
}

// The network of part 3: a character RNN reads each window, and its output at the blank is the
// guess. Trained as a models::Classifier: the cross entropy of that output against the missing character.
class BlankReader : public nn::Module {
 public:
  explicit BlankReader(std::shared_ptr<models::CharRNN> rnn) : nn::Module("BlankReader") {
    this->rnn = register_module("rnn", std::move(rnn));
  }
  // windows (n, kFillWindow), one <pad> in each -> logits (n, V) at the blanks.
  Tensor forward(const Tensor& windows) override {
    const Tensor logits = rnn->forward(windows).logits;  // (n, kFillWindow, V)
    Tensor at = empty({windows.size(0)});                // the flat index of each blank in (n * kFillWindow)
    for (int64_t i = 0, r = 0; i < windows.numel(); ++i)
      if (windows.data()[i] == data::Tokenizer::kPad) at.data()[r++] = static_cast<float>(i);
    return index_select(reshape(logits, {-1, logits.size(2)}), 0, at);
  }
  std::shared_ptr<models::CharRNN> rnn;
};

// Trains a fill-in model for half the steps of part 1; returns its accuracy on validation windows.
double fill_in(harness::Run& run, const Config& c, bool bidirectional, const harness::CommonFlags& flags, int64_t hidden,
               const data::EncodedText& ids, int64_t vocab) {
  Generator gen(flags.seed + 2), init(flags.seed + 3);
  models::Classifier model(std::make_shared<BlankReader>(std::make_shared<models::CharRNN>(
      vocab, 32, hidden, c.cell, nn::RecurrentOptions{.num_layers = c.layers, .bidirectional = bidirectional}, init)));
  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  const int64_t steps = std::max<int64_t>(1, flags.steps / 2);
  harness::Tracker tracker(run, {.steps = steps, .eval_every = steps, .figures = {}, .csv = "", .unit = "win",
                                 .items_per_step = flags.batch, .loss_kind = harness::LossKind::plain,
                                 .name = "fill-in " + c.name});
  for (int64_t step = 1; step <= steps; ++step) {
    const data::LabelledBatch batch = blanked_windows(ids.train[0], flags.batch, gen);
    tracker.step(step, optim::train_step(model, adam, batch, 1.0f), adam.lr());
  }
  tracker.finish();
  NoGradGuard no_grad;
  model.eval();
  const data::LabelledBatch test = blanked_windows(ids.val[0], 1000, gen);
  const Tensor guess = argmax(model(test.inputs), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < 1000; ++i) right += guess.data()[i] == test.labels.data()[i];
  return right / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("06_gated_rnn", "Lesson 06: RNN, GRU and LSTM compared; LSTM gates; bidirectional fill-in-the-blank.",
                           {.steps = 600, .lr = 3e-3f, .batch = 32});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    std::string cell;
    int64_t layers = 1, hidden = 96, block = 64;
    bool bidirectional = false;
    cli.choice("--cell", cell, "train only this cell (default: compare them all)", {"rnn", "gru", "lstm"});
    cli.option("--layers", layers, "stacked layers, with --cell", {1, 8});
    cli.option("--hidden", hidden, "hidden units", {1, 1 << 16});
    cli.option("--block", block, "characters per truncated-BPTT window", {1, 1 << 16});
    cli.flag("--bidirectional", bidirectional, "with --cell: only the bidirectional model on the fill-in task");
    cli.parse(argc, argv);
    if (text.lines) fail("06_gated_rnn", "the language models read one character stream; --lines does not apply");
    if (cell.empty() && (layers != 1 || bidirectional)) fail("06_gated_rnn", "--layers and --bidirectional go with --cell");
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 60);
    const std::vector<Config> configs = cell.empty() ? kCompared : std::vector<Config>{model_config(cell, layers)};

    harness::check_memory("06_gated_rnn", lessons::recurrent_memory(cli.common.batch, block, hidden, hidden, std::max<int64_t>(layers, 2),
                                                                    "--hidden " + std::to_string(hidden)));
    // The text, and every limit it sets, before the run starts (not after minutes of training).
    data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = false, .seed = cli.common.seed});
    if (cli.common.quick) data::keep_first(lines, 250, 60);
    const data::Tokenizer tokenizer = data::char_tokenizer(lines, false);
    data::EncodedText ids = data::encode_text(lines, tokenizer, false);
    const data::DroppedUnknown dropped = data::drop_unknown(ids.val);
    harness::check_windows_fit("06_gated_rnn", ids.train[0], "the training text", cli.common.batch, block,
                               "give a smaller --batch or --block, or a longer --data");
    harness::check_windows_fit("06_gated_rnn", ids.val[0], "the validation text", 1, block, "give a smaller --block or a longer --val");
    harness::check_windows_fit("06_gated_rnn", ids.train[0], "the training text", 1, kFillWindow, "the fill-in task needs a longer --data");
    harness::check_windows_fit("06_gated_rnn", ids.val[0], "the validation text", 1, kFillWindow, "the fill-in task needs a longer --val");
    harness::Run run(cli);
    std::printf("data: %s: %zu training and %zu validation characters\n", lines.train_source.c_str(), ids.train[0].size(),
                ids.val[0].size());
    if (dropped.unknown > 0) std::printf("%s\n", dropped.describe("character").c_str());

    std::printf("\n== 1. the same language model with each cell: %lld steps, hidden %lld ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(hidden));
    std::vector<plot::Series> curves;
    std::vector<Scores> scores;
    std::unique_ptr<models::CharRNN> kept;  // the model part 2 plots and saves
    for (const Config& c : configs) {
      std::printf("-- %s\n", c.name.c_str());
      scores.push_back(train_language_model(run, c, cli.common, hidden, block, ids, tokenizer.vocab_size(), curves, kept));
    }
    std::printf("\n%-16s %10s %12s %12s %10s\n", "model", "params", "train ppl", "val ppl", "seconds");
    const Scores* best = &scores.front();
    for (const Scores& s : scores) {
      std::printf("%-16s %10lld %12.2f %12.2f %10.1f\n", s.name.c_str(), static_cast<long long>(s.parameters), std::exp(s.train_loss),
                  std::exp(s.val_loss), s.seconds);
      if (s.val_loss < best->val_loss) best = &s;
    }
    run.wrote(plot::save_line_chart(run.path("perplexity"), {"Validation perplexity, same text and budget", "step",
                                                                "validation perplexity (log scale)", curves, /*log_y=*/true}));
    std::printf("\n== 2. the gates of the %s's first layer over the start of the validation text ==\n",
                kept->rnn->type_name().c_str());
    if (kept->rnn->kind() == nn::CellKind::rnn_tanh) std::printf("a plain RNN has no gates to plot\n");
    else plot_gates(run, *kept, tokenizer, ids.val[0]);
    run.save_checkpoint(*kept, {{"tokenizer", tokenizer.to_json()}});

    std::printf("\n== 3. fill in the missing character ==\n");
    const Config fill = cell.empty() ? model_config("lstm", 1) : configs.front();
    nlohmann::ordered_json fill_scores;
    for (const bool bi : {false, true}) {
      if (!cell.empty() && bi != bidirectional) continue;
      const double acc = fill_in(run, fill, bi, cli.common, hidden, ids, tokenizer.vocab_size());
      std::printf("  %s %s: accuracy %.3f\n", bi ? "bidirectional " : "unidirectional", fill.name.c_str(), acc);
      fill_scores[bi ? "fill_in_acc_bidirectional" : "fill_in_acc_unidirectional"] = acc;
    }

    nlohmann::ordered_json metrics_json = {{"best_model", best->name}, {"train_loss", best->train_loss}, {"val_loss", best->val_loss},
                                           {"val_ppl", std::exp(best->val_loss)}, {"val_tokens", dropped.total()},
                                           {"val_unknown_tokens", dropped.unknown}};
    for (const Scores& s : scores) metrics_json["val_ppl_" + s.key] = std::exp(s.val_loss);
    metrics_json.update(fill_scores);
    harness::MetricNotes notes = {
        {"best_model", "the lowest validation perplexity of part 1"},
        {"train_loss", "best_model: mean training loss of its last steps, nats per character"},
        {"val_loss", "best_model on the validation text, nats per character"},
        {"val_ppl", "exp(val_loss)"},
        {"val_tokens", "characters of the validation text, known or not"},
        {"val_unknown_tokens", "validation characters not in the training text, left out of val_loss"},
        {"fill_in_acc_unidirectional", "part 3: the missing character, 1000 validation windows, reading left to right"},
        {"fill_in_acc_bidirectional", "part 3: the missing character, 1000 validation windows, reading both ways"}};
    for (const Scores& s : scores) notes["val_ppl_" + s.key] = "part 1: validation perplexity of the " + s.name;
    run.finish(metrics_json, notes,
               "docs/06_gated_rnn.md, section 6 (The comparison); then exercise 1: --cell lstm --steps 2000, and the\n"
               "      same with rnn and gru, each with its own --out");
  });
}
