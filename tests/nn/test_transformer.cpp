// The Transformer's layers (nn/attention): MultiheadAttention, the positional encodings (sinusoidal,
// learned, rotary), the encoder and decoder layers and their stacks. Shapes and PyTorch's names,
// what the masks promise (a padded key changes nothing; under the causal flag the output at i does
// not see inputs after i), the fused path against the naive one, the decoder layer stepping with its
// KV cache and a memory projected once, RoPE's properties, gradient checks on small shapes and the
// error messages. PyTorch parity: tests/parity/test_transformer_parity.cpp.
#include "helpers.h"

#include <cmath>
#include <set>

#include "core/gradcheck.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/positional_encoding.h"
#include "nn/attention/rotary.h"
#include "nn/attention/transformer_layer.h"
#include "nn/attention/transformer_stack.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::all_finite;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

using Inputs = const std::vector<Tensor>&;

// A gradcheck input: a leaf that requires grad.
Tensor leaf(Tensor t) { return t.requires_grad_(); }

// gradcheck checked every input (an input without grad would be skipped, and pass).
void check_gradients(const GradcheckResult& r, size_t inputs) {
  CHECK_MESSAGE(r.ok, r.worst);
  REQUIRE(r.analytic.size() == inputs);
  for (const Tensor& g : r.analytic) CHECK(g.defined());
}

std::set<std::string> state_names(const Module& m) {
  std::set<std::string> names;
  for (const auto& [name, value] : m.state_dict()) names.insert(name);
  return names;
}

// x with the rows from `from` on (dim 1) replaced by new random values.
Tensor change_after(const Tensor& x, int64_t from, Generator& gen) {
  const int64_t rest = x.size(1) - from;
  return concat({narrow(x, 1, 0, from), randn({x.size(0), rest, x.size(2)}, gen)}, 1);
}

}  // namespace

TEST_CASE("MultiheadAttention: PyTorch's parameter names and layouts, and the shapes it maps") {
  Generator gen(1);
  MultiheadAttention mha(12, 3, {}, gen);
  const std::map<std::string, Tensor> state = mha.state_dict();
  CHECK(state_names(mha) == std::set<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(state.at("in_proj_weight").shape() == Shape{36, 12});
  CHECK(state.at("in_proj_bias").shape() == Shape{36});
  CHECK(state.at("out_proj.weight").shape() == Shape{12, 12});
  CHECK(state.at("out_proj.bias").shape() == Shape{12});
  MultiheadAttention no_bias(12, 3, {.bias = false}, gen);
  CHECK(state_names(no_bias) == std::set<std::string>{"in_proj_weight", "out_proj.weight"});

  const Tensor query = randn({2, 4, 12}, gen), memory = randn({2, 6, 12}, gen);
  CHECK(mha.forward(query).shape() == Shape{2, 4, 12});
  const MultiheadAttentionOutput averaged =
      mha.forward(query, memory, memory, {.weights = AttentionWeights::averaged});
  CHECK(averaged.output.shape() == Shape{2, 4, 12});
  CHECK(averaged.weights.shape() == Shape{2, 4, 6});
  check_close(sum(averaged.weights, {-1}), ones({2, 4}), 1e-5f);
  const MultiheadAttentionOutput per_head = mha.forward(query, memory, memory, {.weights = AttentionWeights::per_head});
  CHECK(per_head.weights.shape() == Shape{2, 3, 4, 6});
  check_close(mean(per_head.weights, {1}), averaged.weights, 1e-6f);
}

TEST_CASE("MultiheadAttention: the fused path equals the naive one, values and gradients, with masks") {
  Generator gen(2);
  MultiheadAttention mha(8, 2, {}, gen);
  const Tensor x = randn({2, 5, 8}, gen), padding = tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, {2, 5});
  std::vector<Tensor> outputs, grads;
  for (const AttentionWeights weights : {AttentionWeights::none, AttentionWeights::per_head}) {
    mha.zero_grad();
    Tensor input = x.detach().clone().requires_grad_();
    const Tensor out =
        mha.forward(input, input, input, {.key_padding_mask = padding, .causal = true, .weights = weights}).output;
    sum(out * out).backward();
    outputs.push_back(out);
    grads.push_back(input.grad());
    grads.push_back(mha.in_proj_weight.grad());
  }
  check_close(outputs[0], outputs[1], 1e-5f);
  check_close(grads[0], grads[2], 1e-5f);
  check_close(grads[1], grads[3], 1e-5f);
}

