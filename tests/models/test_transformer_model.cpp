// The encoder-decoder Transformer (lesson 10): the cached step-by-step decoder equals teacher forcing,
// decoding and beam search run on it, select() carries the caches, the decoder is causal, padding is
// ignored, every parameter learns, bad settings fail clearly, a checkpoint restores it.
#include <unistd.h>

#include <filesystem>

#include "helpers.h"

#include "core/autograd.h"
#include "io/checkpoint.h"
#include "models/decoding.h"
#include "models/transformer.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

TransformerConfig small(bool norm_first) {
  return {.src_vocab = 9, .tgt_vocab = 7, .d_model = 8, .nhead = 2, .encoder_layers = 2, .decoder_layers = 2,
          .dim_feedforward = 12, .dropout = 0.1f, .norm_first = norm_first, .max_len = 16};
}

// Two sources of lengths 4 and 2 (padding 0 at the end), and their valid masks.
const Tensor kSrc = tensor({4, 5, 6, 7, 8, 4, 0, 0}, {2, 4});
const Tensor kValid = tensor({1, 1, 1, 1, 1, 1, 0, 0}, {2, 4});
const Tensor kTgtIn = tensor({1, 3, 4, 5, 6, 1, 6, 2, 5, 3}, {2, 5});  // <bos> then target tokens

Tensor column(const Tensor& x, int64_t t) { return squeeze(narrow(x, 1, t, 1), 1); }

}  // namespace

TEST_CASE("Transformer: decode_step position by position equals forward's teacher-forced logits (post-LN and pre-LN)") {
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    Generator gen(1);
    Transformer model(small(norm_first), gen);
    model.eval();
    const Tensor whole = model.forward(kSrc, kValid, kTgtIn);  // (2,5,7)
    CHECK(whole.shape() == Shape{2, 5, 7});
    DecoderState state = model.encode(kSrc, kValid);
    for (int64_t t = 0; t < kTgtIn.size(1); ++t) {
      const Tensor step = model.decode_step(state, column(kTgtIn, t));  // (2,7)
      check_close(step, column(whole, t), 1e-5f, 1e-5f);
      CHECK(state.tensors[3].shape() == Shape{2, 2, t + 1, 4});  // the first layer's self keys (B,H,L,D)
    }
  }
}

TEST_CASE("Transformer: the decoder is causal, and padded source positions are never read") {
  Generator gen(2);
  Transformer model(small(false), gen);
  model.eval();
  const Tensor base = model.forward(kSrc, kValid, kTgtIn);
  Tensor later = kTgtIn.clone();
  later.data()[3] = 2, later.data()[4] = 2;  // row 0, positions 3 and 4
  const Tensor changed = model.forward(kSrc, kValid, later);
  check_close(narrow(changed, 1, 0, 3), narrow(base, 1, 0, 3), 1e-6f);
  CHECK(sum(abs(narrow(changed, 1, 3, 2) - narrow(base, 1, 3, 2))).item() > 1e-4f);
  Tensor padded = kSrc.clone();
  padded.data()[6] = 8, padded.data()[7] = 3;  // row 1's padding
  check_close(model.forward(padded, kValid, kTgtIn), base, 1e-6f);
}

TEST_CASE("Transformer: greedy decoding reads back as forward's argmax, and beam search of width 1 is greedy") {
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    Generator gen(3);
    Transformer model(small(norm_first), gen);
    model.eval();
    const DecodeOptions options{.max_len = 6};
    const std::vector<std::vector<int>> greedy = greedy_decode(model, kSrc, kValid, options);
    REQUIRE(greedy.size() == 2);
    for (int64_t b = 0; b < 2; ++b) {
      const Tensor src = narrow(kSrc, 0, b, 1), valid = narrow(kValid, 0, b, 1);
      const std::vector<Hypothesis> beam = beam_search(model, src, valid, 1, 0.75f, options);
      CHECK(beam.front().tokens == greedy[b]);
      // Teacher forcing on greedy's own output chooses the same tokens at every position.
      std::vector<float> in = {static_cast<float>(options.bos)};
      for (const int token : greedy[b]) in.push_back(static_cast<float>(token));
      const Tensor chosen = argmax(model.forward(src, valid, tensor(in, {1, static_cast<int64_t>(in.size())})), -1);
      for (size_t t = 0; t < greedy[b].size(); ++t) CHECK(static_cast<int>(chosen.data()[t]) == greedy[b][t]);
      CHECK(beam_search(model, src, valid, 3, 0.75f, options).size() == 3);
    }
  }
}

