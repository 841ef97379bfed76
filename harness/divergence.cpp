#include "harness/divergence.h"

#include "core/error.h"

namespace ladder::harness {

std::string number_name(double value) { return std::isnan(value) ? "nan" : cat(value); }

std::string divergence(double loss, LossKind kind, const std::string& what, double first) {
  if (!std::isfinite(loss)) return what + " is " + number_name(loss);
  if (kind == LossKind::cross_entropy && !std::isfinite(std::exp(loss)))
    return cat(what, " is ", loss, " nats, so large that its perplexity exp(loss) is infinite");
  if (first > 0 && loss > kDivergedRise * first)
    return cat(what, " is ", loss, ", more than a million times its first value, ", first);
  return "";
}

}  // namespace ladder::harness
