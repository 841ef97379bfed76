// The GRU encoder-decoder: teacher forcing equals decoding step by step, padding changes nothing.
#include "helpers.h"

#include "core/autograd.h"
#include "data/tokenizer.h"
#include "models/seq2seq.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

Seq2SeqConfig small() { return {.src_vocab = 9, .tgt_vocab = 7, .embed = 5, .hidden = 6, .layers = 2}; }

// Two sources of lengths 4 and 2 (padding 0 at the end), and their valid masks.
const Tensor kSrc = tensor({4, 5, 6, 7, 8, 4, 0, 0}, {2, 4});
const Tensor kValid = tensor({1, 1, 1, 1, 1, 1, 0, 0}, {2, 4});
const Tensor kTgtIn = tensor({1, 3, 4, 5, 1, 6, 0, 0}, {2, 4});  // <bos> then targets; row 1 padded

}  // namespace

TEST_CASE("decoding step by step gives the logits of the whole target read at once") {
  Generator gen(1);
  Seq2Seq model(small(), gen);
  model.eval();
  const Tensor whole = model.forward(kSrc, kValid, kTgtIn);  // (2,4,7)
  CHECK(whole.shape() == Shape{2, 4, 7});
  DecoderState state = model.encode(kSrc, kValid);
  for (int64_t t = 0; t < 4; ++t) {
    const Tensor step = model.decode_step(state, squeeze(narrow(kTgtIn, 1, t, 1), 1));  // (2,7)
    check_close(step, squeeze(narrow(whole, 1, t, 1), 1), 1e-5f);
  }
}

TEST_CASE("padded source positions are never read: changing their ids changes nothing") {
  Generator gen(2);
  Seq2Seq model(small(), gen);
  model.eval();
  const Tensor other = tensor({4, 5, 6, 7, 8, 4, 3, 2}, {2, 4});
  check_close(model.forward(other, kValid, kTgtIn), model.forward(kSrc, kValid, kTgtIn), 0);
  check_close(pad_on_the_left(kSrc, kValid), tensor({4, 5, 6, 7, 0, 0, 8, 4}, {2, 4}), 0);
}

TEST_CASE("the loss ignores padded targets: decoder inputs after the end change neither loss nor gradients") {
  Generator gen(3);
  Seq2Seq model(small(), gen);
  const Tensor tgt_out = tensor({3, 4, 5, 2, 6, 2, 0, 0}, {2, 4});  // row 1: 6 <eos>, then padding
  auto loss_and_grads = [&](const Tensor& tgt_in) {
    model.zero_grad();
    const Tensor loss = cross_entropy(model.forward(kSrc, kValid, tgt_in), tgt_out,
                                      {.ignore_index = data::Tokenizer::kPad});
    loss.backward();
    std::vector<Tensor> grads{loss.detach()};
    for (const Tensor& p : model.parameters()) grads.push_back(p.grad().clone());
    return grads;
  };
  const auto base = loss_and_grads(kTgtIn);
  const auto changed = loss_and_grads(tensor({1, 3, 4, 5, 1, 6, 5, 4}, {2, 4}));
  for (size_t i = 0; i < base.size(); ++i) check_close(changed[i], base[i], 0);
}

TEST_CASE("every parameter, the encoder's included, gets a gradient through the context") {
  // The ops inside (embedding, GRU layers, concat, expand, linear) have their own gradient checks;
  // here: the loss reaches every parameter, so the encoder learns through the context vector.
  Generator gen(4);
  Seq2Seq model(small(), gen);
  cross_entropy(model.forward(kSrc, kValid, kTgtIn), tensor({3, 4, 5, 2, 6, 2, 0, 0}, {2, 4}), {.ignore_index = 0})
      .backward();
  for (const nn::NamedParameter& p : model.named_parameters()) {
    REQUIRE_MESSAGE(p.tensor.grad().defined(), p.name);
    CHECK_MESSAGE(sum(abs(p.tensor.grad())).item() > 0, p.name);
  }
}

TEST_CASE("Seq2Seq errors") {
  check_error([] { Seq2Seq bad({.src_vocab = 0, .tgt_vocab = 5}); }, {"Seq2Seq", "src_vocab=0"});
  Seq2Seq model(small());
  check_error([&] { model.encode(zeros({4}), ones({4})); }, {"Seq2Seq", "src (B,S)", "(4)"});
  check_error([&] { model.forward(kSrc, kValid, zeros({3, 2})); }, {"Seq2Seq", "tgt_in must be (B,T)", "(3,2)"});
}
