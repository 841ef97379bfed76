#include "models/rnn_shapes.h"

#include "core/autograd.h"
#include "core/ops.h"
#include "data/tokenizer.h"

namespace ladder::models {

ManyToOne::ManyToOne(int64_t vocab, int64_t embed_size, int64_t hidden, int64_t classes, Generator& gen)
    : Module("ManyToOne") {
  embed = register_module("embed", std::make_shared<nn::Embedding>(vocab, embed_size, 1.0f, gen));
  rnn = register_module("rnn", std::make_shared<nn::RNN>(embed_size, hidden, nn::RecurrentOptions{.batch_first = true}, false, gen));
  head = register_module("head", std::make_shared<nn::Linear>(hidden, classes, nn::LinearOptions{}, gen));
}

Tensor ManyToOne::forward(const Tensor& ids) {
  return head->forward(squeeze(rnn->forward(embed->forward(ids)).h_n, 0));  // h_n (1,B,H) -> (B,classes)
}

OneToMany::OneToMany(int64_t classes, int64_t vocab, int64_t embed_size, int64_t hidden, Generator& gen)
    : Module("OneToMany") {
  start = register_module("start", std::make_shared<nn::Embedding>(classes, hidden, 1.0f, gen));
  embed = register_module("embed", std::make_shared<nn::Embedding>(vocab, embed_size, 1.0f, gen));
  rnn = register_module("rnn", std::make_shared<nn::RNN>(embed_size, hidden, nn::RecurrentOptions{.batch_first = true}, false, gen));
  head = register_module("head", std::make_shared<nn::Linear>(hidden, vocab, nn::LinearOptions{}, gen));
}

Tensor OneToMany::first_state(const Tensor& classes) { return unsqueeze(tanh(start->forward(classes)), 0); }

Tensor OneToMany::forward(const Tensor& classes, const Tensor& tokens) {
  return head->forward(rnn->forward(embed->forward(tokens), first_state(classes)).output);  // (B,T,V)
}

Tensor OneToMany::loss(const data::Seq2SeqBatch& batch) {
  return cross_entropy(forward(reshape(batch.src, {-1}), batch.tgt_in), batch.tgt_out, {.ignore_index = data::Tokenizer::kPad});
}

std::vector<int> OneToMany::write(int cls, int max_length) {
  NoGradGuard no_grad;
  Tensor h = first_state(tensor({static_cast<float>(cls)}));
  std::vector<int> out;
  int previous = data::Tokenizer::kBos;
  for (int t = 0; t < max_length; ++t) {
    const nn::RecurrentOutput o = rnn->forward(embed->forward(tensor({static_cast<float>(previous)}, {1, 1})), h);
    previous = static_cast<int>(argmax(reshape(head->forward(o.output), {-1}), 0).item());
    if (previous == data::Tokenizer::kEos) break;
    out.push_back(previous);
    h = o.h_n;
  }
  return out;
}

}  // namespace ladder::models
