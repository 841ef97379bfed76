// The model contract: every trainable model answers loss(batch), its forward and its loss function
// together. Each loss here is checked against the forward + cross entropy it replaced in the
// lessons' loops, value and gradients, exactly (the same ops in the same order).
#include "helpers.h"

#include <functional>
#include <vector>

#include "data/batcher.h"
#include "data/tokenizer.h"
#include "models/classifier.h"
#include "models/cnn.h"
#include "models/encoder_classifier.h"
#include "models/lstm_classifier.h"
#include "models/mlp_lm.h"
#include "models/rnn_shapes.h"
#include "models/seq2seq.h"
#include "models/seq2seq_attention.h"
#include "models/transformer.h"
#include "nn/sequential.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;

namespace {

static_assert(optim::Trainable<MLPLanguageModel, data::Batch>);
static_assert(optim::Trainable<Classifier, data::LabelledBatch>);
static_assert(optim::Trainable<OneToMany, data::Seq2SeqBatch>);
static_assert(optim::Trainable<Seq2Seq, data::Seq2SeqBatch>);
static_assert(optim::Trainable<Seq2SeqAttention, data::Seq2SeqBatch>);
static_assert(optim::Trainable<Transformer, data::Seq2SeqBatch>);
static_assert(optim::Trainable<EncoderClassifier, data::LabelledBatch>);
static_assert(optim::Trainable<LstmClassifier, data::LabelledBatch>);
static_assert(!optim::Trainable<Classifier, data::Batch>);  // one batch type per task family

struct LossAndGrads {
  float value;
  std::vector<Tensor> grads;  // one per parameter, in the model's order
};

// `loss` run backward from zeroed gradients: its value and a copy of every parameter's gradient.
LossAndGrads backward_of(nn::Module& model, const std::function<Tensor()>& loss) {
  model.zero_grad();
  const Tensor l = loss();
  l.backward();
  LossAndGrads out{l.item(), {}};
  for (const Tensor& p : model.parameters()) out.grads.push_back(p.grad().defined() ? p.grad().clone() : zeros(p.shape()));
  return out;
}

// model.loss(batch) against `reference`, the forward + cross entropy a lesson's loop computed.
template <class Model, class Batch>
void check_loss_is(Model& model, const Batch& batch, const std::function<Tensor()>& reference) {
  const LossAndGrads expected = backward_of(model, reference);
  const LossAndGrads got = backward_of(model, [&] { return model.loss(batch); });
  CHECK(got.value == expected.value);
  REQUIRE(got.grads.size() == expected.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) check_close(got.grads[i], expected.grads[i], 0);
}

// Three source/target pairs of different lengths, padded: source ids 4..8, target ids 3..6.
data::Seq2SeqBatch three_pairs() {
  return data::pad_pairs({{{4, 5, 6, 7}, {3, 4, 5}}, {{8, 4}, {6}}, {{5, 6, 7}, {4, 4, 3, 5}}});
}

}  // namespace

TEST_CASE("MLPLanguageModel::loss: the cross entropy of the next token after each context") {
  Generator gen(1);
  MLPLanguageModel model(9, 3, 4, 8, gen);
  const data::Batch windows = data::context_windows({{4, 5, 6, 7}, {8, 4}}, 3);  // x (8,3), y (8)
  check_loss_is(model, windows, [&] { return cross_entropy(model(windows.x), windows.y); });
}

TEST_CASE("Classifier::loss: the cross entropy of any network's class scores, the CNN's and an MLP's") {
  Generator gen(2);
  const data::LabelledBatch images{randn({4, 1, 8, 8}, gen), tensor({0, 2, 1, 2})};
  Classifier cnn(glyph_cnn(8, 3, gen));
  check_loss_is(cnn, images, [&] { return cross_entropy(cnn.net->forward(images.inputs), images.labels); });
  const data::LabelledBatch points{randn({5, 2}, gen), tensor({1, 0, 1, 1, 0})};
  Classifier mlp(nn::mlp({2, 6, 2}, {}, gen));
  check_loss_is(mlp, points, [&] { return cross_entropy(mlp.net->forward(points.inputs), points.labels); });
}

TEST_CASE("ManyToOne as a Classifier: only the last state answers, and the loss is its cross entropy") {
  Generator gen(3);
  const auto rnn = std::make_shared<ManyToOne>(3, 4, 6, 3, gen);
  Classifier model(rnn);
  const data::LabelledBatch sequences{randint(0, 3, {4, 7}, gen), tensor({2, 0, 1, 1})};
  CHECK(model(sequences.inputs).shape() == Shape{4, 3});
  check_loss_is(model, sequences, [&] {
    const Tensor last_state = squeeze(rnn->rnn->forward(rnn->embed->forward(sequences.inputs)).h_n, 0);  // (4,6)
    return cross_entropy(rnn->head->forward(last_state), sequences.labels);
  });
}

