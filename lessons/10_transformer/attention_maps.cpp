#include "lessons/10_transformer/attention_maps.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "plot/plot.h"
#include "models/decoding.h"

namespace ladder::lessons {

namespace {

// One test example as the model translates it greedily: source ids (1,S), the decoder's inputs
// (1,T) (<bos> then its output) and the output tokens (the <eos> included, unless it was cut off).
struct Example {
  Tensor src, valid, tgt_in;
  std::vector<std::string> source, inputs, outputs;
};

Example translate_example(models::Transformer& model, const data::TranslationTask& task, const data::IdPair& pair) {
  Example ex;
  const auto S = static_cast<int64_t>(pair.first.size());
  ex.src = tensor(std::vector<float>(pair.first.begin(), pair.first.end()), {1, S});
  ex.valid = ones({1, S});
  const models::DecodeOptions options{.max_len = task.longest_target + 1};
  std::vector<int> output = models::greedy_decode(model, ex.src, ex.valid, options).front();
  if (static_cast<int64_t>(output.size()) < options.max_len) output.push_back(data::Tokenizer::kEos);  // else cut off
  std::vector<float> in = {static_cast<float>(data::Tokenizer::kBos)};
  ex.inputs.push_back("<bos>");
  for (size_t t = 0; t < output.size(); ++t) {
    const std::string token = output[t] == data::Tokenizer::kEos ? "<eos>" : task.tokenizers.target.token(output[t]);
    ex.outputs.push_back(token);
    if (t + 1 == output.size()) break;
    in.push_back(static_cast<float>(output[t]));
    ex.inputs.push_back(token);
  }
  ex.tgt_in = tensor(in, {1, static_cast<int64_t>(in.size())});
  for (const int id : pair.first) ex.source.push_back(task.tokenizers.source.token(id));
  return ex;
}

// Every layer (down) and head (across) of one attention kind on one page: weights (1,H,T,S) per
// layer, each panel preceded by a labelled blank row and column.
plot::Heatmap layer_head_grid(const std::vector<Tensor>& layers, const std::string& title,
                                 const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                                 const std::string& x_label, const std::string& y_label) {
  const int64_t H = layers.front().size(1), T = layers.front().size(2), S = layers.front().size(3);
  plot::Heatmap map{title, x_label, y_label, "attention weight", {}, {}, {}};
  map.scale_min = 0, map.scale_max = 1;
  for (int64_t h = 0; h < H; ++h) {
    map.col_labels.push_back("h" + std::to_string(h + 1));
    map.col_labels.insert(map.col_labels.end(), cols.begin(), cols.end());
  }
  for (size_t l = 0; l < layers.size(); ++l) {
    map.values.emplace_back(static_cast<size_t>(H * (S + 1)), 0.0);
    map.row_labels.push_back("layer " + std::to_string(l + 1));
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> row;
      for (int64_t h = 0; h < H; ++h) {
        row.push_back(0.0);
        const float* w = layers[l].data() + (h * T + t) * S;
        row.insert(row.end(), w, w + S);
      }
      map.values.push_back(std::move(row));
      map.row_labels.push_back(rows[static_cast<size_t>(t)]);
    }
  }
  return map;
}

// For each head of the last layer's cross attention: the source token each output token weighs
// most, and how many output digits look hardest at a source position holding the same digit.
void print_cross_attention_peaks(const Tensor& cross, const Example& ex) {
  const int64_t H = cross.size(1), T = cross.size(2), S = cross.size(3);
  std::printf("the last layer's cross attention: the source token each output token weighs most, per head\n");
  for (int64_t h = 0; h < H; ++h) {
    std::string line;
    int64_t digits = 0, same = 0;
    for (int64_t t = 0; t < T; ++t) {
      const float* w = cross.data() + (h * T + t) * S;
      const auto peak = static_cast<size_t>(std::max_element(w, w + S) - w);
      line += " " + ex.outputs[static_cast<size_t>(t)] + "<" + ex.source[peak];
      if (ex.outputs[static_cast<size_t>(t)].size() == 1 && std::isdigit(static_cast<unsigned char>(ex.outputs[static_cast<size_t>(t)][0]))) {
        ++digits;
        same += ex.source[peak] == ex.outputs[static_cast<size_t>(t)];
      }
    }
    std::printf("  head %lld:%s   (%lld of %lld output digits on the same digit)\n", static_cast<long long>(h + 1),
                line.c_str(), static_cast<long long>(same), static_cast<long long>(digits));
  }
}

}  // namespace

void show_attention_maps(harness::Run& run, models::Transformer& model, const data::TranslationTask& task) {
  model.eval();
  const Example ex = translate_example(model, task, task.test.front());
  const models::TransformerAttentionMaps maps = model.attention_maps(ex.src, ex.valid, ex.tgt_in);
  const std::string quoted = "\"" + task.test_text.front().source + "\"";
  const std::string source_keys = "key: source token, one block per head (h1, h2, ...)", writes = "query: the token it writes";
  run.wrote(plot::save_heatmap(run.path("attention_encoder"),
                         layer_head_grid(maps.encoder,
                                         "Encoder self attention (" + model.config().encoder_attention.kind_name() + ") over " + quoted,
                                         ex.source, ex.source, source_keys, "query: source token")));
  run.wrote(plot::save_heatmap(run.path("attention_decoder"),
                         layer_head_grid(maps.decoder_self, "Decoder masked self attention, translating " + quoted, ex.outputs,
                                         ex.inputs, "key: decoder input, one block per head (h1, h2, ...)", writes)));
  run.wrote(plot::save_heatmap(run.path("attention_cross"), layer_head_grid(maps.cross, "Cross attention, translating " + quoted,
                                                                      ex.outputs, ex.source, source_keys, writes)));
  std::printf("rows: queries, one block per layer; columns: keys, one block per head; a row sums to 1\n");
  print_cross_attention_peaks(maps.cross.back(), ex);
}

}  // namespace ladder::lessons
