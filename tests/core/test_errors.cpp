// Every mistake a user can make with core ops throws ladder::Error, and the message says
// which op, which shapes or values, and what to do.
#include "helpers.h"

#include "core/autograd.h"

using namespace ladder;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

TEST_CASE("linear shape errors name x, weight and bias") {
  check_error([] { linear(zeros({2, 3}), zeros({5, 4})); }, {"linear", "x (2,3)", "weight (5,4)", "agree on in"});
  check_error([] { linear(zeros({2, 4}), zeros({5, 4}), zeros({4})); },
              {"linear", "bias must be (out) = (5)", "weight (5,4)", "got (4)"});
}

TEST_CASE("matmul shape errors name the shapes and suggest a transpose") {
  check_error([] { matmul(zeros({12, 64, 128}), zeros({256, 128})); },
              {"matmul: inner dims differ: (12,64,128) @ (256,128)", "transpose the right operand?"});
  check_error([] { matmul(zeros({3, 4}), zeros({3, 5})); }, {"matmul", "(3,4) @ (3,5)", "transpose the left operand?"});
  check_error([] { matmul(zeros({2, 3, 4}), zeros({5, 4, 2})); }, {"matmul", "shapes (2) and (5) do not broadcast"});
  check_error([] { matmul(scalar(1), zeros({3})); }, {"matmul", "at least 1 dim", "()"});
  check_error([] { matmul(zeros({3}), zeros({3}), {.transpose_a = true}); }, {"matmul", "1-d operand"});
}

TEST_CASE("broadcasting errors name both shapes and the dim") {
  check_error([] { zeros({2, 3}) + zeros({4}); }, {"add: shapes (2,3) and (4) do not broadcast", "dim 1", "3 and 4"});
  check_error([] { mul(zeros({2, 3}), zeros({3, 3})); }, {"mul", "(2,3) and (3,3)"});
  check_error([] { masked_fill(zeros({3}), zeros({2, 3}), 0); }, {"masked_fill", "(2,3)", "(3)"});
  check_error([] { expand(zeros({2, 3}), {4, 3}); }, {"expand", "(2,3)", "(4,3)"});
  check_error([] { sum_to(zeros({2, 3}), {4}); }, {"sum_to", "(2,3)", "(4)"});
}

TEST_CASE("concat and stack errors name the offending tensor") {
  check_error([] { concat({zeros({2, 3}), zeros({3, 3})}, 1); }, {"concat: tensor 1 has shape (3,3)", "(2,3)", "dim 1"});
  check_error([] { concat({}); }, {"concat", "at least one"});
  check_error([] { stack({zeros({2}), zeros({3})}); }, {"stack: tensor 1 has shape (3)", "(2)"});
}

TEST_CASE("bad dims") {
  check_error([] { sum(zeros({2, 3}), {2}); }, {"sum: dim 2 is out of range for a 2-d tensor", "-2 to 1"});
  check_error([] { softmax(zeros({2, 3}), -3); }, {"softmax: dim -3 is out of range"});
  check_error([] { transpose(zeros({2}), 0, 1); }, {"transpose", "dim 1"});
  check_error([] { permute(zeros({2, 3}), {0, 0}); }, {"permute", "twice"});
  check_error([] { max(scalar(1), 0); }, {"max", "scalar"});
  check_error([] { sum(zeros({2, 3}), {1, -1}); }, {"sum", "listed twice"});
  check_error([] { amax(zeros({2, 0}), {1}); }, {"amax", "size 0"});
}

TEST_CASE("bad sizes, indices and values") {
  check_error([] { reshape(zeros({2, 3}), {4, 2}); }, {"reshape: shape (2,3) has 6 elements; (4,2) would need 8"});
  check_error([] { reshape(zeros({2, 3}), {-1, 4}); }, {"reshape", "cannot infer"});
  check_error([] { narrow(zeros({4, 3}), 0, 3, 2); }, {"narrow: start 3 and length 2 do not fit in dim 0 of size 4"});
  check_error([] { index_select(zeros({4, 3}), 0, tensor({1, 4})); }, {"index_select: index 4 is out of range for size 4"});
  check_error([] { embedding(zeros({5, 2}), tensor({-1})); }, {"index_select", "index -1 is out of range"});
  check_error([] { embedding(zeros({5, 2}), tensor({1.5f})); }, {"index_select", "1.5", "whole number"});
  check_error([] { gather(zeros({3, 2}), 1, tensor({2}, {1, 1})); }, {"gather: index 2 is out of range for size 2"});
  check_error([] { one_hot(tensor({3}), 3); }, {"one_hot: class 3 is out of range"});
  check_error([] { tensor({1, 2, 3}, {2, 2}); }, {"tensor: 3 values cannot fill shape (2,2)"});
  check_error([] { scalar(1).at({0}); }, {"at", "1 indices", "()"});
  check_error([] { zeros({2}).item(); }, {"item", "exactly one element", "(2)"});
  check_error([] { clamp(zeros({1}), 1, 0); }, {"clamp", "low 1 is greater than high 0"});
  check_error([] { dropout(zeros({1}), 1.5f, true); }, {"dropout", "p must be in [0, 1]"});
  check_error([] { randint(3, 3, {2}); }, {"randint", "empty range"});
  check_error([] { Tensor().shape(); }, {"undefined"});
  check_error([] { var(zeros({1})); }, {"var", "correction=1"});
  check_error([] { index_select(zeros({4, 3}), 0, tensor({1e20f})); }, {"index_select", "out of range for size 4"});
  check_error([] { arange(0, INFINITY); }, {"arange", "no values"});
  check_error([] { arange(0, 1e12f); }, {"arange", "over a billion"});
}

