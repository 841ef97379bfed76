// The attention kind as lesson flags: --attention (full, linear, bigbird, vq: whatever
// nn::attention_kind_names() lists; vq only where the attention is causal), and the settings of
// each kind, --feature-map and --chunk (linear), --attention-block (bigbird and vq: positions per
// block), --random-blocks (bigbird) and --codes (vq). A lesson adds them to its LessonCli,
// and after parse() turns them into the nn::AttentionSettings its model takes. A setting given for
// a kind that does not read it is refused, never ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lessons/common/cli.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

struct AttentionFlags {
  std::string kind = "full";
  std::string feature_map = "elu";  // linear
  int64_t chunk = 64;               // linear, causal
  int64_t block = 16;               // bigbird, vq: positions per block
  int64_t random_blocks = 2;        // bigbird: random key blocks per query block
  int64_t codes = 64;               // vq: codes per head
  bool causal = true;               // whether the attention the flags choose is causal (vq needs it)
  std::vector<std::string> added;   // the flags add_attention_options declared, for --load's refusal
};

// Declares the flags on `cli` with the defaults `flags` holds. `where` names the attention they
// choose in --help ("every block's self attention"); --chunk only when that attention is causal.
void add_attention_options(LessonCli& cli, AttentionFlags& flags, const std::string& where, bool causal);

// The settings the flags chose, after cli.parse(): fails naming the flag, the value and the choices
// for an unknown kind or feature map, for a kind's setting given with another kind, and for vq where
// the attention is bidirectional.
// `seed` draws BigBird's random blocks.
nn::AttentionSettings attention_settings(const std::string& lesson, const LessonCli& cli, const AttentionFlags& flags,
                                         uint64_t seed);

// Fails unless `feature_map` is one of nn::feature_map_names(), naming --feature-map, the value and
// the choices: attention_settings checks it this way, and so does a lesson that takes the flag alone.
void check_feature_map(const std::string& lesson, const std::string& feature_map);

// Fails when BigBird over a sequence of `length` positions would list every key block for every
// query block, that is, be full attention, only slower: names `length_text` (what set the length:
// "--block 64") and the largest --attention-block that leaves key blocks out. Any other kind passes.
void check_pattern_fits(const std::string& lesson, const nn::AttentionSettings& settings, int64_t length, bool causal,
                        const std::string& length_text);

// One line saying which kind runs with which settings: "linear (feature map elu, chunk 64)".
std::string describe_attention(const nn::AttentionSettings& settings, bool causal);

}  // namespace ladder::lessons
