#include "harness/attention_flags.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "data/visible_text.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/feature_map.h"

namespace ladder::harness {

namespace {

// A kind a lesson offers, and whether it runs causal there.
struct Offered {
  const nn::KindDescription* kind;
  bool causal;
};

// The kinds an attention may take: those that attend its way.
std::vector<Offered> offered_for(bool causal) {
  std::vector<Offered> offered;
  for (const nn::KindDescription& kind : nn::attention_kinds())
    if (kind.attends(causal)) offered.push_back({&kind, causal});
  return offered;
}

// Every kind, bidirectional where it can attend so.
std::vector<Offered> offered_every() {
  std::vector<Offered> offered;
  for (const nn::KindDescription& kind : nn::attention_kinds()) offered.push_back({&kind, !kind.attends(false)});
  return offered;
}

std::vector<std::string> names_of(const std::vector<Offered>& offered) {
  std::vector<std::string> names;
  for (const Offered& o : offered) names.push_back(o.kind->name);
  return names;
}

// "bigbird or vq"
std::string either(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether a lesson declares a flag for `setting` of `kind` when it runs causal or not; lesson 15
// leaves out the compared settings, whose every choice it runs.
bool has_flag(const nn::KindDescription& kind, const nn::KindSetting& setting, bool causal, bool compared_too) {
  return !setting.flag.empty() && !std::holds_alternative<bool>(setting.get(kind.defaults)) &&
         (causal || !setting.causal_only) && (compared_too || !setting.compared);
}

// The settings `kind` starts from in this lesson: the lesson's struct for it, else the kind's defaults.
const nn::KindSettings& lesson_start(const AttentionFlags& flags, const nn::KindDescription& kind) {
  for (const nn::KindSettings& own : flags.defaults)
    if (kind.describes(own)) return own;
  return kind.defaults;
}

std::string text_of(const nn::SettingValue& value) {
  return std::visit([](const auto& v) { return cat(v); }, value);
}

// A kind that reads a flag, and the setting it reads.
struct Reader {
  const nn::KindDescription* kind;
  const nn::KindSetting* setting;
  nn::SettingValue lesson_default;  // the lesson's, or the kind's own
};

// Every flag the offered kinds read, in the registry's order, with its readers.
std::vector<std::pair<std::string, std::vector<Reader>>> setting_flags(const AttentionFlags& flags,
                                                                       const std::vector<Offered>& offered,
                                                                       bool compared_too) {
  std::vector<std::pair<std::string, std::vector<Reader>>> found;
  for (const Offered& o : offered)
    for (const nn::KindSetting& setting : o.kind->settings) {
      if (!has_flag(*o.kind, setting, o.causal, compared_too)) continue;
      auto at = std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == setting.flag; });
      if (at == found.end()) at = found.emplace(found.end(), setting.flag, std::vector<Reader>{});
      at->second.push_back({o.kind, &setting, setting.get(lesson_start(flags, *o.kind))});
    }
  return found;
}

// Fails unless the lesson's defaults are one struct per kind at most, each in its kind's ranges and choices.
void check_defaults(const std::string& lesson, const AttentionFlags& flags) {
  for (const nn::KindDescription& kind : nn::attention_kinds()) {
    const auto given = std::count_if(flags.defaults.begin(), flags.defaults.end(),
                                     [&](const nn::KindSettings& own) { return kind.describes(own); });
    if (given > 1) fail(lesson.c_str(), "the defaults hold ", given, " settings of ", kind.name, " attention; give one");
  }
  for (const nn::KindSettings& own : flags.defaults) nn::registered_kind(own).check(own);
}

// Declares one flag per setting the offered kinds read. `with` starts the help of the first kind
// reading it ("with --attention "), `then` that of the others ("with ").
void declare_setting_flags(LessonCli& cli, AttentionFlags& flags, const std::vector<Offered>& offered,
                           bool compared_too, const std::string& with, const std::string& then) {
  check_defaults(cli.lesson(), flags);
  for (const auto& [flag, readers] : setting_flags(flags, offered, compared_too)) {
    std::string help, defaults;
    for (const Reader& r : readers) {
      help += (help.empty() ? with : "; " + then) + r.kind->name + ": " + r.setting->help;
      if (!r.setting->choices.empty()) help += ", one of " + nn::joined_names(r.setting->choices);
      defaults += (defaults.empty() ? "" : ", ") + r.kind->name + " " + text_of(r.lesson_default);
    }
    const bool defaults_differ = std::any_of(readers.begin(), readers.end(),
                                             [&](const Reader& r) { return r.lesson_default != readers.front().lesson_default; });
    if (defaults_differ) help += " (without it: " + defaults + ")";
    const nn::KindSetting& setting = *readers.front().setting;
    if (const auto* number = std::get_if<int64_t>(&readers.front().lesson_default)) {
      flags.numbers[flag] = *number;
      cli.option(flag, flags.numbers[flag], help, Range<int64_t>{setting.min, setting.max});
    } else {
      flags.words[flag] = std::get<std::string>(readers.front().lesson_default);
      std::string type = setting.key.substr(setting.key.rfind('_') + 1);  // feature_map: MAP
      std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::toupper(c); });
      cli.option(flag, flags.words[flag], help, type);
    }
    flags.added.push_back(flag);
  }
}

