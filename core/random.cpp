#include "core/random.h"

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <sstream>

#include "core/error.h"

namespace ladder {

namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Generator::Generator(uint64_t seed) { manual_seed(seed); }

void Generator::manual_seed(uint64_t seed) {
  // splitmix64 spreads any seed (even 0) over the 256-bit state.
  for (uint64_t& word : state_) word = splitmix64(seed);
  children_ = 0;
  has_spare_normal_ = false;
}

Generator Generator::child() {
  uint64_t mix = ++children_;
  for (const uint64_t word : state_) mix = splitmix64(mix) ^ word;
  return Generator(mix);  // the constructor spreads the mix through splitmix64 again
}

uint64_t Generator::next_u64() {
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

float Generator::uniform() {
  // The top 24 bits fill a float mantissa exactly: values k / 2^24, never 1.
  return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f;
}

float Generator::uniform(float low, float high) { return low + (high - low) * uniform(); }

float Generator::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  // Box-Muller turns two uniforms into two independent normals; keep the second for the next call.
  const double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]: log is finite
  const double u2 = static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_normal_ = static_cast<float>(radius * std::sin(angle));
  has_spare_normal_ = true;
  return static_cast<float>(radius * std::cos(angle));
}

int64_t Generator::randint(int64_t low, int64_t high) {
  if (high <= low) fail("randint", "empty range [", low, ", ", high, "): high must be greater than low");
  const uint64_t range = static_cast<uint64_t>(high - low);
  // Reject the top partial block of 2^64 so that every value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t r;
  do r = next_u64();
  while (r >= limit);
  return low + static_cast<int64_t>(r % range);
}

std::string Generator::state() const {
  char text[160];
  std::snprintf(text, sizeof text, "xoshiro256** %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %" PRIu64 " %d %08" PRIx32,
                state_[0], state_[1], state_[2], state_[3], children_, has_spare_normal_ ? 1 : 0,
                std::bit_cast<uint32_t>(spare_normal_));  // the float's bits: exact, unlike a decimal
  return text;
}

void Generator::set_state(const std::string& state) {
  std::istringstream in(state);
  std::string kind;
  uint64_t words[4], children;
  int spare_kept;
  uint32_t spare_bits;
  in >> kind >> std::hex >> words[0] >> words[1] >> words[2] >> words[3] >> std::dec >> children >> spare_kept >> std::hex >>
      spare_bits;
  std::string rest;
  if (kind != "xoshiro256**" || in.fail() || (in >> rest) || (spare_kept != 0 && spare_kept != 1))
    fail("Generator::set_state", "'", state, "' is not a generator's state (\"xoshiro256**\", four 64-bit words in hex, the ",
         "children made, 0 or 1 for a kept normal and its float bits in hex)");
  if ((words[0] | words[1] | words[2] | words[3]) == 0)
    fail("Generator::set_state", "'", state, "' has four zero words: xoshiro256** would draw only zeros from it");
  std::copy(words, words + 4, state_);
  children_ = children;
  has_spare_normal_ = spare_kept == 1;
  spare_normal_ = std::bit_cast<float>(spare_bits);
}

Generator& default_generator() {
  static Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ladder
