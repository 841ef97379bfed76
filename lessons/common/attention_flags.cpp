#include "lessons/common/attention_flags.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/bigbird_pattern.h"
#include "nn/attention/linear_attention.h"

namespace ladder::lessons {

namespace {

// The flags that set some kinds' settings, and those kinds.
struct KindFlag {
  const char* flag;
  std::vector<std::string> kinds;
};
const KindFlag kKindFlags[] = {{"--feature-map", {"linear"}},
                               {"--chunk", {"linear"}},
                               {"--attention-block", {"bigbird", "vq"}},
                               {"--random-blocks", {"bigbird"}},
                               {"--codes", {"vq"}}};

// The kinds an attention may take: all of them when it is causal, else those that attend both ways.
std::vector<std::string> kinds_for(bool causal) {
  std::vector<std::string> kinds = nn::attention_kind_names();
  if (!causal) std::erase_if(kinds, nn::is_causal_only);
  return kinds;
}

// "bigbird or vq"
std::string either(const std::vector<std::string>& kinds) {
  std::string text;
  for (size_t i = 0; i < kinds.size(); ++i) text += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
  return text;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether BigBird's pattern over `length` positions lists every key block a query block may see.
bool pattern_is_full(const nn::AttentionSettings& s, int64_t length, bool causal) {
  const nn::BlockPattern p = nn::bigbird_pattern(
      length, {.block = s.block, .random_blocks = s.random_blocks, .global_blocks = s.global_blocks, .causal = causal, .seed = s.seed});
  return p.visible_blocks() == (causal ? p.blocks * (p.blocks + 1) / 2 : p.blocks * p.blocks);
}

}  // namespace

void add_attention_options(LessonCli& cli, AttentionFlags& flags, const std::string& where, bool causal) {
  flags.causal = causal;
  cli.option("--attention", flags.kind, "the attention kind of " + where + ": " + nn::joined_names(kinds_for(causal)))
      ->type_name("KIND");
  cli.option("--feature-map", flags.feature_map,
             "with --attention linear: the feature map phi, one of " + nn::joined_names(nn::feature_map_names()))
      ->type_name("MAP");
  flags.added = {"--attention", "--feature-map"};
  if (causal) {
    cli.option("--chunk", flags.chunk, "with --attention linear: positions per chunk of the causal product", positive);
    flags.added.push_back("--chunk");
  }
  cli.option("--attention-block", flags.block,
             causal ? "with --attention bigbird: positions per block of the pattern; with vq: L, positions per block"
                    : "with --attention bigbird: positions per block of the pattern",
             positive);
  cli.option("--random-blocks", flags.random_blocks, "with --attention bigbird: random key blocks per query block",
             non_negative);
  flags.added.insert(flags.added.end(), {"--attention-block", "--random-blocks"});
  if (causal) {
    cli.option("--codes", flags.codes, "with --attention vq: S, the codes of each head's codebook", positive);
    flags.added.push_back("--codes");
  }
}

nn::AttentionSettings attention_settings(const std::string& lesson, const LessonCli& cli, const AttentionFlags& flags,
                                         uint64_t seed) {
  if (!contains(nn::attention_kind_names(), flags.kind))
    fail(lesson.c_str(), "--attention '", flags.kind, "' is not an attention kind; give one of ",
         nn::joined_names(kinds_for(flags.causal)));
  if (!flags.causal && nn::is_causal_only(flags.kind))
    fail(lesson.c_str(), "--attention ", flags.kind, " attends causally only (Transformer-VQ is a decoder), but this "
         "attention is bidirectional; give one of ", nn::joined_names(kinds_for(false)));
  for (const KindFlag& own : kKindFlags)
    if (contains(flags.added, own.flag) && cli.given(own.flag) && !contains(own.kinds, flags.kind))
      fail(lesson.c_str(), own.flag, " sets ", either(own.kinds), " attention, but --attention is ", flags.kind,
           "; leave ", own.flag, " out, or give --attention ", either(own.kinds));
  if (flags.kind == "linear") check_feature_map(lesson, flags.feature_map);
  return {.kind = flags.kind,
          .feature_map = flags.feature_map,
          .chunk = flags.chunk,
          .block = flags.block,
          .random_blocks = flags.random_blocks,
          .seed = seed,
          .codes = flags.codes};
}

void check_feature_map(const std::string& lesson, const std::string& feature_map) {
  const std::vector<std::string> maps = nn::feature_map_names();
  if (!contains(maps, feature_map))
    fail(lesson.c_str(), "--feature-map '", feature_map, "' is not a feature map; give one of ", nn::joined_names(maps));
}

void check_pattern_fits(const std::string& lesson, const nn::AttentionSettings& settings, int64_t length, bool causal,
                        const std::string& length_text) {
  if (settings.kind != "bigbird" || !pattern_is_full(settings, length, causal)) return;
  nn::AttentionSettings smaller = settings;
  while (smaller.block > 1 && pattern_is_full(smaller, length, causal)) --smaller.block;
  const std::string fix = pattern_is_full(smaller, length, causal)
                              ? "the sequence is too short for a sparse pattern: give --attention full"
                              : cat("give --attention-block ", smaller.block, " (the largest that leaves key blocks out) or fewer --random-blocks");
  const int64_t blocks = (length + settings.block - 1) / settings.block;
  fail(lesson.c_str(), "--attention bigbird with --attention-block ", settings.block, " and --random-blocks ",
       settings.random_blocks, " over ", length_text, " in ", blocks, blocks == 1 ? " block" : " blocks",
       " lets every query block see every key block: that is full attention, only slower; ", fix);
}

std::string describe_attention(const nn::AttentionSettings& s, bool causal) {
  if (s.kind == "full") return "full (softmax)";
  if (s.kind == "linear") return cat("linear (feature map ", s.feature_map, causal ? cat(", chunk ", s.chunk) : "", ")");
  if (s.kind == "bigbird") return cat("bigbird (blocks of ", s.block, ", ", s.random_blocks, " random per query block)");
  if (s.kind == "vq") return cat("vq (blocks of ", s.block, ", ", s.codes, " codes per head)");
  return s.kind;
}

}  // namespace ladder::lessons
