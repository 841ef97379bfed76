#include "harness/resume.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "io/crc32.h"
#include "io/safetensors.h"
#include "io/small_file.h"
#include "data/visible_text.h"
#include "harness/run_summary.h"
#include "harness/run.h"

namespace fs = std::filesystem;

namespace ladder::harness {

namespace {

constexpr const char* kFlagsFile = "flags.json";

// The tensors of `all` whose names start with `prefix`, without it.
std::map<std::string, Tensor> part(const std::map<std::string, Tensor>& all, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, tensor] : all)
    if (name.starts_with(prefix)) out[name.substr(prefix.size())] = tensor;
  return out;
}

// A flag's value as the command line writes it: 0.001, 64, full.
std::string flag_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Generators' states as a JSON array of Generator::state lines, and back (`whose`: what the
// message says of a count that differs, "generators of the model, the model has").
std::string states_of(const std::vector<Generator*>& generators) {
  nlohmann::json states = nlohmann::json::array();
  for (const Generator* gen : generators) states.push_back(gen->state());
  return states.dump();
}

void set_states(const std::string& saved, const std::vector<Generator*>& generators, const char* whose) {
  const nlohmann::json states = nlohmann::json::parse(saved);
  if (states.size() != generators.size())
    fail("resume", "the checkpoint holds ", states.size(), " ", whose, " ", generators.size());
  for (size_t i = 0; i < generators.size(); ++i) generators[i]->set_state(states[i].get<std::string>());
}

}  // namespace

Tensor exact_tensor(const std::vector<double>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor pieces = empty({n, 4});
  for (int64_t v = 0; v < n; ++v) {
    const uint64_t bits = std::bit_cast<uint64_t>(values[static_cast<size_t>(v)]);
    for (int64_t i = 0; i < 4; ++i) pieces.data()[v * 4 + i] = static_cast<float>((bits >> (16 * i)) & 0xffff);
  }
  return pieces;
}

std::vector<double> exact_values(const Tensor& pieces) {
  if (pieces.dim() != 2 || pieces.size(1) != 4) fail("resume", "exact values are (n, 4) pieces, got ", shape_str(pieces.shape()));
  std::vector<double> values;
  for (int64_t v = 0; v < pieces.size(0); ++v) {
    uint64_t bits = 0;
    for (int64_t i = 0; i < 4; ++i) bits |= static_cast<uint64_t>(pieces.data()[v * 4 + i]) << (16 * i);
    values.push_back(std::bit_cast<double>(bits));
  }
  return values;
}

namespace {

// The exact values a checkpoint carries under `name`; fails in one line when it has none.
std::vector<double> values_carried(const std::map<std::string, Tensor>& state, const std::string& name) {
  if (!state.count(name)) fail("resume", "the checkpoint has no '", name, "'");
  return exact_values(state.at(name));
}

}  // namespace

Carried carried_integer(const std::string& name, int64_t& value) {
  return {[name, &value] { return std::map<std::string, Tensor>{{name, exact_tensor({static_cast<double>(value)})}}; },
          [name, &value](const std::map<std::string, Tensor>& state) { value = static_cast<int64_t>(values_carried(state, name).at(0)); }};
}

Carried carried_values(const std::string& name, std::vector<double>& values) {
  return {[name, &values] { return std::map<std::string, Tensor>{{name, exact_tensor(values)}}; },
          [name, &values](const std::map<std::string, Tensor>& state) { values = values_carried(state, name); }};
}

Carried carried_together(const std::vector<Carried>& parts) {
  return {[parts] {
            std::map<std::string, Tensor> all;
            for (const Carried& part : parts) all.merge(part.save());
            return all;
          },
          [parts](const std::map<std::string, Tensor>& state) {
            for (const Carried& part : parts) part.restore(state);
          }};
}

std::string resume_folder(const std::string& run_folder) { return (fs::path(run_folder) / "resume").string(); }

std::string checkpoint_file(const std::string& run_folder, const std::string& loop) {
  return (fs::path(resume_folder(run_folder)) / (loop + ".safetensors")).string();
}

