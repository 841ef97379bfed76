// How the codebooks of a GPT with Transformer-VQ attention serve its keys, as lesson 14 follows
// them over training: at each evaluation, per layer, the codes the keys of some validation windows
// take, the codebook perplexity of the EMA counts and the quantisation error (record_codebooks, a
// call in the lesson's loop); at the end, a table and the plots (codebook_report).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "lessons/char_gpt/char_gpt.h"
#include "harness/resume.h"
#include "harness/run.h"
#include "models/gpt.h"
#include "nn/attention/vq_attention.h"

namespace ladder::lessons {

// How one layer's codebook serves the keys of the validation windows.
struct CodebookState {
  double used = 0;        // codes that some validation key takes, per head (mean over heads)
  double perplexity = 0;  // exp(entropy) of the EMA counts: codes in effective use, per head (mean)
  double error = 0;       // mean |k - code|^2 over mean |k - mean k|^2: the share of the keys' spread the codes miss
};

// The validation sequences whose keys the reports read: windows of the stream, or with --lines
// whole lines, framed and padded, their padding marked so that no report reads it.
struct KeySample {
  Tensor ids;        // (B,T)
  Tensor real;       // (B,T): 1 = a real position, 0 = a line's padding; undefined: every position is real
  std::string unit;  // "windows" or "lines"
};
// The first `count` windows of `context` ids (or as many as the stream holds), or the first `count` lines.
KeySample validation_sample(const data::CharCorpus& corpus, int64_t context, int64_t count);
// The rows of per_position (B,H,T,D) at the positions `real` (B,T) marks, every head alike -> (1,H,N,D)
// with N real positions; per_position itself when `real` is undefined.
Tensor at_real_positions(const Tensor& per_position, const Tensor& real);

// What lesson 14 follows of the VQ model: its codebooks at every evaluation, per layer.
struct CodebookHistory {
  KeySample sample;  // the validation sequences the keys come from
  std::vector<double> steps;
  std::vector<std::vector<CodebookState>> layers;  // [layer][evaluation]
};

// The VQ attention of every block of a model, in order (none when the model attends otherwise).
std::vector<nn::VQAttention*> vq_layers(models::GPT& model);

// Adds the state of every VQ layer of `model` at `step` to `history`; nothing when the model has no VQ layer.
void record_codebooks(models::GPT& model, int64_t step, CodebookHistory& history);

// The history so far, for the loop's checkpoints: without it a resumed run's plots would lose the
// evaluations before the interruption (record before the evaluation is recorded, which saves it).
harness::Carried codebook_carried(CodebookHistory& history);

struct CodebookSummary {
  CodebookState first_layer;  // at the end of training
  int64_t codes = 0;
};

// Prints the codebooks' last state and draws them: over training (vq_codebook, vq_key_error), the
// counts at the end (vq_code_counts), and layer 1 head 1's keys and codes projected on their keys'
// two principal directions (vq_keys_and_codes).
CodebookSummary codebook_report(harness::Run& run, models::GPT& model, const CodebookHistory& history);

// Layer 1's codes in use, their perplexity and the keys' quantisation error, for summary.json,
// each note starting with `part` ("part 3: ").
void add_codebook_metrics(const CodebookSummary& codebook, nlohmann::ordered_json& metrics, harness::MetricNotes& notes,
                          const std::string& part);

}  // namespace ladder::lessons