TEST_CASE("MultiheadAttention: a padded key's value changes nothing") {
  Generator gen(3);
  MultiheadAttention mha(8, 2, {}, gen);
  const Tensor query = randn({2, 3, 8}, gen), memory = randn({2, 5, 8}, gen);
  const Tensor padding = tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, {2, 5});
  // Batch row 0's keys 3 and 4 are padding: new values there, everything else the same.
  Tensor changed = memory.detach().clone();
  for (int64_t j = 3; j < 5; ++j)
    for (int64_t e = 0; e < 8; ++e) changed.mutable_data()[j * 8 + e] += 10.0f * (e + 1);
  const Tensor before = mha.forward(query, memory, memory, {.key_padding_mask = padding}).output;
  const Tensor after = mha.forward(query, changed, changed, {.key_padding_mask = padding}).output;
  check_close(before, after, 1e-6f);
  const Tensor unmasked = mha.forward(query, changed, changed).output;  // the check can fail
  CHECK(std::fabs(sum(abs(unmasked - before)).item()) > 1e-3f);
}

TEST_CASE("MultiheadAttention: under the causal flag, the output at i does not see inputs after i") {
  Generator gen(4);
  MultiheadAttention mha(8, 2, {}, gen);
  const Tensor x = randn({2, 6, 8}, gen);
  const Tensor before = mha.forward(x, x, x, {.causal = true}).output;
  for (int64_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    const Tensor y = change_after(x, i + 1, gen);
    const Tensor after = mha.forward(y, y, y, {.causal = true}).output;
    check_close(narrow(after, 1, 0, i + 1), narrow(before, 1, 0, i + 1), 1e-6f);
    CHECK(sum(abs(narrow(after, 1, i + 1, 6 - i - 1) - narrow(before, 1, i + 1, 6 - i - 1))).item() > 1e-3f);
  }
}

TEST_CASE("MultiheadAttention: every key padded gives zeros and no NaN; queries scaled by 100 stay finite") {
  Generator gen(5);
  MultiheadAttention mha(8, 2, {.bias = false}, gen);
  Tensor x = (randn({2, 4, 8}, gen) * 100.0f).requires_grad_();
  const Tensor padding = tensor({0, 0, 0, 0, 1, 1, 0, 1}, {2, 4});
  for (const AttentionWeights weights : {AttentionWeights::none, AttentionWeights::averaged}) {
    const MultiheadAttentionOutput out = mha.forward(x, x, x, {.key_padding_mask = padding, .weights = weights});
    CHECK(all_finite(out.output));
    check_close(narrow(out.output, 0, 0, 1), zeros({1, 4, 8}), 0);  // no bias: nothing but the attention
    sum(out.output).backward();
    CHECK(all_finite(x.grad()));
    x.zero_grad();
  }
}

TEST_CASE("MultiheadAttention: dropout acts in training only, and the fused and naive paths draw the same mask") {
  Generator gen(6), gen_a(7), gen_b(7);
  const Tensor x = randn({2, 5, 8}, gen);
  MultiheadAttention a(8, 2, {.dropout = 0.5f}, gen_a), b(8, 2, {.dropout = 0.5f}, gen_b);
  const Tensor fused = a.forward(x, x, x).output;
  const Tensor naive = b.forward(x, x, x, {.weights = AttentionWeights::per_head}).output;
  check_close(fused, naive, 1e-5f);
  a.eval();
  const Tensor evaluated = a.forward(x);
  CHECK(sum(abs(evaluated - fused)).item() > 1e-3f);
  check_close(evaluated, a.forward(x), 0);
}