namespace {

// The checksum of the flags file beside a checkpoint (`path` is resume/<loop>.safetensors), as
// text; empty where there is none (a loop's checkpoint saved outside a run folder).
std::string flags_checksum(const std::string& path) {
  const fs::path file = fs::path(path).parent_path() / kFlagsFile;
  std::error_code error;
  if (!fs::exists(fs::symlink_status(file, error))) return "";
  const std::string flags = io::read_small_file("resume", file.string());
  return std::to_string(io::crc32(flags.data(), flags.size()));
}

// A step as a checkpoint writes it: digits alone, 1 or more ("1e5", "-3" and "0" are no step).
int64_t step_of(const std::string& path, const std::string& text) {
  const bool digits = !text.empty() && text.size() < 16 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(text) < 1) fail("resume", path, ": its step '", data::visible(text), "' is not a step of a training loop");
  return std::stoll(text);
}

}  // namespace

void save_loop_checkpoint(const std::string& path, const std::string& lesson, const LoopState& state, int64_t step,
                          const nlohmann::json& records) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, tensor] : state.model.state_dict()) tensors["model." + name] = tensor;
  for (const auto& [name, tensor] : state.optimizer.state_dict()) tensors["optimizer." + name] = tensor;
  if (state.carried.save)
    for (const auto& [name, tensor] : state.carried.save()) tensors["carried." + name] = tensor;
  io::save_safetensors(path, tensors,
                       {{"lesson", lesson}, {"step", std::to_string(step)}, {"generators", states_of(state.generators)},
                        {"model_generators", states_of(state.model.generators())}, {"default_generator", default_generator().state()},
                        {"records", utf8_json(records).dump()}, {"flags_crc32", flags_checksum(path)}});
}

std::pair<int64_t, nlohmann::json> load_loop_checkpoint(const std::string& path, const std::string& lesson,
                                                        LoopState& state) {
  const io::TensorFile file = io::load_checkpoint(path);
  const auto& meta = file.metadata;
  for (const char* key : {"lesson", "step", "generators", "model_generators", "default_generator", "records", "flags_crc32"})
    if (!meta.count(key)) fail("resume", path, " has no '", key, "': it is not a checkpoint of a training loop");
  if (meta.at("lesson") != lesson) fail("resume", path, " is a checkpoint of lesson ", meta.at("lesson"), ", not of ", lesson);
  // Empty only where no flags.json lay beside the checkpoint when it was saved, and none lies there now.
  if (meta.at("flags_crc32") != flags_checksum(path))
    fail("resume", path, " was saved with other flags than resume/flags.json holds now (was it edited?): a resumed run ",
         "goes on with the flags it started with");
  const int64_t step = step_of(path, meta.at("step"));
  try {
    state.model.load_state_dict(part(file.tensors, "model."));
    state.optimizer.load_state_dict(part(file.tensors, "optimizer."));
    if (state.carried.restore) state.carried.restore(part(file.tensors, "carried."));
    set_states(meta.at("generators"), state.generators, "generators, the loop draws from");
    set_states(meta.at("model_generators"), state.model.generators(), "generators of the model, the model has");
    default_generator().set_state(meta.at("default_generator"));
    return {step, nlohmann::json::parse(meta.at("records"))};
  } catch (const nlohmann::json::exception& e) {
    fail("resume", path, ": ", e.what());
  } catch (const Error& e) {
    throw Error(cat(e.what(), " (checkpoint ", path, ")"));
  }
}

int64_t resume_without_run(const std::string& resumed, const std::string& lesson, const std::string& csv, LoopState state) {
  if (resumed.empty()) return 1;
  const std::string checkpoint = checkpoint_file(resumed, fs::path(csv).stem().string());
  if (!fs::exists(checkpoint)) return 1;
  return load_loop_checkpoint(checkpoint, lesson, state).first + 1;
}