// Fails unless `value`, given as `flag`, is one of the choices of `setting`.
void check_word(const std::string& lesson, const std::string& flag, const nn::KindSetting& setting,
                const std::string& value) {
  if (setting.choices.empty() || contains(setting.choices, value)) return;
  std::string noun = setting.key;
  std::replace(noun.begin(), noun.end(), '_', ' ');
  fail(lesson.c_str(), flag, " '", data::visible(value), "' is not a ", noun, "; give one of ", nn::joined_names(setting.choices));
}

// Fails for a word flag given with a value that is none of its choices.
void check_word_flags(const std::string& lesson, const LessonCli& cli, const AttentionFlags& flags) {
  for (const nn::KindDescription& kind : nn::attention_kinds())
    for (const nn::KindSetting& setting : kind.settings)
      if (flags.words.count(setting.flag) && cli.given(setting.flag))
        check_word(lesson, setting.flag, setting, flags.words.at(setting.flag));
}

// "with --attention-block 8 and --random-blocks 2": the kind's settings that have a flag, as flags.
std::string as_flags(const nn::KindDescription& kind, const nn::KindSettings& own) {
  std::string text;
  for (const nn::KindSetting& setting : kind.settings)
    if (!setting.flag.empty())
      text += (text.empty() ? "with " : " and ") + setting.flag + " " + text_of(setting.get(own));
  return text;
}

}  // namespace

void add_attention_options(LessonCli& cli, AttentionFlags& flags, const std::string& where, bool causal) {
  flags.causal = causal;
  const std::vector<Offered> offered = offered_for(causal);
  cli.option("--attention", flags.kind, "the attention kind of " + where + ": " + nn::joined_names(names_of(offered)), "KIND");
  flags.added = {"--attention"};
  declare_setting_flags(cli, flags, offered, /*compared_too=*/true, "with --attention ", "with ");
}

nn::AttentionSettings kind_settings(const LessonCli& cli, const AttentionFlags& flags, const std::string& kind_name,
                                    uint64_t seed) {
  const nn::KindDescription& kind = nn::registered_kind(kind_name);
  nn::AttentionSettings settings{.kind = lesson_start(flags, kind), .seed = seed};
  for (const nn::KindSetting& setting : kind.settings) {
    if (!contains(flags.added, setting.flag) || !cli.given(setting.flag)) continue;
    if (flags.numbers.count(setting.flag)) setting.set(settings.kind, flags.numbers.at(setting.flag));
    else setting.set(settings.kind, flags.words.at(setting.flag));
  }
  return settings;
}