TEST_CASE("MultiheadAttention passes the gradient check: inputs and parameters, masks, cross and rotary") {
  Generator gen(8);
  for (const bool rotary : {false, true}) {
    CAPTURE(rotary);
    MultiheadAttention mha(8, 2, {.rotary = rotary}, gen);
    const MultiheadAttentionCall call{.key_padding_mask = tensor({1, 1, 1, 0, 1, 0, 1, 1}, {2, 4}),
                                      .causal = true, .causal_offset = 1, .position_offset = 2};
    const std::vector<Tensor> inputs = {leaf(randn({2, 3, 8}, gen)),          leaf(randn({2, 4, 8}, gen)),
                                        leaf(mha.in_proj_weight.detach().clone()), leaf(randn({24}, gen)),
                                        leaf(mha.out_proj->weight.detach().clone()), leaf(randn({8}, gen))};
    // gradcheck perturbs copies of the inputs; pointing the module's members at them
    // differentiates the module's own forward with respect to its parameters.
    const GradcheckResult r = gradcheck(
        [&](Inputs v) {
          mha.in_proj_weight = v[2], mha.in_proj_bias = v[3], mha.out_proj->weight = v[4], mha.out_proj->bias = v[5];
          return mha.forward(v[0], v[1], v[1], call).output;
        },
        inputs);
    check_gradients(r, inputs.size());
  }
}

TEST_CASE("MultiheadAttention: with rotary positions, shifting every position changes nothing") {
  Generator gen(9);
  MultiheadAttention mha(8, 2, {.rotary = true}, gen);
  const Tensor x = randn({1, 5, 8}, gen);
  const Tensor at0 = mha.forward(x, x, x, {.causal = true}).output;
  const Tensor at7 = mha.forward(x, x, x, {.causal = true, .position_offset = 7}).output;
  check_close(at0, at7, 1e-5f);
  MultiheadAttention plain(8, 2, {}, gen);
  plain.load_state_dict(mha.state_dict());
  CHECK(sum(abs(plain.forward(x, x, x, {.causal = true}).output - at0)).item() > 1e-3f);  // rotary did something
}

TEST_CASE("MultiheadAttention: errors name the module, the sizes and the fix") {
  check_error([] { MultiheadAttention(10, 3); }, {"MultiheadAttention", "embed_dim 10", "num_heads 3", "divisible"});
  check_error([] { MultiheadAttention(6, 2, {.rotary = true}); }, {"MultiheadAttention", "rotary", "even", "3"});
  check_error([] { MultiheadAttention(8, 2, {.dropout = 1.0f}); }, {"MultiheadAttention", "dropout", "[0, 1)"});
  MultiheadAttention mha(8, 2);
  check_error([&] { mha.forward(zeros({5, 8})); }, {"MultiheadAttention", "query", "(B,L,8)", "(5,8)"});
  check_error([&] { mha.forward(zeros({2, 5, 6})); }, {"MultiheadAttention", "(2,5,6)"});
  check_error([&] { mha.forward(zeros({2, 5, 8}), zeros({2, 4, 8}), zeros({2, 3, 8})); },
              {"MultiheadAttention", "agree on B and S", "(2,4,8)", "(2,3,8)"});
  check_error([&] { mha.forward(zeros({2, 5, 8}), zeros({3, 4, 8}), zeros({3, 4, 8})); },
              {"MultiheadAttention", "(2,5,8)", "(3,4,8)"});
  const Tensor x = zeros({2, 5, 8});
  check_error([&] { mha.forward(x, x, x, {.key_padding_mask = ones({2, 4})}); },
              {"MultiheadAttention", "key_padding_mask", "(2,5)", "(2,4)", "1 = real key"});
}

TEST_CASE("rotary_embedding: q_i . k_j depends on i - j only, norms are kept, offsets continue the positions") {
  Generator gen(10);
  const int64_t T = 6, D = 8;
  // The same q and the same k at every position: any change of q_i . k_j along a diagonal comes from the rotation.
  const Tensor q = expand(randn({1, D}, gen), {T, D}), k = expand(randn({1, D}, gen), {T, D});
  const Tensor scores = matmul(rotary_embedding(q), rotary_embedding(k), {.transpose_b = true});  // (T,T)
  for (int64_t i = 0; i + 1 < T; ++i)
    for (int64_t j = 0; j + 1 < T; ++j) CHECK(scores.data()[i * T + j] == doctest::Approx(scores.data()[(i + 1) * T + j + 1]).epsilon(1e-5));
  CHECK(std::fabs(scores.data()[0 * T + 1] - scores.data()[0 * T + 3]) > 1e-3f);  // and it does change with i - j

  const Tensor x = randn({2, 3, T, D}, gen);
  const Tensor turned = rotary_embedding(x, 0, 100.0f);
  check_close(sum(turned * turned, {-1}), sum(x * x, {-1}), 1e-4f, 1e-5f);
  check_close(narrow(rotary_embedding(x), 2, 0, 1), narrow(x, 2, 0, 1), 0);  // position 0: no rotation
  const Tensor longer = rotary_embedding(concat({x, x}, 2));
  check_close(rotary_embedding(x, T), narrow(longer, 2, T, T), 1e-5f);

  const GradcheckResult r = gradcheck([](Inputs v) { return rotary_embedding(v[0], 3); }, {leaf(randn({2, 2, 3, 4}, gen))});
  check_gradients(r, 1);
  check_error([] { rotary_embedding(zeros({2, 3, 5})); }, {"rotary_embedding", "D even", "(2,3,5)"});
  check_error([] { rotary_embedding(zeros({2, 3, 4}), -1); }, {"rotary_embedding", "offset", "-1"});
}