TEST_CASE("OneToMany::loss: teacher forcing from the class, padding left out as the mask said before") {
  Generator gen(4);
  OneToMany model(3, 9, 4, 6, gen);
  const data::Seq2SeqBatch names = data::pad_pairs({{{0}, {4, 5, 6}}, {{2}, {7}}, {{1}, {8, 4}}});
  check_loss_is(model, names, [&] {
    const Tensor ignored = where(names.tgt_mask, names.tgt_out, full_like(names.tgt_out, -100));
    return cross_entropy(model.forward(tensor({0, 2, 1}), names.tgt_in), ignored);
  });
}

TEST_CASE("OneToMany::write is greedy: each token the argmax after the ones before it, up to <eos> or the limit") {
  Generator gen(9);
  OneToMany model(3, 9, 4, 6, gen);
  for (int cls = 0; cls < 3; ++cls) {
    CAPTURE(cls);
    const std::vector<int> written = model.write(cls, 5);
    REQUIRE(written.size() <= 5);
    std::vector<float> read = {static_cast<float>(data::Tokenizer::kBos)};
    read.insert(read.end(), written.begin(), written.end());
    const Tensor best = argmax(model.forward(tensor({static_cast<float>(cls)}), tensor(read, {1, static_cast<int64_t>(read.size())})), 2);
    for (size_t t = 0; t < written.size(); ++t) CHECK(best.data()[t] == written[t]);
    if (written.size() < 5) CHECK(best.data()[written.size()] == data::Tokenizer::kEos);
  }
}

TEST_CASE_TEMPLATE("EncoderDecoder::loss with teacher forcing: cross entropy over the target tokens, padding ignored", Model,
                   Seq2Seq, Seq2SeqAttention) {
  Generator gen(5);
  Model model({.src_vocab = 9, .tgt_vocab = 7, .embed = 5, .hidden = 6, .layers = 2}, gen);
  const data::Seq2SeqBatch b = three_pairs();
  check_loss_is(model, b, [&] {
    return cross_entropy(model.forward(b.src, b.src_mask, b.tgt_in), b.tgt_out, {.ignore_index = data::Tokenizer::kPad});
  });
}

TEST_CASE("Transformer::loss (EncoderDecoder's): the teacher-forced cross entropy, padding ignored") {
  Generator gen(6);
  Transformer model({.src_vocab = 9, .tgt_vocab = 7, .d_model = 8, .nhead = 2, .encoder_layers = 1, .decoder_layers = 1,
                     .dim_feedforward = 16, .dropout = 0},
                    gen);
  const data::Seq2SeqBatch b = three_pairs();
  check_loss_is(model, b, [&] {
    return cross_entropy(model.forward(b.src, b.src_mask, b.tgt_in), b.tgt_out, {.ignore_index = data::Tokenizer::kPad});
  });
}

TEST_CASE("EncoderDecoder::loss fed its own predictions: the decoder reads its previous argmax, not the target") {
  Generator gen(7);
  Seq2Seq model({.src_vocab = 9, .tgt_vocab = 7, .embed = 5, .hidden = 6, .layers = 2}, gen);
  const data::Seq2SeqBatch b = three_pairs();
  const float teacher_forced = model.loss(b).item();
  model.feeding = Feeding::own_predictions;
  check_loss_is(model, b, [&] {
    DecoderState state = model.encode(b.src, b.src_mask);
    Tensor tokens = full({3}, static_cast<float>(data::Tokenizer::kBos));
    std::vector<Tensor> steps;
    for (int64_t t = 0; t < b.tgt_in.size(1); ++t) {
      steps.push_back(model.decode_step(state, tokens));
      tokens = argmax(steps.back(), 1);
    }
    return cross_entropy(stack(steps, 1), b.tgt_out, {.ignore_index = data::Tokenizer::kPad});
  });
  CHECK(model.loss(b).item() != teacher_forced);
}

TEST_CASE("SequenceClassifier::loss: the cross entropy of one class per sequence, padding read as forward reads it") {
  Generator gen(8);
  Tensor valid = ones({3, 10});
  for (int64_t t = 6; t < 10; ++t) valid.data()[10 + t] = 0;  // the second sequence has 6 tokens
  const data::LabelledBatch b{randint(0, 12, {3, 10}, gen), tensor({2, 0, 1}), valid};
  LstmClassifier lstm({.vocab_size = 12, .num_classes = 3, .width = 8, .pooling = Pooling::last}, gen);
  check_loss_is(lstm, b, [&] { return cross_entropy(lstm.forward(b.inputs, b.valid), b.labels); });
  EncoderClassifier encoder({.vocab_size = 12, .num_classes = 3, .max_len = 10, .d_model = 8, .nhead = 2, .num_layers = 1,
                             .dim_feedforward = 16},
                            gen);
  check_loss_is(encoder, b, [&] { return cross_entropy(encoder.forward(b.inputs, b.valid), b.labels); });
}