nn::AttentionSettings attention_settings(const std::string& lesson, const LessonCli& cli, const AttentionFlags& flags,
                                         uint64_t seed) {
  const std::vector<Offered> offered = offered_for(flags.causal);
  if (!contains(nn::attention_kind_names(), flags.kind))
    fail(lesson.c_str(), "--attention '", data::visible(flags.kind), "' is not an attention kind; give one of ",
         nn::joined_names(names_of(offered)));
  const nn::KindDescription& chosen = nn::registered_kind(flags.kind);
  if (!chosen.attends(flags.causal))
    fail(lesson.c_str(), "--attention ", flags.kind, " attends ", flags.causal ? "bidirectionally" : "causally",
         " only (", chosen.why_one_way, "), but this attention is ", flags.causal ? "causal" : "bidirectional",
         "; give one of ", nn::joined_names(names_of(offered)));
  for (const auto& [flag, readers] : setting_flags(flags, offered, /*compared_too=*/true)) {
    std::vector<std::string> kinds;
    for (const Reader& r : readers) kinds.push_back(r.kind->name);
    if (cli.given(flag) && !contains(kinds, flags.kind))
      fail(lesson.c_str(), flag, " sets ", either(kinds), " attention, but --attention is ", flags.kind, "; leave ",
           flag, " out, or give --attention ", either(kinds));
  }
  check_word_flags(lesson, cli, flags);
  return kind_settings(cli, flags, flags.kind, seed);
}

void add_every_kind_options(LessonCli& cli, AttentionFlags& flags) {
  declare_setting_flags(cli, flags, offered_every(), /*compared_too=*/false, "", "");
}

std::vector<KindRun> every_kind(const LessonCli& cli, const AttentionFlags& flags, uint64_t seed) {
  check_word_flags(cli.lesson(), cli, flags);
  std::vector<KindRun> all;
  for (const Offered& o : offered_every()) {
    std::vector<KindRun> runs = {{o.kind->name, kind_settings(cli, flags, o.kind->name, seed), o.causal}};
    for (const nn::KindSetting& setting : o.kind->settings) {
      if (!setting.compared) continue;
      std::vector<KindRun> each_choice;
      for (const KindRun& run : runs)
        for (const std::string& choice : setting.choices) {
          KindRun with_choice = run;
          with_choice.name += "_" + choice;
          setting.set(with_choice.settings.kind, choice);
          each_choice.push_back(with_choice);
        }
      runs = each_choice;
    }
    all.insert(all.end(), runs.begin(), runs.end());
  }
  return all;
}

void check_feature_map(const std::string& lesson, const std::string& feature_map) {
  check_word(lesson, "--feature-map", {.key = "feature_map", .choices = nn::feature_map_names()}, feature_map);
}

void check_pattern_fits(const std::string& lesson, const nn::AttentionSettings& settings, int64_t length, bool causal,
                        const std::string& length_text, const std::string& kind_flag) {
  const nn::KindDescription& kind = nn::registered_kind(settings.kind);
  if (!kind.wasted_over) return;
  const nn::WastedPattern wasted = kind.wasted_over(settings, length, causal);
  if (wasted.why.empty()) return;
  const std::string fix =
      !wasted.fix.empty() ? wasted.fix
                          : cat("the sequence is too short for a sparse pattern: ",
                                kind_flag == "--attention" ? "give --attention " + nn::registered_kind(nn::KindSettings{}).name
                                                           : "leave " + kind.name + " out of " + kind_flag);
  fail(lesson.c_str(), kind_flag, " ", kind.name, " ", as_flags(kind, settings.kind), " over ", length_text, " ",
       wasted.why, ": that is full attention, only slower; ", fix);
}

std::string describe_attention(const nn::AttentionSettings& settings, bool causal) {
  return nn::registered_kind(settings.kind).describe(settings, causal);
}

}  // namespace ladder::harness