TEST_CASE("sinusoidal encoding: the paper's table, added with an offset, no state") {
  const Tensor table = sinusoidal_encoding(50, 6);
  CHECK(table.shape() == Shape{50, 6});
  for (int64_t p : {0, 1, 7, 49})
    for (int64_t i = 0; i < 6; i += 2) {
      const double angle = p / std::pow(10000.0, i / 6.0);
      CHECK(table.data()[p * 6 + i] == doctest::Approx(std::sin(angle)).epsilon(1e-6));
      CHECK(table.data()[p * 6 + i + 1] == doctest::Approx(std::cos(angle)).epsilon(1e-6));
    }
  CHECK(sinusoidal_encoding(3, 5).shape() == Shape{3, 5});  // an odd dim ends on a sine column

  Generator gen(11);
  SinusoidalPositionalEncoding pe(6, 50, 0, gen);
  CHECK(pe.state_dict().empty());
  const Tensor x = randn({2, 4, 6}, gen);
  check_close(pe.forward(x, 10), x + narrow(table, 0, 10, 4), 1e-6f);
  check_close(pe.forward(x), x + narrow(table, 0, 0, 4), 1e-6f);
  const GradcheckResult r = gradcheck([&](Inputs v) { return pe.forward(v[0], 3); }, {leaf(x.clone())});
  check_gradients(r, 1);
  check_error([&] { pe.forward(zeros({1, 8, 6}), 45); },
              {"SinusoidalPositionalEncoding", "53", "offset 45", "T 8", "max_len 50"});
  check_error([&] { pe.forward(zeros({1, 8, 5})); }, {"SinusoidalPositionalEncoding", "(B,T,6)", "(1,8,5)"});

  SinusoidalPositionalEncoding dropped(6, 50, 0.5f, gen);
  CHECK(sum(abs(dropped.forward(x) - pe.forward(x))).item() > 1e-3f);
  dropped.eval();
  check_close(dropped.forward(x), pe.forward(x), 0);
}

TEST_CASE("learned positional encoding: an Embedding of positions, gradients to the rows used, T > max_len refused") {
  Generator gen(12);
  LearnedPositionalEncoding pe(4, 8, 0, 0.02f, gen);
  CHECK(state_names(pe) == std::set<std::string>{"embedding.weight"});
  CHECK(pe.embedding->weight.shape() == Shape{8, 4});
  const Tensor x = randn({2, 3, 4}, gen);
  check_close(pe.forward(x, 2), x + narrow(pe.embedding->weight, 0, 2, 3), 1e-6f);
  sum(pe.forward(x, 2)).backward();
  for (int64_t p = 0; p < 8; ++p)  // each used row gets B = 2, the others 0
    CHECK(pe.embedding->weight.grad().data()[p * 4] == (p >= 2 && p < 5 ? 2.0f : 0.0f));

  const GradcheckResult r = gradcheck(
      [&](Inputs v) {
        pe.embedding->weight = v[1];
        return pe.forward(v[0], 1);
      },
      {leaf(x.clone()), leaf(randn({8, 4}, gen))});
  check_gradients(r, 2);
  check_error([&] { pe.forward(zeros({1, 9, 4})); }, {"LearnedPositionalEncoding", "T 9", "max_len 8"});
}

