// When a training loss shows that training diverged: the one rule every lesson's run applies.
#pragma once

#include <cmath>
#include <string>

namespace ladder::harness {

// What a training loss is. A cross-entropy (nats) has diverged as soon as its perplexity exp(loss)
// overflows, at a loss of about 710, although the loss itself is still a finite number.
enum class LossKind { plain, cross_entropy };

// A loss this many times its first value has diverged, however finite: no lesson's loss rises that
// far while it trains (at --lr 1e30, lesson 02's logistic regression is 1e28 times its first after one step).
constexpr double kDivergedRise = 1e6;

// Why `loss` shows that training diverged ("the loss is nan"), or "" while it has not: it is NaN or
// infinite, a cross-entropy whose perplexity overflows, or more than kDivergedRise times `first`,
// the first loss of the same training (NaN: not known). `what` names the loss: "the CNN's loss".
std::string divergence(double loss, LossKind kind, const std::string& what = "the loss", double first = NAN);

// A number as a message shows it: NaN without the sign printf would give it ("-nan").
std::string number_name(double value);

}  // namespace ladder::harness
