#include "lessons/11_gpt/sampling.h"

#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "data/tokenizer.h"
#include "harness/memory_estimate.h"
#include "io/checkpoint.h"
#include "lessons/char_gpt/char_gpt.h"
#include "lessons/memory/model_memory.h"
#include "models/gpt.h"
#include "models/gpt_text.h"
#include "nn/module.h"

namespace ladder::lessons {

void SamplingFlags::add_to(harness::LessonCli& cli) {
  cli.option("--load", load, "a checkpoint of this lesson to sample from, instead of training");
  cli.option("--sample-chars", length, "with --load: how many characters to sample", {1, 100000});
  cli.option("--prompt", prompt, "the text samples continue (empty: the start of the validation text; with --load, a newline; "
                                 "with --lines, the start of every sampled line)");
  cli.option("--temperature", temperature, "with --load: the sampling temperature", {0.01f, 100.0f});
}

void SamplingFlags::refuse_without_load(const harness::LessonCli& cli) const {
  for (const char* flag : {"--sample-chars", "--temperature"})
    if (cli.given(flag)) fail(cli.lesson().c_str(), flag, " applies to sampling from a checkpoint: give it with --load FILE");
}

std::string save_for_sampling(harness::Run& run, const models::GPT& model, const data::CharCorpus& corpus) {
  return run.save_checkpoint(model, {{"tokenizer", corpus.tokenizer.to_json()},
                                     {"gpt_config", models::gpt_config_to_json(model.config())},
                                     {"lines", corpus.lines ? "true" : "false"}});
}

namespace {

// With --load nothing is trained or written: a flag that would change any of that is refused.
void refuse_training_flags(const harness::LessonCli& cli, const harness::AttentionFlags& attention) {
  std::vector<std::string> flags = {"--steps", "--lr",      "--batch",      "--layers", "--heads", "--embd",  "--dropout", "--weight-decay",
                                    "--warmup", "--lr-floor", "--decay", "--clip", "--eval-every", "--data", "--val", "--lines", "--out", "--quick",
                                    "--resume", "--stop-after"};
  flags.insert(flags.end(), attention.added.begin(), attention.added.end());
  std::string given;
  for (const std::string& flag : flags)
    if (cli.given(flag)) given += cat(given.empty() ? "" : ", ", cli.typed(flag));
  if (!given.empty())
    fail(cli.lesson().c_str(), "--load samples from a trained model, so ", given,
         " would be ignored (the model's settings come from the checkpoint, and nothing is trained); leave them out, "
         "or train without --load");
}

// The checkpoint's model, rebuilt from its metadata, and `length` characters of samples. A
// `shorter` context than the checkpoint's block_size keeps the first `shorter` learned positions,
// the only ones the model then uses: its samples see at most that many characters.
void sample_from(const std::string& lesson, const std::string& file, std::optional<int64_t> shorter, const std::string& prompt,
                 int64_t length, float temperature, uint64_t seed) {
  io::TensorFile checkpoint = io::load_checkpoint(file);
  const std::map<std::string, std::string>& metadata = checkpoint.metadata;
  const auto saved_by = metadata.find("lesson");
  if (saved_by == metadata.end() || saved_by->second != lesson || !metadata.count("gpt_config") || !metadata.count("tokenizer"))
    fail(lesson.c_str(), "--load ", file, " is a checkpoint of ", saved_by == metadata.end() ? "an unknown lesson" : "lesson " + saved_by->second,
         ", not a GPT of lesson 11 (its metadata needs lesson 11_gpt, gpt_config and tokenizer); give the model.safetensors a run "
         "of this lesson wrote");
  const data::Tokenizer tokenizer = data::Tokenizer::from_json(metadata.at("tokenizer"));
  models::GPTConfig config = models::gpt_config_from_json(metadata.at("gpt_config"));
  harness::check_memory(lesson, gpt_sampling_memory(config));
  const int64_t learned = config.block_size, context = shorter.value_or(learned);
  if (context > learned)
    fail(lesson.c_str(), "--context ", context, " is longer than the ", learned, " positions the model of ", file,
         " learned (its block_size); give --context ", learned, " or less, or leave --context out");
  config.block_size = context;
  const auto wpe = checkpoint.tensors.find("transformer.wpe.weight");  // (learned, n_embd)
  if (context < learned && wpe != checkpoint.tensors.end()) wpe->second = narrow(wpe->second, 0, 0, context);
  models::GPT model(config);
  model.load_state_dict(checkpoint.tensors);
  const bool lines = metadata.count("lines") && metadata.at("lines") == "true";  // older checkpoints read a stream
  std::printf("%s: a GPT of %s parameters, %lld layers, %lld heads, %lld wide, context %s, %s attention\n", file.c_str(),
              nn::with_commas(model.num_parameters()).c_str(), static_cast<long long>(config.n_layer),
              static_cast<long long>(config.n_head), static_cast<long long>(config.n_embd),
              (context < learned ? cat(context, " of the ", learned, " it learned") : cat(learned)).c_str(),
              harness::describe_attention(config.attention, /*causal=*/true).c_str());
  Generator gen(seed);
  if (!lines) {
    std::printf("%s\n", models::sample_text(model, tokenizer, prompt_ids(lesson, tokenizer, prompt), length, temperature, gen).c_str());
    return;
  }
  const std::vector<int> start = prompt.empty() ? std::vector<int>{} : prompt_ids(lesson, tokenizer, prompt);
  for (int64_t printed = 0; printed < length;)  // whole lines until --sample-chars characters are out
    for (const models::SampledLine& line : models::sample_lines(model, tokenizer, start, 10, temperature, gen)) {
      if (printed >= length) break;
      std::printf("%s\n", tokenizer.decode(line.ids).c_str());
      printed += std::ssize(line.ids) + 1;
    }
}

}  // namespace

void sample_checkpoint(const harness::LessonCli& cli, const harness::AttentionFlags& attention, const SamplingFlags& flags,
                       int64_t context) {
  refuse_training_flags(cli, attention);
  sample_from(cli.lesson(), flags.load, cli.given("--context") ? std::optional(context) : std::nullopt, flags.prompt, flags.length,
              flags.temperature, cli.common.seed);
}

}  // namespace ladder::lessons
