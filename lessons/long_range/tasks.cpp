#include "lessons/long_range/tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"

namespace ladder::lessons {

namespace {

// One line per bin of lengths, its share drawn as a bar.
void print_lengths(const std::vector<int64_t>& lengths, int64_t low, int64_t high) {
  constexpr int64_t kBins = 8;
  const int64_t width = (high - low + kBins) / kBins;  // kBins bins of this width cover low..high
  std::vector<int64_t> counts(static_cast<size_t>(kBins));
  for (const int64_t l : lengths) ++counts[static_cast<size_t>((l - low) / width)];
  for (int64_t b = 0; b < kBins && low + b * width <= high; ++b) {
    const double share = static_cast<double>(counts[b]) / static_cast<double>(lengths.size());
    std::printf("   %5lld-%-5lld %5.1f%% %s\n", static_cast<long long>(low + b * width),
                static_cast<long long>(std::min(high, low + (b + 1) * width - 1)), 100 * share,
                std::string(static_cast<size_t>(std::lround(60 * share)), '#').c_str());
  }
}

// At most `most` characters of `text`, and " ..." when cut.
std::string cut(const std::string& text, size_t most) { return text.size() > most ? text.substr(0, most) + " ..." : text; }

}  // namespace

LongRangeTask listops_task(const data::ListOpsOptions& o, bool describe) {
  const data::ListOpsSplits splits = data::make_listops(o);
  const auto labelled = [](const data::ListOpsSet& set) { return data::LabelledBatch{set.tokens, set.answers, set.valid}; };
  LongRangeTask task{"listops", "ListOps", labelled(splits.train), labelled(splits.val), labelled(splits.test),
                     data::kListOpsVocabulary, data::kListOpsClasses, o.max_len, false, 1.0 / data::kListOpsClasses};
  task.majority = models::majority_share(task.train.labels, task.test.labels, task.classes);
  if (!describe) return task;
  std::printf("\n== 1a. ListOps: %lld to %lld tokens, trees of up to %lld levels (operators nested up to %lld deep), "
              "2 to %lld arguments ==\n",
              static_cast<long long>(o.min_len), static_cast<long long>(o.max_len), static_cast<long long>(o.max_depth),
              static_cast<long long>(o.max_depth - 1), static_cast<long long>(o.max_args));
  const std::string example = "[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]";
  std::printf("   the rules on a short one: %s = %lld\n", example.c_str(),
              static_cast<long long>(data::evaluate_listops(data::listops_ids(example)).answer));
  std::printf("   a test expression (%lld tokens, answer %d): %s\n", static_cast<long long>(splits.test.lengths[0]),
              static_cast<int>(splits.test.answers.data()[0]), cut(data::listops_text(data::listops_row(splits.test, 0)), 150).c_str());
  int64_t deepest = 0, depth_sum = 0;
  for (int64_t n = 0; n < o.train; ++n) {
    const int64_t depth = data::evaluate_listops(data::listops_row(splits.train, n)).depth;
    deepest = std::max(deepest, depth), depth_sum += depth;
  }
  std::printf("   operators nested over the %lld training expressions: %.1f deep on average, %lld at most; no\n"
              "   expression is in two of the parts (%lld training, %lld validation, %lld test)\n",
              static_cast<long long>(o.train), static_cast<double>(depth_sum) / static_cast<double>(o.train),
              static_cast<long long>(deepest), static_cast<long long>(o.train), static_cast<long long>(o.val),
              static_cast<long long>(o.test));
  std::printf("   lengths of the training expressions (tokens):\n");
  print_lengths(splits.train.lengths, o.min_len, o.max_len);
  const auto counts = data::answer_counts(splits.train);
  std::printf("   answers:");
  for (int64_t a = 0; a < data::kListOpsClasses; ++a)
    std::printf(" %lld:%.1f%%", static_cast<long long>(a),
                100.0 * static_cast<double>(counts[static_cast<size_t>(a)]) / static_cast<double>(o.train));
  std::printf("\n");
  std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%% (of the test set)\n", 100 * task.chance,
              100 * task.majority);
  return task;
}

LongRangeTask recall_task(const data::MqarOptions& o, const std::string& name, const std::string& title) {
  const data::MqarSplits splits = data::make_mqar(o);
  LongRangeTask task{name, title, splits.train, splits.val, splits.test, data::mqar_vocabulary(o), o.values, o.tokens(),
                     true, data::mqar_chance(o)};
  task.majority = models::majority_share(task.train.labels, task.test.labels, task.classes);
  return task;
}

void print_mqar(const std::string& heading, const data::MqarOptions& o, const LongRangeTask& task) {
  std::printf("\n== %s: %lld key-value pairs (of %lld keys, %lld values), %s, then %lld queries among %lld tokens ==\n",
              heading.c_str(), static_cast<long long>(o.pairs), static_cast<long long>(o.keys),
              static_cast<long long>(o.values), o.one_hop ? "one token each" : "two tokens each",
              static_cast<long long>(o.queries), static_cast<long long>(o.tokens()));
  std::printf("   (kK a key, vV a value%s, '.' filler; a query is a key with '?', answered where it stands by its pair's value)\n",
              o.one_hop ? ", kK=V a pair" : "");
  std::printf("   %s\n", cut(data::mqar_text(task.test, 0, o), 150).c_str());
  std::string answers;
  for (int64_t t = 0; t < task.test.labels.size(1); ++t)
    if (const float label = task.test.labels.data()[t]; label != static_cast<float>(data::kNoAnswer))
      answers += (answers.empty() ? "" : " ") + std::to_string(static_cast<int>(label));
  std::printf("   the answers, in the order asked: %s\n", cut(answers, 150).c_str());
  std::printf("   chance: guessing %.1f%% per query, always the most common answer %.1f%%\n", 100 * task.chance,
              100 * task.majority);
}

}  // namespace ladder::lessons
