// One seeded random generator: the same seed gives the same numbers on every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// xoshiro256** (Blackman and Vigna), seeded through splitmix64. Everything random in ladder
// (initialisation, dropout masks, batch sampling) draws from a Generator, so a seed pins a run.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0);
  void manual_seed(uint64_t seed);

  uint64_t next_u64();

  // A new generator for something that draws later (a dropout layer's masks), seeded from this
  // one's state and a count of the children made so far. This one's sequence does not move, so
  // what is drawn next (the following layers' weights) is the same with or without the child.
  Generator child();
  float uniform();                     // [0, 1), 24 random bits
  float uniform(float low, float high);  // [low, high)
  float normal();                      // mean 0, std 1 (Box-Muller)
  int64_t randint(int64_t low, int64_t high);  // [low, high), unbiased

  // Everything that decides what is drawn next, as one line of text (the four state words, the
  // children made, a Box-Muller normal kept for the next call): a checkpoint saves it so that a
  // resumed run draws what the uninterrupted run would have drawn.
  std::string state() const;
  // Puts back a state() exactly; text that is not one is refused, saying what it lacks.
  void set_state(const std::string& state);

 private:
  uint64_t state_[4];
  uint64_t children_ = 0;
  bool has_spare_normal_ = false;
  float spare_normal_ = 0;
};

// Fisher-Yates: puts the items in a random order, every order equally likely.
template <class T>
void shuffle(std::vector<T>& items, Generator& gen) {
  for (size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(i)))]);
}

// The generator used when a function is not given one; seed it with manual_seed().
Generator& default_generator();
void manual_seed(uint64_t seed);

}  // namespace ladder
