#include "models/encoder_decoder.h"

#include "core/error.h"
#include "core/ops.h"
#include "data/tokenizer.h"

namespace ladder::models {

Tensor EncoderDecoder::loss(const data::Seq2SeqBatch& batch) {
  const Tensor logits = feeding == Feeding::teacher_forcing ? forward(batch.src, batch.src_mask, batch.tgt_in)
                                                            : own_prediction_logits(batch);  // (B,T,V)
  return cross_entropy(logits, batch.tgt_out, {.ignore_index = data::Tokenizer::kPad});
}

Tensor EncoderDecoder::loss(const std::vector<data::Seq2SeqBatch>& groups) {
  if (groups.empty()) fail("EncoderDecoder::loss", "no groups given");
  if (groups.size() == 1) return loss(groups.front());
  float tokens = 0;
  for (const data::Seq2SeqBatch& group : groups) tokens += sum(group.tgt_mask).item();
  Tensor total;
  for (const data::Seq2SeqBatch& group : groups) {
    const Tensor part = mul(loss(group), sum(group.tgt_mask).item() / tokens);  // the group's share of the tokens
    total = total.defined() ? add(total, part) : part;
  }
  return total;
}

Tensor EncoderDecoder::own_prediction_logits(const data::Seq2SeqBatch& batch) {
  DecoderState state = encode(batch.src, batch.src_mask);
  const int64_t B = batch.tgt_in.size(0), T = batch.tgt_in.size(1);
  Tensor tokens = full({B}, static_cast<float>(data::Tokenizer::kBos));
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < T; ++t) {
    steps.push_back(decode_step(state, tokens));  // (B,V)
    tokens = argmax(steps.back(), 1);
  }
  return stack(steps, 1);
}

}  // namespace ladder::models
