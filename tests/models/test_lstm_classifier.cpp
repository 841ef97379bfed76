// The LSTM baseline of the long-range lessons (models/lstm_classifier.h): shapes, padding after the
// tokens that changes nothing, the last real position read, learning a small task, and errors.
#include "helpers.h"

#include "fit_classifier.h"
#include "models/lstm_classifier.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

LstmClassifierConfig tiny(Pooling pooling) { return {.vocab_size = 12, .num_classes = 3, .width = 16, .pooling = pooling}; }

// Two sequences of 16 tokens; the second has 10 real ones, then padding.
Tensor second_has_ten() {
  Tensor valid = ones({2, 16});
  for (int64_t t = 10; t < 16; ++t) valid.data()[16 + t] = 0;
  return valid;
}

}  // namespace

TEST_CASE("lstm classifier: logits per sequence; padding after the tokens changes nothing, mean and last") {
  for (const Pooling pooling : {Pooling::mean, Pooling::last}) {
    SUBCASE(pooling_name(pooling)) {
      Generator gen(1);
      LstmClassifier model(tiny(pooling), gen);
      const Tensor ids = randint(0, 12, {2, 16}, gen), valid = second_has_ten();
      const Tensor logits = model.forward(ids, valid);
      CHECK(logits.shape() == Shape{2, 3});
      Tensor other = ids.clone();
      for (int64_t t = 10; t < 16; ++t) other.data()[16 + t] = static_cast<float>((t * 5) % 12);
      check_close(model.forward(other, valid), logits, 1e-6f);
      // The second sequence alone, without its padding, answers the same.
      check_close(narrow(logits, 0, 1, 1), model.forward(narrow(narrow(ids, 0, 1, 1), 1, 0, 10)), 1e-5f);
      // The first token reaches the answer through the recurrence.
      Tensor first = ids.clone();
      first.data()[16] = static_cast<float>((static_cast<int64_t>(ids.data()[16]) + 1) % 12);
      CHECK(amax(abs(model.forward(first, valid) - logits)).item() > 1e-6);
    }
  }
  Generator gen(1);
  CHECK(LstmClassifier(tiny(Pooling::last), gen).repr() ==
        "LstmClassifier(vocab_size=12, num_classes=3, width=16, pooling=last)");
}

TEST_CASE("lstm classifier learns the first token of a sequence, read at its last") {
  Generator gen(2);
  LstmClassifier model(tiny(Pooling::last), gen);
  // The label is token 0 (one of 0, 1, 2); 7 fillers 3..11 follow: the state must carry it.
  const auto batch = [&](int64_t B) {
    std::vector<float> ids, labels;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t label = gen.randint(0, 3);
      ids.push_back(static_cast<float>(label));
      for (int64_t t = 1; t < 8; ++t) ids.push_back(static_cast<float>(gen.randint(3, 12)));
      labels.push_back(static_cast<float>(label));
    }
    return std::pair{tensor(ids, {B, 8}), tensor(labels, {B})};
  };
  CHECK(testing::fit_and_count(model, batch, 150, 1e-2f) >= 190);  // chance: about 67
}

TEST_CASE("lstm classifier errors") {
  check_error([] { LstmClassifier(LstmClassifierConfig{.vocab_size = 5}); }, {"LstmClassifier", "must be positive", "5, 0, 64"});
  LstmClassifier model(tiny(Pooling::mean));
  check_error([&] { model.forward(zeros({4})); }, {"ids must be (B,T)", "(4)"});
  check_error([&] { model.forward(zeros({2, 8}), ones({2, 7})); }, {"valid must have the shape of ids (2,8)", "(2,7)"});
}