TEST_CASE("Transformer layers: PyTorch's submodule names, shapes, and the stacks' layers.N and norm") {
  Generator gen(13);
  const TransformerLayerOptions options{.dim_feedforward = 16, .dropout = 0};
  TransformerEncoderLayer encoder(8, 2, options, gen);
  CHECK(state_names(encoder) == std::set<std::string>{
                                    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                                    "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                                    "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"});
  CHECK(encoder.linear1->weight.shape() == Shape{16, 8});
  TransformerDecoderLayer decoder(8, 2, options, gen);
  const std::set<std::string> names = state_names(decoder);
  for (const char* name : {"multihead_attn.in_proj_weight", "multihead_attn.out_proj.bias", "norm3.weight", "norm3.bias"})
    CHECK(names.count(name) == 1);
  CHECK(names.size() == 18);

  const Tensor src = randn({2, 5, 8}, gen), tgt = randn({2, 3, 8}, gen);
  CHECK(encoder.forward(src).shape() == Shape{2, 5, 8});
  CHECK(decoder.forward(tgt, src).shape() == Shape{2, 3, 8});

  TransformerEncoder stack(8, 2, options, {.num_layers = 2, .final_norm = true}, gen);
  const std::set<std::string> stack_names = state_names(stack);
  for (const char* name : {"layers.0.self_attn.in_proj_weight", "layers.1.norm2.bias", "norm.weight", "norm.bias"})
    CHECK(stack_names.count(name) == 1);
  CHECK(stack_names.size() == 2 * 12 + 2);
  const Tensor padding = tensor({1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 5});
  const EncoderMasks masks{.src_key_padding_mask = padding};
  check_close(stack.forward(src, masks),
              stack.norm->forward(stack.layers[1]->forward(stack.layers[0]->forward(src, masks), masks)), 0);
  TransformerDecoder decoders(8, 2, options, {.num_layers = 3}, gen);
  CHECK(decoders.layers.size() == 3);
  CHECK_FALSE(decoders.norm);
  const Tensor memory = stack.forward(src, masks);
  CHECK(decoders.forward(tgt, memory, {.memory_key_padding_mask = padding}).shape() == Shape{2, 3, 8});
}

TEST_CASE("Transformer decoder: causal over the target, deaf to padded memory; both norm orders") {
  Generator gen(14);
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    TransformerDecoder decoder(8, 2, {.dim_feedforward = 16, .dropout = 0, .norm_first = norm_first},
                               {.num_layers = 2, .final_norm = norm_first}, gen);
    const Tensor tgt = randn({2, 5, 8}, gen), memory = randn({2, 4, 8}, gen);
    const Tensor padding = tensor({1, 1, 0, 0, 1, 1, 1, 1}, {2, 4});
    const DecoderMasks masks{.memory_key_padding_mask = padding};
    const Tensor before = decoder.forward(tgt, memory, masks);
    const Tensor later = decoder.forward(change_after(tgt, 3, gen), memory, masks);
    check_close(narrow(later, 1, 0, 3), narrow(before, 1, 0, 3), 1e-5f);
    CHECK(sum(abs(narrow(later, 1, 3, 2) - narrow(before, 1, 3, 2))).item() > 1e-3f);
    Tensor changed = memory.detach().clone();  // batch row 0's memory positions 2 and 3 are padding
    for (int64_t i = 2 * 8; i < 4 * 8; ++i) changed.mutable_data()[i] = 5.0f;
    check_close(decoder.forward(tgt, changed, masks), before, 1e-5f);
  }
}

TEST_CASE("TransformerDecoderLayer::forward_step: the self attention's KV cache and the memory projected once equal the causal forward") {
  Generator gen(16);
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    TransformerDecoderLayer decoder(8, 2, {.dim_feedforward = 16, .dropout = 0, .norm_first = norm_first}, gen);
    const Tensor tgt = randn({2, 5, 8}, gen), memory = randn({2, 4, 8}, gen);
    const Tensor padding = tensor({1, 1, 0, 0, 1, 1, 1, 1}, {2, 4});
    const Tensor whole = decoder.forward(tgt, memory, {.memory_key_padding_mask = padding});  // causal
    const ProjectedMemory projected = decoder.multihead_attn->project_memory(memory);
    CHECK(projected.keys.shape() == Shape{2, 2, 4, 4});
    const std::unique_ptr<AttentionState> state = decoder.self_attn->start_state();
    int64_t at = 0;
    for (const int64_t n : {2, 1, 2}) {
      INFO("positions ", at, " to ", at + n - 1);
      check_close(decoder.forward_step(narrow(tgt, 1, at, n), *state, projected, padding), narrow(whole, 1, at, n), 1e-5f);
      at += n;
    }
    const auto& cache = dynamic_cast<const KeyValueState&>(*state);  // full attention's state: the KV cache
    CHECK(cache.keys.shape() == Shape{2, 2, 5, 4});
  }
}

