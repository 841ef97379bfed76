// The encoder classifier (models/encoder_classifier.h) with every attention kind: shapes, padding
// that changes nothing, learning a small task that needs a look across the sequence, and errors.
#include "helpers.h"
#include "small_attention.h"

#include "fit_classifier.h"
#include "models/encoder_classifier.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

EncoderClassifierConfig tiny(const std::string& kind, Pooling pooling = Pooling::mean) {
  return {.vocab_size = 12, .num_classes = 3, .max_len = 24, .d_model = 16, .nhead = 2, .num_layers = 2,
          .dim_feedforward = 32, .pooling = pooling,
          .attention = ladder::testing::small_attention(kind, ladder::testing::blocks_of(4))};
}

}  // namespace

TEST_CASE("encoder classifier: logits per sequence, and padding changes nothing, for every kind") {
  for (const std::string& kind : nn::attention_kind_names()) {
    SUBCASE(kind.c_str()) {
      Generator gen(1);
      EncoderClassifierConfig config = tiny(kind);
      config.causal = !nn::registered_kind(kind).attends(false);  // a causal-only kind: read at the last real token
      if (config.causal) config.pooling = Pooling::last;
      EncoderClassifier model(config, gen);
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

TEST_CASE("encoder classifier: Transformer-VQ runs as a bidirectional encoder and as a causal one") {
  Generator gen(2);
  EncoderClassifier encoder(tiny("vq"), gen);
  const Tensor ids = randint(0, 12, {2, 16}, gen);
  const Tensor logits = encoder.forward(ids);
  CHECK(logits.shape() == Shape{2, 3});
  EncoderClassifierConfig causal = tiny("vq", Pooling::last);
  causal.causal = true;
  EncoderClassifier decoder(causal, gen);
  CHECK(decoder.forward(ids).shape() == Shape{2, 3});
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

TEST_CASE("pool: the mean over the real positions, the first position, the last real position") {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2});  // (B,T,E) = (2,3,2)
  const Tensor valid = tensor({1, 1, 1, 1, 1, 0}, {2, 3});                  // the second row has 2 tokens
  check_tensor(pool(x, valid, Pooling::mean), {2, 2}, {3, 4, 8, 9});
  check_tensor(pool(x, Tensor(), Pooling::mean), {2, 2}, {3, 4, 9, 10});
  check_tensor(pool(x, valid, Pooling::first), {2, 2}, {1, 2, 7, 8});
  check_tensor(pool(x, valid, Pooling::last), {2, 2}, {5, 6, 9, 10});
  check_tensor(pool(x, Tensor(), Pooling::last), {2, 2}, {5, 6, 11, 12});
  CHECK(std::string(pooling_name(Pooling::last)) == "last");
}

TEST_CASE("encoder classifier, causal: a position sees none after it; read last, padding after changes nothing") {
  Generator gen(4);
  EncoderClassifierConfig config = tiny("full", Pooling::first);
  config.causal = true;
  EncoderClassifier causal(config, gen);
  const Tensor ids = randint(0, 12, {2, 16}, gen);
  Tensor later = ids.clone();
  for (int64_t t = 1; t < 16; ++t) later.data()[t] = static_cast<float>((static_cast<int64_t>(ids.data()[t]) + 1) % 12);
  // Read at position 0, which sees only itself: the tokens after it change nothing.
  check_close(causal.forward(later), causal.forward(ids), 1e-6f);
  config.causal = false;
  Generator same(4);
  EncoderClassifier bidirectional(config, same);  // the same weights: position 0 sees them all
  CHECK(amax(abs(bidirectional.forward(later) - bidirectional.forward(ids))).item() > 1e-6);
  CHECK(causal.repr().find("causal") != std::string::npos);

  for (const std::string kind : {"full", "vq"}) {  // read last, with padding after the tokens
    SUBCASE(kind.c_str()) {
      EncoderClassifierConfig last_config = tiny(kind, Pooling::last);
      last_config.causal = true;
      Generator again(4);
      EncoderClassifier last(last_config, again);
      Tensor valid = ones({2, 16});
      for (int64_t t = 10; t < 16; ++t) valid.data()[16 + t] = 0;  // the second sequence has 10 tokens
      const Tensor logits = last.forward(ids, valid);
      check_close(narrow(logits, 0, 1, 1), last.forward(narrow(narrow(ids, 0, 1, 1), 1, 0, 10)), 1e-5f);
      Tensor earlier = ids.clone();
      earlier.data()[16] = static_cast<float>((static_cast<int64_t>(ids.data()[16]) + 1) % 12);
      CHECK(amax(abs(last.forward(earlier, valid) - logits)).item() > 1e-6);  // the last real token sees the first
    }
  }
}

TEST_CASE("encoder classifier learns which of three marker tokens a sequence holds (full and linear)" * doctest::skip(testing::kSanitized)) {
  for (const std::string kind : {"full", "linear"}) {
    SUBCASE(kind.c_str()) {
      Generator gen(2);
      EncoderClassifier model(tiny(kind, Pooling::first), gen);
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
      CHECK(testing::fit_and_count(model, batch, 300, 3e-3f) >= 190);  // chance: about 67
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
