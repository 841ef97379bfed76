// The GRU encoder-decoders, plain and with Bahdanau attention: teacher forcing equals decoding step by
// step, padding changes nothing, every parameter learns.
#include "helpers.h"

#include "core/autograd.h"
#include "data/tokenizer.h"
#include "models/seq2seq.h"
#include "models/seq2seq_attention.h"

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

TEST_CASE_TEMPLATE("decoding step by step gives the logits of the whole target read at once", Model, Seq2Seq,
                   Seq2SeqAttention) {
  Generator gen(1);
  Model model(small(), gen);
  model.eval();
  const Tensor whole = model.forward(kSrc, kValid, kTgtIn);  // (2,4,7)
  CHECK(whole.shape() == Shape{2, 4, 7});
  DecoderState state = model.encode(kSrc, kValid);
  for (int64_t t = 0; t < 4; ++t) {
    const Tensor step = model.decode_step(state, squeeze(narrow(kTgtIn, 1, t, 1), 1));  // (2,7)
    check_close(step, squeeze(narrow(whole, 1, t, 1), 1), 1e-5f);
  }
}

TEST_CASE_TEMPLATE("padded source positions are never read: changing their ids changes nothing", Model, Seq2Seq,
                   Seq2SeqAttention) {
  Generator gen(2);
  Model model(small(), gen);
  model.eval();
  const Tensor other = tensor({4, 5, 6, 7, 8, 4, 3, 2}, {2, 4});
  check_close(model.forward(other, kValid, kTgtIn), model.forward(kSrc, kValid, kTgtIn), 0);
  const LeftAligned left = pad_on_the_left(kSrc, kValid);
  check_close(left.ids, tensor({4, 5, 6, 7, 0, 0, 8, 4}, {2, 4}), 0);
  check_close(left.valid, tensor({1, 1, 1, 1, 0, 0, 1, 1}, {2, 4}), 0);
}

TEST_CASE_TEMPLATE("the loss ignores padded targets: decoder inputs after the end change neither loss nor gradients",
                   Model, Seq2Seq, Seq2SeqAttention) {
  Generator gen(3);
  Model model(small(), gen);
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

TEST_CASE_TEMPLATE("every parameter, the encoder's included, gets a gradient through the context", Model, Seq2Seq,
                   Seq2SeqAttention) {
  // The ops inside (embedding, GRU layers, concat, expand, linear) have their own gradient checks;
  // here: the loss reaches every parameter, so the encoder learns through the context vector.
  Generator gen(4);
  Model model(small(), gen);
  cross_entropy(model.forward(kSrc, kValid, kTgtIn), tensor({3, 4, 5, 2, 6, 2, 0, 0}, {2, 4}), {.ignore_index = 0})
      .backward();
  for (const nn::NamedParameter& p : model.named_parameters()) {
    REQUIRE_MESSAGE(p.tensor.grad().defined(), p.name);
    CHECK_MESSAGE(sum(abs(p.tensor.grad())).item() > 0, p.name);
  }
}

TEST_CASE("Bahdanau attention: each step's weights sum to 1 over the real source tokens, 0 on padding") {
  Generator gen(5);
  Seq2SeqAttention model(small(), gen);
  model.eval();
  model.forward(kSrc, kValid, kTgtIn);
  const Tensor w = model.forward_weights();  // (2,4,4) over the left-aligned source: row 1's padding first
  REQUIRE(w.shape() == Shape{2, 4, 4});
  ladder::testing::check_close(sum(w, {-1}), ones({2, 4}), 1e-6f);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t s = 0; s < 2; ++s) CHECK(w.at({1, t, s}) == 0.0f);
}

TEST_CASE_TEMPLATE("a batch in groups of one source length: the loss is the mean over all their target tokens", Model,
                   Seq2Seq, Seq2SeqAttention) {
  Generator gen(5);
  Model model(small(), gen);
  model.eval();
  // Two sources of 2 tokens with targets of 1 and 3, one of 4 tokens with a target of 2: 9 target tokens with <eos>.
  const std::vector<data::Seq2SeqBatch> groups = {data::pad_pairs({{{4, 5}, {3}}, {{6, 7}, {4, 5, 6}}}),
                                                  data::pad_pairs({{{8, 4, 5, 6}, {6, 3}}})};
  double summed = 0;  // every target token's cross entropy, counted once
  for (const data::Seq2SeqBatch& b : groups)
    summed += cross_entropy(model.forward(b.src, b.src_mask, b.tgt_in), b.tgt_out,
                            {.ignore_index = data::Tokenizer::kPad, .reduction = Reduction::sum})
                  .item();
  const Tensor loss = model.loss(groups);
  CHECK(loss.item() == doctest::Approx(summed / 9).epsilon(1e-5));
  CHECK(model.loss({groups[1]}).item() == model.loss(groups[1]).item());  // one group: that batch's loss
  loss.backward();
  for (const auto& p : model.named_parameters()) CHECK_MESSAGE(p.tensor.grad().defined(), p.name);
  check_error([&] { model.loss(std::vector<data::Seq2SeqBatch>{}); }, {"EncoderDecoder::loss", "no groups"});
}

TEST_CASE("Seq2Seq errors") {
  check_error([] { Seq2Seq bad({.src_vocab = 0, .tgt_vocab = 5}); }, {"Seq2Seq", "src_vocab=0"});
  Seq2Seq model(small());
  check_error([&] { model.encode(zeros({4}), ones({4})); }, {"Seq2Seq", "src (B,S)", "(4)"});
  check_error([&] { model.forward(kSrc, kValid, zeros({3, 2})); }, {"Seq2Seq", "tgt_in must be (B,T)", "(3,2)"});
  check_error([] { Seq2SeqAttention bad({.src_vocab = 3, .tgt_vocab = 5, .hidden = -1}); }, {"Seq2SeqAttention", "hidden=-1"});
  Seq2SeqAttention attention(small());
  check_error([&] { attention.forward(kSrc, kValid, zeros({2})); }, {"Seq2SeqAttention", "tgt_in must be (B,T)"});
}