void stop_together(const dist::Communicator& comm, Run* run, const std::function<void()>& part) {
  std::string stopped;
  std::exception_ptr interrupted;  // rank 0's, its summary already written
  try {
    part();
  } catch (const Stopped& e) {
    stopped = e.what();
  } catch (const Interrupted&) {
    interrupted = std::current_exception();
  }
  // One all-reduce: the signal any process received (the largest number where two differ), and whether --stop-after stopped one.
  float asked[2] = {static_cast<float>(stop_signal()), stopped.empty() ? 0.0f : 1.0f};
  comm.all_reduce(asked, 2, dist::Reduction::max);
  if (const int signal = static_cast<int>(asked[0]); signal != 0) {
    if (interrupted) std::rethrow_exception(interrupted);
    if (run) run->interrupted(signal);
    throw Interrupted("", signal);  // a process without a run prints nothing
  }
  if (asked[1] > 0) throw Stopped(stopped);  // empty on the others, who print nothing
}

nlohmann::json recorded_flags(const std::string& run_folder, const std::string& lesson) {
  const fs::path path = fs::path(resume_folder(run_folder)) / kFlagsFile;
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error)))
    fail("--resume", run_folder, " has no checkpoint to resume from (no ", path.string(),
         "): a run keeps one from its first evaluation until it finishes or diverges");
  const nlohmann::json recorded = nlohmann::json::parse(io::read_small_file("--resume", path.string()), nullptr, false);
  if (!recorded.is_object()) fail("--resume", path.string(), " is not the JSON a run writes");
  if (!recorded.contains("lesson")) return recorded;  // written before the file named its lesson: the flags alone
  if (!recorded["lesson"].is_string() || !recorded.contains("flags") || !recorded["flags"].is_object())
    fail("--resume", path.string(), " is not the JSON a run writes (a lesson and its flags)");
  const std::string theirs = recorded["lesson"];
  if (theirs != lesson)
    fail("--resume", run_folder, " is a run of lesson ", data::visible(theirs), ", not of ", lesson, ": resume it with ./ladder lesson ",
         data::visible(theirs.substr(0, 2)), " --resume ", run_folder);
  return recorded["flags"];
}

void record_flags(const std::string& run_folder, const std::string& lesson, const nlohmann::json& flags) {
  fs::create_directories(resume_folder(run_folder));
  const std::string text = utf8_json(nlohmann::json{{"lesson", lesson}, {"flags", flags}}).dump(2) + "\n";
  io::write_atomically("resume", (fs::path(resume_folder(run_folder)) / kFlagsFile).string(), {text});
}

bool free_to_change(const std::string& flag) {
  return flag == "threads" || flag == "out" || flag == "resume" || flag == "stop-after" || flag == "verbose";
}

std::vector<std::string> arguments_for(const nlohmann::json& recorded, const nlohmann::json& defaults,
                                       const std::vector<std::string>& given) {
  std::vector<std::string> args;
  for (const auto& [name, value] : recorded.items()) {
    if (free_to_change(name) && name != "threads") continue;
    if (std::find(given.begin(), given.end(), name) != given.end()) continue;
    if (defaults.contains(name) && defaults[name] == value) continue;
    if (name == "lines") args.push_back(value.get<bool>() ? "--lines" : "--stream");
    else if (value.is_boolean()) {
      if (value.get<bool>()) args.push_back("--" + name);
    } else if (!(value.is_string() && value.get<std::string>().empty())) {
      args.push_back("--" + name);
      args.push_back(flag_text(value));
    }
  }
  return args;
}

std::vector<std::string> changed_flags(const nlohmann::json& recorded, const nlohmann::json& now) {
  std::vector<std::string> changed;
  for (const auto& [name, value] : now.items()) {
    if (free_to_change(name)) continue;
    const bool known = recorded.contains(name);
    if (known && recorded[name] == value) continue;
    changed.push_back(cat("--", name, " ", flag_text(value), known ? " (the run: " + flag_text(recorded[name]) + ")" : " (the run had no such flag)"));
  }
  return changed;
}

}  // namespace ladder::harness
