// A generator's state saved and put back: what a checkpoint needs so that a resumed run draws the
// numbers the uninterrupted run would have drawn.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/random.h"

using namespace ladder;

namespace {

// What a generator draws next, by every kind of draw (a normal uses a kept spare half the time).
std::vector<double> draws(Generator& gen) {
  std::vector<double> out;
  for (int i = 0; i < 5; ++i) {
    out.push_back(static_cast<double>(gen.next_u64() >> 11));
    out.push_back(gen.uniform());
    out.push_back(gen.normal());
    out.push_back(static_cast<double>(gen.randint(0, 1000)));
  }
  Generator child = gen.child();
  out.push_back(static_cast<double>(child.next_u64() >> 11));
  return out;
}

std::string refusal(const std::string& state) {
  Generator gen;
  try {
    gen.set_state(state);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a generator's state, put back into another, gives the same draws: words, children and a kept normal") {
  Generator original(42);
  original.normal();  // keeps the second normal of the pair: the state must carry it
  original.child();   // and the count of children, which seeds the next child
  const std::string saved = original.state();
  Generator restored(7);
  restored.set_state(saved);
  CHECK(restored.state() == saved);
  CHECK(draws(restored) == draws(original));
  Generator fresh(42);  // the kept normal and the child count matter: a fresh generator draws otherwise
  CHECK(draws(fresh) != draws(restored));
}

TEST_CASE("a state that is not a generator's is refused, saying what a state holds") {
  CHECK(refusal(Generator(1).state()).empty());
  for (const std::string& bad : {std::string(""), std::string("mt19937 1 2 3 4 0 0 0"), std::string("xoshiro256** 1 2 3"),
                                 Generator(1).state() + " extra", std::string("xoshiro256** 1 2 3 4 0 2 0")}) {
    const std::string message = refusal(bad);
    INFO(bad, " -> ", message);
    CHECK(message.find("is not a generator's state") != std::string::npos);
    CHECK(message.find("four 64-bit words") != std::string::npos);
  }
  CHECK(refusal("xoshiro256** 0 0 0 0 0 0 0").find("only zeros") != std::string::npos);
}
