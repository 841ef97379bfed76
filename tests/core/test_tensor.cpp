// Tensor: factories, element access, printing, sharing, and the random generator.
#include "helpers.h"

#include <algorithm>

#include "core/random.h"

using namespace ladder;
using ladder::testing::check_tensor;

TEST_CASE("factories fill shape and values") {
  check_tensor(zeros({2, 3}), {2, 3}, {0, 0, 0, 0, 0, 0});
  check_tensor(ones({2}), {2}, {1, 1});
  check_tensor(full({1, 2}, 7.5f), {1, 2}, {7.5f, 7.5f});
  check_tensor(arange(4), {4}, {0, 1, 2, 3});
  check_tensor(arange(1, 2, 0.25f), {4}, {1, 1.25f, 1.5f, 1.75f});
  check_tensor(tensor({1, 2, 3, 4, 5, 6}, {3, 2}), {3, 2}, {1, 2, 3, 4, 5, 6});
  check_tensor(scalar(3), {}, {3});
  CHECK(zeros({0, 4}).numel() == 0);
  CHECK(zeros_like(ones({2, 2})).shape() == Shape{2, 2});
}

TEST_CASE("item, at, size and to_vector read values") {
  const Tensor t = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.at({1, 2}) == 6);
  CHECK(t.at({0, 1}) == 2);
  CHECK(t.size(-1) == 3);
  CHECK(t.dim() == 2);
  CHECK(scalar(4).item() == 4);
  CHECK(tensor({9}, {1, 1}).item() == 9);
  CHECK(t.to_vector() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("the generator is seeded and reproducible") {
  Generator a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
  manual_seed(3);
  const Tensor first = randn({64});
  manual_seed(3);
  const Tensor second = randn({64});
  CHECK(first.to_vector() == second.to_vector());
}

TEST_CASE("random factories have the right ranges and moments") {
  Generator gen(1);
  const Tensor u = rand({20000}, gen);
  const Tensor n = randn({20000}, gen);
  const Tensor k = randint(-2, 3, {20000}, gen);
  double mean_u = 0, mean_n = 0, var_n = 0;
  std::vector<int> counts(5, 0);
  for (int64_t i = 0; i < 20000; ++i) {
    CHECK((u.data()[i] >= 0 && u.data()[i] < 1));
    mean_u += u.data()[i] / 20000.0;
    mean_n += n.data()[i] / 20000.0;
    var_n += n.data()[i] * n.data()[i] / 20000.0;
    const float v = k.data()[i];
    REQUIRE((v == std::floor(v) && v >= -2 && v < 3));
    ++counts[static_cast<int>(v) + 2];
  }
  CHECK(mean_u == doctest::Approx(0.5).epsilon(0.02));
  CHECK(std::fabs(mean_n) < 0.03);
  CHECK(var_n == doctest::Approx(1.0).epsilon(0.04));
  for (int c : counts) CHECK(c == doctest::Approx(4000).epsilon(0.08));
  const Tensor w = uniform({1000}, -3, -2, gen);
  for (float v : w.to_vector()) CHECK((v >= -3 && v < -2));
}

TEST_CASE("copies of a handle share values; clone and detach behave like PyTorch") {
  Tensor a = ones({3});
  Tensor b = a;  // the same tensor
  b.data()[0] = 5;
  CHECK(a.data()[0] == 5);
  Tensor d = a.detach();  // shares values, drops history
  d.data()[1] = 6;
  CHECK(a.data()[1] == 6);
  Tensor c = a.clone();  // its own values
  c.data()[2] = 7;
  CHECK(a.data()[2] == 1);
  Tensor r = reshape(a, {3, 1});  // reshape shares values too
  r.data()[2] = 8;
  CHECK(a.data()[2] == 8);
}

TEST_CASE("printing looks like PyTorch") {
  CHECK(to_string(tensor({1, 2, 3, 4}, {2, 2})) == "tensor([[1., 2.],\n        [3., 4.]], shape=(2,2))");
  CHECK(to_string(tensor({0.5f, -1.25f})) == "tensor([ 0.5000, -1.2500], shape=(2))");
  CHECK(to_string(scalar(2.5f)) == "tensor(2.5000, shape=())");
  CHECK(to_string(tensor({1e-6f, 1})) == "tensor([1.0000e-06, 1.0000e+00], shape=(2))");
  Tensor leaf = ones({1});
  leaf.requires_grad_();
  CHECK(to_string(leaf) == "tensor([1.], shape=(1), requires_grad=true)");
  CHECK(to_string(leaf * 2.0f) == "tensor([2.], shape=(1), grad_fn=<mul_scalar>)");
  CHECK(to_string(Tensor()) == "tensor(undefined)");
  CHECK(to_string(zeros({0})) == "tensor([], shape=(0))");
}

TEST_CASE("printing a large tensor shows only its edges") {
  const std::string s = to_string(reshape(arange(2000), {40, 50}));
  CHECK(s.find("...") != std::string::npos);
  CHECK(s.find("1999.") != std::string::npos);
  CHECK(s.find("1000.") == std::string::npos);
  CHECK(s.find("shape=(40,50)") != std::string::npos);
  const size_t lines = static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  CHECK(lines == 6);  // seven lines: three rows, "...", three rows
}
