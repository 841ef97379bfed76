#include "data/copied_keys.h"

#include "core/error.h"

namespace ladder::data {

CopiedKeys copied_keys(int64_t keys, int64_t queries, int64_t dim, float noise, Generator& gen) {
  if (queries < 1 || queries > keys || dim < 1)
    fail("copied_keys", "needs 1 <= queries <= keys and dim >= 1 (each query copies a key of its own), got ", queries,
         " queries, ", keys, " keys, dim ", dim);
  CopiedKeys out;
  out.keys = randn({1, keys, dim}, gen);
  out.copied.resize(static_cast<size_t>(keys));
  for (int64_t k = 0; k < keys; ++k) out.copied[static_cast<size_t>(k)] = k;
  shuffle(out.copied, gen);
  out.copied.resize(static_cast<size_t>(queries));
  out.queries = empty({1, queries, dim});
  const Tensor jitter = randn({queries, dim}, gen);
  for (int64_t q = 0; q < queries; ++q)
    for (int64_t j = 0; j < dim; ++j)
      out.queries.data()[q * dim + j] =
          out.keys.data()[out.copied[static_cast<size_t>(q)] * dim + j] + noise * jitter.data()[q * dim + j];
  return out;
}

}  // namespace ladder::data
