// Gradients through masks. A masked position's gradient is selected away (exactly 0 written),
// never multiplied by 0: the value computed there and discarded may have an inf or NaN
// gradient (log(0), a softmax row of -inf), and 0 * inf is NaN. Expected values come from
// PyTorch 1.13; the expression that gives them is written beside each.
#include "helpers.h"

#include "core/autograd.h"

using namespace ladder;
using ladder::testing::check_tensor;

TEST_CASE("where over the log of masked_fill: masked positions get gradient 0, not NaN") {
  // x = torch.tensor([[0.5, 2, 3], [1.5, 0.25, 4]], requires_grad=True)
  // m = torch.tensor([[0, 1, 0], [1, 0, 1]]).bool()
  // y = torch.where(m, torch.tensor(0.), torch.log(x.masked_fill(m, 0))); y.sum().backward()
  Tensor x = tensor({0.5f, 2, 3, 1.5f, 0.25f, 4}, {2, 3});
  x.requires_grad_();
  const Tensor m = tensor({0, 1, 0, 1, 0, 1}, {2, 3});
  const Tensor y = where(m, scalar(0), log(masked_fill(x, m, 0)));
  check_tensor(y, {2, 3}, {-0.6931471824645996f, 0, 1.0986123085021973f, 0, -1.3862943649291992f, 0});
  sum(y).backward();
  // log's backward sends 0 * (1/0) = NaN to the masked positions; masked_fill must drop it.
  check_tensor(x.grad(), {2, 3}, {2, 0, 0.3333333432674408f, 0, 4, 0});
}

TEST_CASE("a padded row: softmax over all -inf, zeroed by where, gets gradient 0, not NaN") {
  // s = torch.tensor([[0.5, -1, 2, 0], [1, 1, -0.5, 3], [0.2, 0.4, 0.6, 0.8]], requires_grad=True)
  // m = torch.tensor([[0, 0, 1, 1], [0, 0, 0, 1], [1, 1, 1, 1]]).bool()
  // valid = torch.tensor([[True], [True], [False]])
  // w = torch.tensor([[1, 2, 3, 4], [-1, 0.5, 2, 1], [5, 6, 7, 8]])
  // p = torch.where(valid, torch.softmax(s.masked_fill(m, float('-inf')), -1), torch.tensor(0.))
  // (p * w).sum().backward()
  Tensor s = tensor({0.5f, -1, 2, 0, 1, 1, -0.5f, 3, 0.2f, 0.4f, 0.6f, 0.8f}, {3, 4});
  s.requires_grad_();
  const Tensor m = tensor({0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1}, {3, 4});
  const Tensor valid = tensor({1, 1, 0}, {3, 1});
  const Tensor w = tensor({1, 2, 3, 4, -1, 0.5f, 2, 1, 5, 6, 7, 8}, {3, 4});
  const Tensor p = where(valid, softmax(masked_fill(s, m, -INFINITY), -1), scalar(0));
  check_tensor(p, {3, 4},
               {0.8175744414329529f, 0.18242551386356354f, 0, 0, 0.44981619715690613f, 0.44981619715690613f,
                0.10036756098270416f, 0, 0, 0, 0, 0});
  sum(p * w).backward();
  check_tensor(s.grad(), {3, 4},
               {-0.1491464227437973f, 0.1491464525461197f, 0, 0, -0.4389428198337555f, 0.2357814908027649f,
                0.2031613141298294f, 0, 0, 0, 0, 0});
}

TEST_CASE("masked_fill and where drop inf and NaN gradients of the values they did not keep") {
  Tensor x = tensor({1, 2, 3, 4});
  x.requires_grad_();
  const Tensor gy = tensor({NAN, 1, INFINITY, 2});  // the non-finite ones land on masked positions
  masked_fill(x, tensor({1, 0, 1, 0}), 7).backward(gy);
  check_tensor(x.grad(), {4}, {0, 1, 0, 2});

  Tensor a = tensor({1, 2, 3, 4}), b = tensor({5, 6, 7, 8});
  a.requires_grad_();
  b.requires_grad_();
  where(tensor({1, 0, 0, 1}), a, b).backward(tensor({1, NAN, -INFINITY, 3}));
  check_tensor(a.grad(), {4}, {1, 0, 0, 3});
  check_tensor(b.grad(), {4}, {0, NAN, -INFINITY, 0});
}

TEST_CASE("where with a (T,T) mask broadcast over (B,H,T,T) scores and a 0-d fill value") {
  Tensor scores = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2});
  scores.requires_grad_();
  Tensor fill = scalar(-9);
  fill.requires_grad_();
  const Tensor y = where(triu_mask(2, 2, 1), fill, scores);
  check_tensor(y, {2, 1, 2, 2}, {1, -9, 3, 4, 5, -9, 7, 8});
  sum(y * reshape(arange(1, 9), {2, 1, 2, 2})).backward();
  check_tensor(scores.grad(), {2, 1, 2, 2}, {1, 0, 3, 4, 5, 0, 7, 8});
  check_tensor(fill.grad(), {}, {2 + 6});  // the fill value was used at two positions
}

TEST_CASE("logsumexp of an all -inf slice is -inf and sends back 0 (PyTorch sends NaN)") {
  // A fully masked row has no mass to differentiate; exp(x - y) would be exp(-inf + inf) = NaN.
  // PyTorch 1.13 gives NaN here (torch.logsumexp(torch.full((2,), -inf, requires_grad=True), 0));
  // ladder gives 0 so that one padded row does not poison every weight.
  Tensor x = tensor({-INFINITY, -INFINITY, 0, std::log(3.0f)}, {2, 2});
  x.requires_grad_();
  const Tensor y = logsumexp(x, {-1});
  check_tensor(y, {2}, {-INFINITY, std::log(4.0f)});
  sum(y).backward();
  check_tensor(x.grad(), {2, 2}, {0, 0, 0.25f, 0.75f});
}

TEST_CASE("amax and amin: NaN wins forward, and its slice gets NaN back, as in PyTorch") {
  // x = torch.tensor([[-1, nan, 3], [2, 5, 5]], requires_grad=True)
  // y = torch.amax(x, -1); (y * torch.tensor([1., 2.])).sum().backward()
  // -> y [nan, 5], x.grad [[nan, nan, nan], [0, 1, 1]] (the tie shares the gradient)
  Tensor x = tensor({-1, NAN, 3, 2, 5, 5}, {2, 3});
  x.requires_grad_();
  const Tensor y = amax(x, {-1});
  check_tensor(y, {2}, {NAN, 5});
  sum(y * tensor({1, 2})).backward();
  check_tensor(x.grad(), {2, 3}, {NAN, NAN, NAN, 0, 1, 1});

  // x = torch.tensor([[-1, nan], [2, 5], [2, 5]], requires_grad=True)
  // y = torch.amin(x, 0); (y * torch.tensor([1., 2.])).sum().backward()
  Tensor z = tensor({-1, NAN, 2, 5, 2, 5}, {3, 2});
  z.requires_grad_();
  const Tensor low = amin(z, {0});
  check_tensor(low, {2}, {-1, NAN});
  sum(low * tensor({1, 2})).backward();
  check_tensor(z.grad(), {3, 2}, {1, NAN, 0, NAN, 0, NAN});
}
