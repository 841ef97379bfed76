// The encoder classifier (models/encoder_classifier.h) with every attention kind: shapes, padding
// that changes nothing, learning a small task that needs a look across the sequence, and errors.
#include "helpers.h"

#include "models/encoder_classifier.h"
#include "optim/adam.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

EncoderClassifierConfig tiny(const std::string& kind, Pooling pooling = Pooling::mean) {
  return {.vocab_size = 12, .num_classes = 3, .max_len = 24, .d_model = 16, .nhead = 2, .num_layers = 2,
          .dim_feedforward = 32, .pooling = pooling, .attention = {.kind = kind, .block = 4, .random_blocks = 1}};
}

}  // namespace

TEST_CASE("encoder classifier: logits per sequence, and padding changes nothing, for every kind") {
  for (const std::string& kind : nn::attention_kind_names()) {
    if (nn::is_causal_only(kind)) continue;  // vq: a decoder's attention; this encoder is bidirectional
    SUBCASE(kind.c_str()) {
      Generator gen(1);
      EncoderClassifier model(tiny(kind), gen);
      const Tensor ids = randint(0, 12, {2, 16}, gen);
      Tensor valid = ones({2, 16});
      for (int64_t t = 10; t < 16; ++t) valid.data()[16 + t] = 0;  // the second sequence has 10 tokens
      const Tensor logits = model.forward(ids, valid);
      CHECK(logits.shape() == Shape{2, 3});
      Tensor other = ids.clone();
      for (int64_t t = 10; t < 16; ++t) other.data()[16 + t] = static_cast<float>((t * 5) % 12);
      check_close(model.forward(other, valid), logits, 1e-5f);
    }
  }
}

TEST_CASE("encoder classifier: a causal-only kind is refused with the reason") {
  Generator gen(2);
  EncoderClassifier model(tiny("vq"), gen);
  check_error([&] { model.forward(randint(0, 12, {2, 16}, gen)); }, {"VQAttention", "causal only"});
}

TEST_CASE("encoder classifier, last pooling: each sequence answers from its last real token") {
  for (const std::string kind : {"full", "linear"}) {
    SUBCASE(kind.c_str()) {
      Generator gen(3);
      EncoderClassifier model(tiny(kind, Pooling::last), gen);
      const Tensor ids = randint(0, 12, {2, 16}, gen);
      Tensor valid = ones({2, 16});
      for (int64_t t = 10; t < 16; ++t) valid.data()[16 + t] = 0;  // the second sequence has 10 tokens
      const Tensor logits = model.forward(ids, valid);
      // The second sequence alone, without its padding: read at position 9 as well.
      const Tensor alone = model.forward(narrow(narrow(ids, 0, 1, 1), 1, 0, 10));
      check_close(narrow(logits, 0, 1, 1), alone, 1e-5f);
      // Changing an earlier token of the first sequence changes its answer: the last position sees it.
      Tensor other = ids.clone();
      other.data()[2] = static_cast<float>((static_cast<int64_t>(ids.data()[2]) + 1) % 12);
      CHECK(amax(abs(model.forward(other, valid) - logits)).item() > 1e-6);
    }
  }
}

TEST_CASE("encoder classifier learns which of three marker tokens a sequence holds (full and linear)") {
  for (const std::string kind : {"full", "linear"}) {
    SUBCASE(kind.c_str()) {
      Generator gen(2);
      EncoderClassifier model(tiny(kind, Pooling::first), gen);
      optim::Adam adam(model.named_parameters(), {.lr = 3e-3f});
      // Token 0 is the [CLS] read out; one of tokens 1, 2, 3 sits somewhere among fillers 4..11.
      const auto batch = [&](int64_t B) {
        std::vector<float> ids, labels;
        for (int64_t b = 0; b < B; ++b) {
          const int64_t label = gen.randint(0, 3), at = gen.randint(1, 16);
          for (int64_t t = 0; t < 16; ++t) {
            const int64_t token = t == 0 ? 0 : t == at ? 1 + label : gen.randint(4, 12);
            ids.push_back(static_cast<float>(token));
          }
          labels.push_back(static_cast<float>(label));
        }
        return std::pair{tensor(ids, {B, 16}), tensor(labels, {B})};
      };
      for (int step = 0; step < 300; ++step) {
        const auto [ids, labels] = batch(32);
        const Tensor loss = cross_entropy(model.forward(ids), labels);
        adam.zero_grad();
        loss.backward();
        adam.step();
      }
      const auto [ids, labels] = batch(200);
      const Tensor predicted = argmax(model.forward(ids), 1);
      int64_t right = 0;
      for (int64_t i = 0; i < 200; ++i) right += predicted.data()[i] == labels.data()[i];
      CHECK(right >= 190);  // chance: about 67
    }
  }
}

TEST_CASE("encoder classifier errors") {
  check_error([] { EncoderClassifier(EncoderClassifierConfig{.vocab_size = 5}); },
              {"EncoderClassifier", "must be positive", "5, 0"});
  EncoderClassifier model(tiny("full"));
  check_error([&] { model.forward(zeros({2, 30})); }, {"30", "24"});
  check_error([&] { model.forward(zeros({4})); }, {"ids must be (B,T)", "(4)"});
  check_error([&] { model.forward(zeros({2, 8}), ones({2, 7})); }, {"valid must have the shape of ids (2,8)", "(2,7)"});
}
