#include "harness/attention_flags.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "data/visible_text.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"
#include "nn/attention/linear_attention.h"

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

// Whether a lesson declares a flag for `setting` of a kind it runs causal or not; lesson 15 leaves
// out the compared settings, whose every choice it runs.
bool has_flag(const nn::KindSetting& setting, bool causal, bool compared_too) {
  return !setting.flag.empty() && !std::holds_alternative<bool>(setting.default_value) &&
         (causal || !setting.causal_only) && (compared_too || !setting.compared);
}

// The lesson's default for `setting` of `kind`: the kind's own, else the one for every kind; none
// when the lesson gives neither (the registered default then holds).
const nn::SettingValue* lesson_default(const AttentionFlags& flags, const std::string& kind,
                                       const nn::KindSetting& setting) {
  const auto own = flags.kind_defaults.find(kind);
  if (own != flags.kind_defaults.end() && own->second.count(setting.name)) return &own->second.at(setting.name);
  const auto shared = flags.defaults.find(setting.name);
  return shared != flags.defaults.end() ? &shared->second : nullptr;
}

std::string text_of(const nn::SettingValue& value) {
  return std::visit([](const auto& v) { return cat(v); }, value);
}

// A kind that reads a flag, and the setting it reads.
struct Reader {
  const nn::KindDescription* kind;
  const nn::KindSetting* setting;
  nn::SettingValue lesson_default;  // the lesson's, or the registered one
};

// Every flag the offered kinds read, in the registry's order, with its readers.
std::vector<std::pair<std::string, std::vector<Reader>>> setting_flags(const AttentionFlags& flags,
                                                                       const std::vector<Offered>& offered,
                                                                       bool compared_too) {
  std::vector<std::pair<std::string, std::vector<Reader>>> found;
  for (const Offered& o : offered)
    for (const nn::KindSetting& setting : o.kind->settings) {
      if (!has_flag(setting, o.causal, compared_too)) continue;
      auto at = std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == setting.flag; });
      if (at == found.end()) at = found.emplace(found.end(), setting.flag, std::vector<Reader>{});
      const nn::SettingValue* own = lesson_default(flags, o.kind->name, setting);
      at->second.push_back({o.kind, &setting, own ? *own : setting.default_value});
    }
  return found;
}

// Fails unless every setting the lesson gives a default for is one some kind has, with a value of
// its type and range.
void check_defaults(const std::string& lesson, const AttentionFlags& flags) {
  for (const auto& [name, value] : flags.defaults) {
    bool found = false;
    for (const nn::KindDescription& kind : nn::attention_kinds())
      for (const nn::KindSetting& setting : kind.settings)
        if (setting.name == name) {
          found = true;
          nn::AttentionSettings{.kind = kind.name, .values = {{name, value}}}.value(name);
        }
    if (!found) fail(lesson.c_str(), "a default for '", name, "', a setting no attention kind has");
  }
  for (const auto& [kind, defaults] : flags.kind_defaults)
    for (const auto& [name, value] : defaults) nn::AttentionSettings{.kind = kind, .values = {{name, value}}}.value(name);
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
      std::string type = setting.name.substr(setting.name.rfind('_') + 1);  // feature_map: MAP
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
  std::string noun = setting.name;
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

// Whether BigBird's pattern over `length` positions lists every key block a query block may see.
bool pattern_is_full(const nn::AttentionSettings& s, int64_t length, bool causal) {
  const nn::BlockPattern p = nn::bigbird_pattern(length, nn::bigbird_pattern_settings(s, causal));
  return p.visible_blocks() == (causal ? p.blocks * (p.blocks + 1) / 2 : p.blocks * p.blocks);
}

}  // namespace

void add_attention_options(LessonCli& cli, AttentionFlags& flags, const std::string& where, bool causal) {
  flags.causal = causal;
  const std::vector<Offered> offered = offered_for(causal);
  cli.option("--attention", flags.kind, "the attention kind of " + where + ": " + nn::joined_names(names_of(offered)), "KIND");
  flags.added = {"--attention"};
  declare_setting_flags(cli, flags, offered, /*compared_too=*/true, "with --attention ", "with ");
}

nn::AttentionSettings kind_settings(const LessonCli& cli, const AttentionFlags& flags, const std::string& kind,
                                    uint64_t seed) {
  nn::AttentionSettings settings{.kind = kind, .seed = seed};
  for (const nn::KindSetting& setting : nn::registered_kind(kind).settings) {
    if (contains(flags.added, setting.flag) && cli.given(setting.flag)) {
      if (flags.numbers.count(setting.flag)) settings.values[setting.name] = flags.numbers.at(setting.flag);
      else settings.values[setting.name] = flags.words.at(setting.flag);
    } else if (const nn::SettingValue* value = lesson_default(flags, kind, setting)) {
      settings.values[setting.name] = *value;
    }
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
          with_choice.settings.values[setting.name] = choice;
          each_choice.push_back(with_choice);
        }
      runs = each_choice;
    }
    all.insert(all.end(), runs.begin(), runs.end());
  }
  return all;
}

void check_feature_map(const std::string& lesson, const std::string& feature_map) {
  const nn::KindSetting& setting = nn::registered_kind(nn::LinearAttention::kName).setting("feature_map");
  check_word(lesson, setting.flag, setting, feature_map);
}

void check_pattern_fits(const std::string& lesson, const nn::AttentionSettings& settings, int64_t length, bool causal,
                        const std::string& length_text, const std::string& kind_flag) {
  if (settings.kind != nn::BigBirdAttention::kName || !pattern_is_full(settings, length, causal)) return;
  const int64_t block = settings.number("block"), random_blocks = settings.number("random_blocks");
  nn::AttentionSettings smaller = settings;
  while (smaller.number("block") > 1 && pattern_is_full(smaller, length, causal))
    smaller.values["block"] = smaller.number("block") - 1;
  const std::string fix = pattern_is_full(smaller, length, causal)
                              ? cat("the sequence is too short for a sparse pattern: ",
                                    kind_flag == "--attention" ? "give --attention full" : "leave bigbird out of " + kind_flag)
                              : cat("give --attention-block ", smaller.number("block"),
                                    " (the largest that leaves key blocks out) or fewer --random-blocks");
  const int64_t blocks = (length + block - 1) / block;
  fail(lesson.c_str(), kind_flag, " bigbird with --attention-block ", block, " and --random-blocks ", random_blocks,
       " over ", length_text, " in ", blocks, blocks == 1 ? " block" : " blocks",
       " lets every query block see every key block: that is full attention, only slower; ", fix);
}

std::string describe_attention(const nn::AttentionSettings& settings, bool causal) {
  return nn::registered_kind(settings.kind).describe(settings, causal);
}

}  // namespace ladder::harness
