#include "data/symbol_sequences.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace ladder::data {

namespace {

bool two_counts_equal(const std::vector<int64_t>& counts) {
  for (size_t a = 0; a < counts.size(); ++a)
    for (size_t b = a + 1; b < counts.size(); ++b)
      if (counts[a] == counts[b]) return true;
  return false;
}

}  // namespace

LabelledBatch most_frequent_symbol(int64_t n, int64_t length, int64_t symbols, Generator& gen) {
  if (n < 1 || length < 1 || symbols < 2)
    fail("most_frequent_symbol", "needs n >= 1, length >= 1 and symbols >= 2, got ", n, ", ", length, " and ", symbols);
  if (length < symbols * (symbols - 1) / 2)  // counts 0, 1, ..., symbols - 1 at the least
    fail("most_frequent_symbol", length, " positions cannot hold ", symbols, " symbols all with different counts");
  LabelledBatch b{empty({n, length}), empty({n})};
  std::vector<int64_t> counts(static_cast<size_t>(symbols));
  for (int64_t i = 0; i < n; ++i) {
    do {
      std::fill(counts.begin(), counts.end(), 0);
      for (int64_t t = 0; t < length; ++t) {
        const int64_t symbol = gen.randint(0, symbols);
        b.inputs.data()[i * length + t] = static_cast<float>(symbol);
        ++counts[static_cast<size_t>(symbol)];
      }
    } while (two_counts_equal(counts));
    b.labels.data()[i] = static_cast<float>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  }
  return b;
}

}  // namespace ladder::data
