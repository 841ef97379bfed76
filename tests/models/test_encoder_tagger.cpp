// The encoder tagger (models/encoder_tagger.h): logits at every position, for every attention kind;
// the loss over the asked positions only; the maps of each layer, which change no logit; padding and
// (causal) later tokens that change nothing; learning multi-query recall's one-hop form; the errors.
#include "helpers.h"
#include "small_attention.h"

#include "data/mqar.h"
#include "core/autograd.h"
#include "models/encoder_tagger.h"
#include "nn/attention/full_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

EncoderClassifierConfig tiny(const std::string& kind) {
  return {.vocab_size = 12, .num_classes = 3, .max_len = 24, .d_model = 16, .nhead = 2, .num_layers = 2,
          .dim_feedforward = 32, .attention = ladder::testing::small_attention(kind, ladder::testing::blocks_of(4)),
          .causal = !nn::registered_kind(kind).attends(false)};
}

}  // namespace

TEST_CASE("encoder tagger: logits at every position, the same with maps, padding changes nothing, for every kind") {
  for (const std::string& kind : nn::attention_kind_names()) {
    SUBCASE(kind.c_str()) {
      Generator gen(1);
      EncoderTagger model(tiny(kind), gen);
      const Tensor ids = randint(0, 12, {2, 16}, gen);
      Tensor valid = ones({2, 16});
      for (int64_t t = 10; t < 16; ++t) valid.data()[16 + t] = 0;  // the second sequence has 10 tokens
      const Tensor logits = model.forward(ids, valid);
      CHECK(logits.shape() == Shape{2, 16, 3});
      std::vector<Tensor> maps;
      check_close(model.forward(ids, valid, &maps), logits, 1e-4f);
      REQUIRE(maps.size() == 2);  // one per layer
      for (const Tensor& map : maps) {
        CHECK(map.shape() == Shape{2, 2, 16, 16});
        // Linformer's implied rows are softmax weights times F, the delta rule's a triangular solve's:
        // neither need sum to 1
        if (kind != "linformer" && kind != "delta" && kind != "gated_delta")
          check_close(sum(narrow(map, 0, 0, 1), {3}), ones({1, 2, 16}), 1e-4f);
      }
      Tensor other = ids.clone();
      for (int64_t t = 10; t < 16; ++t) other.data()[16 + t] = static_cast<float>((t * 5) % 12);
      check_close(narrow(model.forward(other, valid), 1, 0, 10), narrow(logits, 1, 0, 10), 1e-5f);
    }
  }
}

TEST_CASE("encoder tagger: the loss is the cross entropy of the asked positions alone") {
  Generator gen(2);
  EncoderTagger model(tiny("full"), gen);
  const Tensor ids = randint(0, 12, {2, 8}, gen);
  Tensor labels = full({2, 8}, static_cast<float>(data::kNoAnswer));
  labels.data()[3] = 2, labels.data()[8 + 5] = 0, labels.data()[8 + 7] = 1;  // three asked positions
  const Tensor loss = model.loss({ids, labels, Tensor()});
  const Tensor logits = model.forward(ids);  // (2,8,3)
  const Tensor asked = concat({narrow(narrow(logits, 0, 0, 1), 1, 3, 1), narrow(narrow(logits, 0, 1, 1), 1, 5, 1),
                               narrow(narrow(logits, 0, 1, 1), 1, 7, 1)}, 1);  // (1,3,3)
  CHECK(loss.item() == doctest::Approx(cross_entropy(asked, tensor({2, 0, 1}, {1, 3})).item()).epsilon(1e-5));
  check_error([&] { model.loss({ids, tensor({1, 2}), Tensor()}); }, {"EncoderTagger::loss", "labels must be (B,T)", "(2)"});
  check_error([&] { model.forward(tensor({1, 2})); }, {"EncoderTagger", "ids must be (B,T)"});
}

TEST_CASE("encoder tagger, causal: an answer does not change when later tokens do") {
  Generator gen(3);
  EncoderClassifierConfig config = tiny("full");
  config.causal = true;
  EncoderTagger model(config, gen);
  const Tensor ids = randint(0, 12, {1, 12}, gen);
  Tensor later = ids.clone();
  for (int64_t t = 7; t < 12; ++t) later.data()[t] = static_cast<float>((t * 7) % 12);
  check_close(narrow(model.forward(later), 1, 0, 7), narrow(model.forward(ids), 1, 0, 7), 1e-5f);
}

TEST_CASE("encoder tagger: one layer of full attention learns multi-query recall's one-hop form") {
  // 4 pairs of 6 keys and 3 values, every key asked: chance 1/3; six seeds of the weights and batches all gave 1.0.
  const data::MqarOptions o{.pairs = 4, .queries = 4, .keys = 6, .values = 3, .one_hop = true, .train = 2000,
                            .val = 0, .test = 200, .seed = 1};
  const data::MqarSplits task = data::make_mqar(o);
  Generator gen(4), batches(5);
  EncoderTagger model({.vocab_size = data::mqar_vocabulary(o), .num_classes = 3, .max_len = o.tokens(), .d_model = 32,
                       .nhead = 2, .num_layers = 1, .dim_feedforward = 64, .attention = nn::full_attention()},
                      gen);
  optim::AdamW adamw(model.named_parameters(), {.lr = 3e-3f});
  for (int step = 0; step < 300; ++step) optim::train_step(model, adamw, data::sample_examples(task.train, 32, batches), 1.0f);
  NoGradGuard no_grad;
  const Tensor predicted = argmax(model.forward(task.test.inputs), 2);
  double right = 0, asked = 0;
  for (int64_t i = 0; i < predicted.numel(); ++i) {
    if (task.test.labels.data()[i] == data::kNoAnswer) continue;
    ++asked;
    right += predicted.data()[i] == task.test.labels.data()[i];
  }
  CHECK(asked == 800);
  CHECK(right / asked > 0.9);
}
