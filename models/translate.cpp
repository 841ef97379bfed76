#include "models/translate.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/autograd.h"
#include "core/ops.h"
#include "models/bleu.h"
#include "models/decoding.h"

namespace ladder::models {

namespace {

constexpr size_t kEvalBatch = 256;  // pairs per batch when scoring or translating without a graph

// Every pair of `pairs` once, in batches of at most `size` padded as the task pads: body(indices
// into pairs, the batch). The date task's batches are consecutive pairs; a bucketed task's hold one
// source length each.
template <class Body>
void for_each_batch(const data::TranslationTask& task, const std::vector<data::IdPair>& pairs, size_t size, const Body& body) {
  std::vector<std::vector<size_t>> batches;
  if (task.bucketed) {
    batches = data::batches_by_source_length(pairs, size);
  } else {
    for (size_t begin = 0; begin < pairs.size(); begin += size) {
      batches.emplace_back(std::min(size, pairs.size() - begin));
      for (size_t k = 0; k < batches.back().size(); ++k) batches.back()[k] = begin + k;
    }
  }
  for (const std::vector<size_t>& indices : batches) {
    std::vector<data::IdPair> chunk;
    for (const size_t i : indices) chunk.push_back(pairs[i]);
    body(indices, task.padded(chunk));
  }
}

}  // namespace

double translation_loss(EncoderDecoder& model, const data::TranslationTask& task, const std::vector<data::IdPair>& pairs) {
  NoGradGuard no_grad;
  model.eval();  // no dropout
  double total = 0, tokens = 0;
  for_each_batch(task, pairs, kEvalBatch, [&](const std::vector<size_t>&, const data::Seq2SeqBatch& b) {
    const Tensor logits = model.forward(b.src, b.src_mask, b.tgt_in);
    total += cross_entropy(logits, b.tgt_out, {.ignore_index = data::Tokenizer::kPad, .reduction = Reduction::sum}).item();
    tokens += sum(b.tgt_mask).item();
  });
  return total / tokens;
}

Translations translate(EncoderDecoder& model, const data::TranslationTask& task, const std::vector<data::IdPair>& pairs,
                       int64_t beam, float alpha) {
  model.eval();
  const auto start = std::chrono::steady_clock::now();
  const DecodeOptions options{.max_len = task.longest_target + 1};  // the <eos> included
  Translations out;
  out.outputs.resize(pairs.size());
  for_each_batch(task, pairs, beam == 0 ? kEvalBatch : 1, [&](const std::vector<size_t>& indices, const data::Seq2SeqBatch& b) {
    if (beam == 0) {
      std::vector<std::vector<int>> outputs = greedy_decode(model, b.src, b.src_mask, options);
      for (size_t k = 0; k < indices.size(); ++k) out.outputs[indices[k]] = std::move(outputs[k]);
    } else {
      out.outputs[indices.front()] = beam_search(model, b.src, b.src_mask, beam, alpha, options).front().tokens;
    }
  });
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

TranslationScores score(const Translations& translations, const std::vector<data::IdPair>& pairs) {
  std::map<std::vector<int>, std::vector<std::vector<int>>> targets_of;  // a source's every target in `pairs`
  for (const auto& [source, target] : pairs) targets_of[source].push_back(target);
  std::vector<std::vector<std::vector<int>>> references;
  int64_t exact = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    references.push_back(targets_of[pairs[i].first]);
    exact += std::ranges::find(references.back(), translations.outputs[i]) != references.back().end();
  }
  return {static_cast<double>(exact) / static_cast<double>(pairs.size()), corpus_bleu(translations.outputs, references).bleu};
}

}  // namespace ladder::models