TEST_CASE("MultiheadAttention::forward_memory equals forward over the memory; what it cannot read is refused") {
  Generator gen(17);
  MultiheadAttention cross(8, 2, {}, gen);
  const Tensor query = randn({2, 3, 8}, gen), memory = randn({2, 4, 8}, gen);
  const Tensor padding = tensor({1, 1, 1, 0, 1, 1, 1, 1}, {2, 4});
  const MultiheadAttentionCall call{.key_padding_mask = padding, .weights = AttentionWeights::per_head};
  const MultiheadAttentionOutput once = cross.forward_memory(query, cross.project_memory(memory), call);
  const MultiheadAttentionOutput direct = cross.forward(query, memory, memory, call);
  check_close(once.output, direct.output, 1e-6f);
  check_close(once.weights, direct.weights, 1e-6f);

  MultiheadAttention rotary(8, 2, {.rotary = true}, gen);
  check_error([&] { rotary.project_memory(memory); }, {"project_memory", "rotary", "build it without rotary"});
  check_error([&] { cross.forward_memory(query, ProjectedMemory{}); },
              {"forward_memory", "memory must hold keys and values", "project_memory", "undefined"});
  const ProjectedMemory projected = cross.project_memory(memory);
  check_error([&] { cross.forward_memory(randn({3, 3, 8}, gen), projected); },
              {"forward_memory", "query must be (B,T,E) = (2,T,8)", "(3,3,8)"});
  check_error([&] { cross.forward_memory(query, projected, {.key_padding_mask = ones({2, 3})}); },
              {"forward_memory", "key_padding_mask", "(2,4)", "(2,3)"});
}

// With gelu: relu's kink at 0 sits within a finite-difference step of some hidden unit of a whole
// layer; relu layers' gradients are held to PyTorch's in tests/parity/test_transformer_parity.cpp.
TEST_CASE("Transformer layers pass the gradient check with masks, post-LN and pre-LN") {
  Generator gen(15);
  for (const bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    const TransformerLayerOptions options{
        .dim_feedforward = 8, .dropout = 0, .activation = FeedForwardActivation::gelu, .norm_first = norm_first};
    TransformerEncoderLayer encoder(4, 2, options, gen);
    TransformerDecoderLayer decoder(4, 2, options, gen);
    const Tensor src_padding = tensor({1, 1, 1, 1, 1, 0}, {2, 3});
    const GradcheckResult r = gradcheck(
        [&](Inputs v) {
          const Tensor memory = encoder.forward(v[1], {.src_key_padding_mask = src_padding});
          return decoder.forward(v[0], memory, {.memory_key_padding_mask = src_padding});
        },
        {leaf(randn({2, 2, 4}, gen)), leaf(randn({2, 3, 4}, gen))});
    check_gradients(r, 2);
  }
}

TEST_CASE("Transformer layers and stacks: errors name the module and the values") {
  check_error([] { TransformerEncoderLayer(8, 3); }, {"MultiheadAttention", "embed_dim 8", "num_heads 3"});
  check_error([] { TransformerEncoderLayer(8, 2, {.dim_feedforward = 0}); },
              {"TransformerEncoderLayer", "dim_feedforward", "0"});
  check_error([] { TransformerDecoderLayer(8, 2, {.dropout = -0.5f}); }, {"TransformerDecoderLayer", "dropout", "-0.5"});
  check_error([] { TransformerEncoder(8, 2, {}, {.num_layers = 0}); }, {"TransformerEncoder", "num_layers", "0"});
  TransformerDecoderLayer decoder(8, 2, {.dim_feedforward = 16});
  check_error([&] { decoder.forward(zeros({2, 3, 8}), zeros({2, 4, 8}), {.memory_key_padding_mask = ones({2, 3})}); },
              {"MultiheadAttention", "key_padding_mask", "(2,4)", "(2,3)"});
}
