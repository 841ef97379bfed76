#include "catalog.h"

#include <filesystem>

#include "core/error.h"

namespace ladder::exercise {

namespace {

// Lesson 11 small enough for a check: one layer, 20 steps.
constexpr const char* kSmallGpt = "--threads 1 --steps 20 --eval-every 5 --warmup 2 --layers 1 --embd 32 --heads 2 --context 32";

std::vector<Exercise> make_catalog() {
  return {
      {.name = "tanh_backward",
       .lesson = "00_autograd",
       .file = "core/ops/unary.cpp",
       .stub = "[](float /*x*/, float /*y*/) -> float { NOT_WRITTEN; }  // d/dx tanh(x), from x and y = tanh(x)\n",
       .checks = {{"tanh's backward against finite differences", "tests/test_gradcheck",
                   "every differentiable op passes its gradient check", "tanh"},
                  {"tanh's backward on random shapes", "tests/test_gradcheck", "elementwise*on random shapes", ""},
                  {"tanh's derivative loop on two threads against std::tanh", "tests/test_threaded_math",
                   "unary_op: forward and derivative loops*", ""}}},
      {.name = "add_delta",
       .lesson = "01_ngram",
       .file = "models/ngram.cpp",
       .stub = "NOT_WRITTEN;  // P(w | h) with delta added to every count, from count_after(h, w), context_total(h), delta and V\n",
       .checks = {{"every estimator's probabilities, worked by hand", "tests/test_ngram", "every estimator by hand", ""},
                  {"each estimator's probabilities sum to 1", "tests/test_ngram", "normalised estimators sum to 1*", ""},
                  {"add-one's bigram NLL against its closed form", "tests/test_ngram", "add-one bigram NLL*", ""}}},
      {.name = "sgd_momentum",
       .lesson = "02_regression",
       .file = "optim/sgd.cpp",
       .stub = "NOT_WRITTEN;  // the buffer b[i] from d (the first step: d itself), then the step d from b[i]\n",
       .checks = {{"SGD's steps with momentum, dampening and Nesterov, worked by hand", "tests/test_optim",
                   "SGD: plain*", ""}}},
      {.name = "cross_entropy_backward",
       .lesson = "03_mlp",
       .file = "core/ops/nn.cpp",
       .stub = "NOT_WRITTEN;  // out[c] for each class c of row r: g (softmax - onehot(target[r])), softmax from log_probs\n",
       .checks = {{"cross_entropy's backward against finite differences", "tests/test_gradcheck",
                   "every differentiable op passes its gradient check", "cross_entropy*"},
                  {"cross_entropy's gradient against PyTorch's", "tests/test_core_parity", "cross_entropy matches PyTorch*", ""}}},
      {.name = "clip_grad_norm",
       .lesson = "05_rnn",
       .file = "optim/optimizer.cpp",
       .stub = "NOT_WRITTEN;  // every gradient scaled by max_norm / (total + 1e-6) when that is below 1\n",
       .checks = {{"clip_grad_norm's scaling, worked by hand", "tests/test_optim", "clip_grad_norm returns the total norm*", ""}},
       .lesson_flags = "--steps 20"},
      {.name = "adam_update",
       .lesson = "11_gpt",
       .file = "optim/adam.cpp",
       .stub = "NOT_WRITTEN;  // for each element i of g: gi, then p[i], m[i] and v[i] updated, from the scalars above\n",
       .checks = {{"Adam's and AdamW's first two steps, worked by hand", "tests/test_optim", "Adam and AdamW: the first two steps*", ""},
                  {"Adam's step count per parameter", "tests/test_optim", "Adam counts steps per parameter*", ""},
                  {"AdamW's state saved and restored: training continues exactly", "tests/test_optim",
                   "optimizer state saves and restores*", ""},
                  {"Adam, Adam with L2 and AdamW step for step against PyTorch", "tests/test_optim_parity",
                   "Adam*follow PyTorch step for step", ""}},
       .lesson_flags = kSmallGpt},
      {.name = "delta_rule_step",
       .lesson = "17_delta_rule",
       .file = "core/kernels/delta_rule_naive.cpp",
       .stub = "NOT_WRITTEN;  // u (E) from beta[t], v_t, alpha and the read S_{t-1}^T k_t; then after = alpha before + k_t u^T\n",
       .checks = {{"the chunked kernel against your recurrence: the output and the five gradients", "tests/test_delta_rule",
                   "the chunked delta rule equals its naive twin*", ""},
                  {"the same on two threads, over 300 positions", "tests/test_delta_rule", "the chunked delta rule on two threads*", ""}},
       .lesson_flags = "--part 2"},
  };
}

}  // namespace

const std::vector<Exercise>& catalog() {
  static const std::vector<Exercise> exercises = make_catalog();
  return exercises;
}

const Exercise& find_exercise(const std::string& name) {
  std::string names;
  for (const Exercise& exercise : catalog()) {
    if (exercise.name == name) return exercise;
    names += (names.empty() ? "" : ", ") + exercise.name;
  }
  fail("exercise", "there is no exercise '", name, "'; the exercises: ", names, " (./ladder exercise list)");
}

std::string stub_code(const Exercise& exercise) {
  const std::string file = std::filesystem::path(exercise.file).filename().string();
  const std::string call = "ladder::fail(\"exercise " + exercise.name + "\", \"not written yet: write it in exercises/" +
                           exercise.name + "/" + file + ", between its markers\")";
  std::string stub = exercise.stub;
  const size_t at = stub.find("NOT_WRITTEN");
  if (at == std::string::npos) fail("exercise", exercise.name, "'s stub has no NOT_WRITTEN");
  return stub.replace(at, std::string("NOT_WRITTEN").size(), call);
}

}  // namespace ladder::exercise
