// The attention kind as lesson flags, read from the registry of kinds (nn/attention/attention_registry.h):
// --attention (the kinds that attend the way the lesson's attention does: vq only where it is causal)
// and one flag per setting a kind registers with one (--feature-map and --chunk for linear,
// --attention-block for bigbird and vq alike, --random-blocks, --codes, ...). A lesson adds them to
// its LessonCli and after parse() turns them into the nn::AttentionSettings its model takes. A
// setting given for a kind that does not read it is refused, never ignored. Lesson 15 takes every
// kind at once (add_every_kind_options, every_kind).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"

namespace ladder::harness {

struct AttentionFlags {
  std::string kind = nn::registered_kind(nn::KindSettings{}).name;  // the default kind, full attention
  // The lesson's own defaults for the kinds it starts elsewhere, a settings struct each
  // (nn::BigBirdAttention::Settings{.block = 8}); a kind not here starts from its struct's defaults.
  // A flag given on the command line sets every kind that reads it.
  std::vector<nn::KindSettings> defaults;
  bool causal = true;              // whether the attention the flags choose is causal (vq needs it)
  std::vector<std::string> added;  // the flags declared, for --load's refusal
  // What the setting flags hold after parse(), by flag.
  std::map<std::string, int64_t> numbers;
  std::map<std::string, std::string> words;
};

// Declares --attention and the settings' flags on `cli`, with the defaults `flags` holds. `where`
// names the attention they choose in --help ("every block's self attention"); a setting read only
// by causal attention (--chunk) only when that attention is causal.
void add_attention_options(LessonCli& cli, AttentionFlags& flags, const std::string& where, bool causal);

// The settings the flags chose, after cli.parse(): fails naming the flag, the value and the choices
// for an unknown kind or word, for a kind's setting given with another kind, and for a kind that
// does not attend the way this attention does. `seed` draws BigBird's random blocks and FAVOR+'s
// features.
nn::AttentionSettings attention_settings(const std::string& lesson, const LessonCli& cli, const AttentionFlags& flags,
                                         uint64_t seed);

// The settings kind `kind` gets from the flags and the lesson's defaults, whatever --attention says.
nn::AttentionSettings kind_settings(const LessonCli& cli, const AttentionFlags& flags, const std::string& kind,
                                    uint64_t seed);
// The same as the settings struct Own of that kind.
template <class Own>
Own kind_settings(const LessonCli& cli, const AttentionFlags& flags) {
  return kind_settings(cli, flags, nn::registered_kind(Own{}).name, 0).kind.template as<Own>();
}

// Lesson 15's way: every kind side by side, each bidirectional where it can attend so and causal
// where it must. Declares the settings' flags (no --attention; not the compared settings, whose every
// choice runs).
void add_every_kind_options(LessonCli& cli, AttentionFlags& flags);

// One kind as lesson 15 runs it.
struct KindRun {
  std::string name;  // the kind's name, and the choice of each compared setting: "linear_elu"
  nn::AttentionSettings settings;
  bool causal = false;
};

// Every kind of the registry, once per choice of its compared settings, in the registry's order.
std::vector<KindRun> every_kind(const LessonCli& cli, const AttentionFlags& flags, uint64_t seed);

// Fails unless `feature_map` is one of nn::feature_map_names(), naming --feature-map, the value and
// the choices: for a lesson that takes that flag alone.
void check_feature_map(const std::string& lesson, const std::string& feature_map);

// Fails when the kind over a sequence of `length` positions would do full attention's work, only
// slower (BigBird's pattern listing every key block for every query block): names `length_text` (what
// set the length: "--block 64") and the kind's fix (the largest --attention-block that leaves key
// blocks out). A kind that never does (KindDescription::wasted_over) passes. `kind_flag` is the flag
// that chose the kind: --attention, or lesson 15's --kinds.
void check_pattern_fits(const std::string& lesson, const nn::AttentionSettings& settings, int64_t length, bool causal,
                        const std::string& length_text, const std::string& kind_flag = "--attention");

// One line saying which kind runs with which settings: "linear (feature map elu, chunk 64)".
std::string describe_attention(const nn::AttentionSettings& settings, bool causal);

}  // namespace ladder::harness