TEST_CASE("loss errors explain the expected target") {
  check_error([] { cross_entropy(zeros({4, 3}), zeros({3})); },
              {"cross_entropy: logits (4,3) need targets of shape (4)", "got (3)"});
  check_error([] { cross_entropy(zeros({2, 3}), tensor({0, 3})); }, {"cross_entropy: target 3 (row 1)", "[0, 3)"});
  check_error([] { cross_entropy(zeros({2, 3}), tensor({0.5f, 1})); }, {"cross_entropy", "0.5", "not a class index"});
  check_error([] { cross_entropy(zeros({2, 3}), zeros({2}), {.weight = ones({2})}); }, {"cross_entropy: weight", "(3)"});
  check_error([] { cross_entropy(zeros({4, 0}), zeros({4})); }, {"cross_entropy", "(4,0)", "no classes"});
  check_error([] { mse_loss(zeros({2, 3}), zeros({3})); }, {"mse_loss: input has shape (2,3) but target has (3)"});
  check_error([] { binary_cross_entropy_with_logits(zeros({2}), zeros({2, 1})); }, {"binary_cross_entropy_with_logits"});
}

TEST_CASE("layer, convolution and pooling errors") {
  check_error([] { layer_norm(zeros({2, 3}), {4}); }, {"layer_norm: normalized_shape (4) must be the trailing dims of x (2,3)"});
  check_error([] { layer_norm(zeros({2, 3}), {3}, ones({2})); }, {"layer_norm: weight has shape (2)"});
  check_error([] { rms_norm(zeros({2, 3}), {2}); }, {"rms_norm: normalized_shape (2) must be the trailing dims of x (2,3)"});
  check_error([] { rms_norm(zeros({2, 3}), {3}, ones({3, 1})); }, {"rms_norm: weight has shape (3,1)", "normalized_shape is (3)"});
  check_error([] { conv2d(zeros({1, 3, 8, 8}), zeros({4, 2, 3, 3})); },
              {"conv2d: weight must be (out_channels, 3, KH, KW) for input (1,3,8,8)", "(4,2,3,3)"});
  check_error([] { conv2d(zeros({3, 8, 8}), zeros({4, 3, 3, 3})); }, {"conv2d", "(N,C,H,W)", "(3,8,8)"});
  check_error([] { conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3})); }, {"conv2d: kernel 3x3 is larger than the padded input 2x2"});
  check_error([] { conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3}), {}, {.stride = 0}); }, {"conv2d", "stride"});
  check_error([] { max_pool2d(zeros({1, 1, 4, 4}), {.kernel = 2, .padding = 2}); }, {"max_pool2d", "padding 2"});
  check_error([] { batch_norm(zeros({1, 3}), zeros({3}), ones({3}), {}, {}, true); },
              {"batch_norm", "more than one value per channel", "(1,3)"});
  check_error([] { batch_norm(zeros({4, 3}), zeros({2}), ones({2}), {}, {}, true); }, {"batch_norm", "(3)", "(2)"});
}

TEST_CASE("autograd misuse") {
  Tensor x = ones({2});
  check_error([&] { x.backward(); }, {"backward", "does not require grad"});
  check_error([&] { x.retain_grad(); }, {"retain_grad", "does not require grad"});
}

TEST_CASE("sizes that overflow and positions near INT64_MAX") {
  // 2^32 x 2^32 elements is 2^64: the count would wrap to 0 and reads would go wild.
  check_error([] { zeros({int64_t{1} << 32, int64_t{1} << 32}); }, {"numel", "(4294967296,4294967296)", "64-bit"});
  // 2^62 floats: more bytes than an allocation can ask for (a sanitizer build could not survive a real attempt).
  check_error([] { empty({int64_t{1} << 40, int64_t{1} << 22}); }, {"empty: cannot allocate", "GiB"});
  const Tensor x = arange(10);
  check_tensor(slice(x, 0, 0, 5, INT64_MAX), {1}, {0});  // Python: x[0:5:huge] is [x[0]]
  check_tensor(slice(x, 0, INT64_MIN, INT64_MAX), {10}, x.to_vector());
  check_tensor(slice(x, 0, 3, INT64_MIN), {0}, {});
  check_error([&] { narrow(x, 0, 1, INT64_MAX); }, {"narrow: start 1 and length 9223372036854775807 do not fit"});
  check_error([&] { narrow(x, 0, INT64_MAX, 1); }, {"narrow: start 9223372036854775807"});
}