TEST_CASE("Transformer: select() with repeated rows carries the caches: the same logits as the original rows") {
  Generator gen(4);
  Transformer model(small(true), gen);
  model.eval();
  DecoderState state = model.encode(kSrc, kValid);
  for (int64_t t = 0; t < 2; ++t) model.decode_step(state, column(kTgtIn, t));
  DecoderState picked = state.select({1, 0, 1});
  const Tensor next = model.decode_step(state, column(kTgtIn, 2));  // (2,7)
  const Tensor repeated = model.decode_step(picked, tensor({2, 4, 2}));  // row 1's, row 0's, row 1's tokens
  check_close(narrow(repeated, 0, 0, 1), narrow(next, 0, 1, 1), 1e-6f);
  check_close(narrow(repeated, 0, 1, 1), narrow(next, 0, 0, 1), 1e-6f);
  check_close(narrow(repeated, 0, 2, 1), narrow(next, 0, 1, 1), 1e-6f);
}

TEST_CASE("Transformer: every parameter gets a gradient from the loss") {
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    Generator gen(5);
    Transformer model(small(norm_first), gen);
    model.train();
    const Tensor targets = tensor({3, 4, 5, 6, 2, 6, 2, 5, 3, 2}, {2, 5});
    cross_entropy(model.forward(kSrc, kValid, kTgtIn), targets).backward();
    const auto params = model.named_parameters();
    CHECK(params.size() == 2 + 2 * 12 + 2 * 18 + (norm_first ? 4 : 0) + 2);
    for (const auto& p : params) {
      CAPTURE(p.name);
      REQUIRE(p.tensor.grad().defined());
      CHECK(sum(abs(p.tensor.grad())).item() > 0);
    }
  }
}

TEST_CASE("Transformer: attention maps per head are distributions, causal in the decoder, zero on padding") {
  Generator gen(6);
  Transformer model(small(false), gen);
  model.eval();
  const TransformerAttentionMaps maps = model.attention_maps(kSrc, kValid, kTgtIn);
  REQUIRE(maps.encoder.size() == 2);
  REQUIRE(maps.decoder_self.size() == 2);
  REQUIRE(maps.cross.size() == 2);
  CHECK(maps.encoder[0].shape() == Shape{2, 2, 4, 4});
  CHECK(maps.decoder_self[1].shape() == Shape{2, 2, 5, 5});
  CHECK(maps.cross[1].shape() == Shape{2, 2, 5, 4});
  for (const Tensor& w : {maps.encoder[1], maps.decoder_self[0], maps.cross[0]})
    check_close(sum(w, {-1}), ones({2, 2, w.size(2)}), 1e-5f);
  // Row 1's two padded source tokens get no weight, from the encoder or the decoder.
  for (const Tensor& w : {maps.encoder[0], maps.cross[1]})
    CHECK(sum(abs(narrow(narrow(w, 0, 1, 1), 3, 2, 2))).item() == 0.0f);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = i + 1; j < 5; ++j) CHECK(maps.decoder_self[0].data()[i * 5 + j] == 0.0f);  // batch 0, head 0
}

TEST_CASE("Transformer: a checkpoint restores the same logits") {
  Generator gen(7), other(8);
  Transformer saved(small(true), gen), loaded(small(true), other);
  saved.eval(), loaded.eval();
  const auto path = std::filesystem::temp_directory_path() / ("ladder_transformer_" + std::to_string(getpid()) + ".safetensors");
  io::save_module(path.string(), saved);
  CHECK(sum(abs(loaded.forward(kSrc, kValid, kTgtIn) - saved.forward(kSrc, kValid, kTgtIn))).item() > 1e-3f);
  io::load_module(path.string(), loaded);
  std::filesystem::remove(path);
  check_close(loaded.forward(kSrc, kValid, kTgtIn), saved.forward(kSrc, kValid, kTgtIn), 0.0f);
}

TEST_CASE("Transformer: bad settings and inputs fail with their values and the fix") {
  TransformerConfig config = small(false);
  config.nhead = 3;
  check_error([&] { Transformer model(config); }, {"Transformer", "nhead 3 does not divide d_model 8", "choose nhead"});
  config = small(false);
  config.decoder_layers = 0;
  check_error([&] { Transformer model(config); }, {"Transformer", "must be positive", "decoder_layers=0"});
  config = small(false);
  config.dropout = 1;
  check_error([&] { Transformer model(config); }, {"Transformer", "dropout must be in [0, 1)", "1"});
  Transformer model(small(false));
  check_error([&] { model.encode(kSrc, narrow(kValid, 1, 0, 3)); }, {"Transformer", "src_valid", "(2,3)"});
  check_error([&] { model.forward(kSrc, kValid, tensor({1, 2}, {1, 2})); }, {"Transformer", "tgt_in", "2 rows"});
  check_error([&] { model.forward(kSrc, kValid, zeros({2, 17})); }, {"max_len 16"});
  DecoderState wrong{.tensors = {kValid}, .batch_dims = {0}};
  check_error([&] { model.decode_step(wrong, tensor({1, 1})); }, {"Transformer", "decode_step", "9 tensors"});
}
