#include "harness/run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include "core/kernels/parallel.h"
#include "data/visible_text.h"
#include "io/checkpoint.h"
#include "io/plain_files.h"
#include "harness/resume.h"
#include "harness/run_lock.h"
#include "harness/run_summary.h"

namespace ladder::harness {

namespace {

// Writes the summary of a run that an exception ended, as "failed" with the exception's message:
// set by ~Run, called by lesson_main's catch, the only place that knows the message.
std::function<void(const std::string&)>& record_failure() {
  static std::function<void(const std::string&)> record;
  return record;
}

// A metric as the final printout shows it: 4 decimals, or 3 significant digits when very small or large.
std::string rounded(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_number_float()) return value.dump();  // whole numbers, true/false
  const double v = value.get<double>();  // finite: Run::finish stops a run with a metric that is not
  char buf[32];
  const double size = std::fabs(v);
  std::snprintf(buf, sizeof buf, v == 0 || (size >= 1e-3 && size < 1e5) ? "%.4f" : "%.3e", v);
  return buf;
}

// The metrics in two aligned columns, each with its note when it has one.
void print_metrics(const nlohmann::ordered_json& metrics, const MetricNotes& notes) {
  size_t name_width = 0, value_width = 0;
  for (const auto& [name, value] : metrics.items()) {
    name_width = std::max(name_width, name.size());
    value_width = std::max(value_width, rounded(value).size());
  }
  for (const auto& [name, value] : metrics.items()) {
    const auto note = notes.find(name);
    if (note == notes.end()) std::printf("  %-*s  %s\n", static_cast<int>(name_width), name.c_str(), rounded(value).c_str());
    else
      std::printf("  %-*s  %-*s  %s\n", static_cast<int>(name_width), name.c_str(), static_cast<int>(value_width),
                  rounded(value).c_str(), note->second.c_str());
  }
}

// Said at the start and the end of a --quick run, whose few steps can contradict the lesson's point.
constexpr const char* quick_run_warning =
    "--quick: a smoke test, every part in a few steps; its figures are not the lesson's results "
    "(run without --quick for those)";

}  // namespace

Run::Run(const LessonCli& cli) : cli_(cli), folder_(cli.common.out) {
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) fail("run", "cannot create the output folder ", folder_, ": ", error.message());
  lock_fd_ = lock_folder(folder_);
  start_ = std::chrono::steady_clock::now();
  const double load = load_average();
  machine_ = {{"threads", num_threads()}, {"threads_pinned", cli_.common.threads > 0}, {"cores", omp_get_num_procs()},
              {"load_average", load < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(load)}, {"blas", blas_config()}};
  try {
    if (!resuming()) clear_earlier_run();
    check_only_files();
    write_summary("running", {});
  } catch (...) {  // no destructor runs for a constructor that throws: free the folder here
    unlock_folder(folder_, lock_fd_);
    throw;
  }
  std::printf("run: %d thread%s (%s) on %d cores, load average %s at the start\nBLAS: %s\n", num_threads(), num_threads() == 1 ? "" : "s",
              cli_.common.threads > 0 ? "--threads" : "fewer while cores are busy", omp_get_num_procs(),
              load < 0 ? "unknown" : cat(load).c_str(), blas_config().c_str());
  if (cli_.common.quick) std::printf("%s\n", quick_run_warning);
  record_failure() = nullptr;
}

Run::~Run() {
  if (status_ == "running" && std::uncaught_exceptions() > 0)
    record_failure() = [path = path("summary.json"), summary = summary("failed", {})](const std::string& message) mutable {
      summary["error"] = message;
      write_json(path, summary);
    };
  unlock_folder(folder_, lock_fd_);
}

void Run::clear_earlier_run() {
  namespace fs = std::filesystem;
  std::error_code ignored;
  for (const fs::path& name : files_listed(path("summary.json"))) fs::remove(path(name), ignored);
  fs::remove(path("model.safetensors"), ignored);
  fs::remove_all(resume_folder(folder_), ignored);
}

void Run::check_only_files() {
  namespace fs = std::filesystem;
  // A run writes regular files, into its folder and resume/ (io/plain_files.h). A new run removes
  // any other entry there (a link only, never what it points at); a resumed run refuses them.
  std::string removed;
  std::error_code error;
  const fs::path resume = resume_folder(folder_);
  const fs::file_status resume_status = fs::symlink_status(resume, error);
  const bool resume_is_folder = fs::is_directory(resume_status);  // a link to a folder is not
  if (fs::exists(resume_status) && !resume_is_folder) {
    if (resuming()) fail("--resume", resume.string(), " is a link or not a folder: a run keeps its checkpoints in a resume/ of its own");
    fs::remove(resume, error);
    removed = "resume (a link or not a folder)";
  }
  std::vector<fs::path> entries;
  for (const fs::path& where : {fs::path(folder_), resume})
    if (where != resume || resume_is_folder)
      for (const fs::directory_entry& entry : fs::directory_iterator(where, error)) entries.push_back(entry.path());
  if (resuming())
    for (const fs::path& entry : entries)
      if (const std::string what = io::not_a_file(entry); !what.empty())
        fail("--resume", entry.string(), " is ", what, ", not a file a run wrote: move it away, or start a new run");
  const std::string others = io::remove_not_files(entries);
  removed += (removed.empty() || others.empty() ? "" : ", ") + others;
  if (!removed.empty())
    std::printf("run: removed from %s what a run never writes, and would have written or read through: %s\n", folder_.c_str(),
                data::visible(removed).c_str());
}

std::string Run::path(const std::string& name) const { return (std::filesystem::path(folder_) / name).string(); }

std::string Run::file(const std::string& name) {
  const std::string p = path(name);
  wrote({p});
  return p;
}

void Run::wrote(const std::vector<std::string>& paths) {
  for (const std::string& p : paths)
    if (std::find(written_.begin(), written_.end(), p) == written_.end()) written_.push_back(p);
  if (status_ == "running") prepare_exit_at_once();  // the next run must find these files listed
}

void Run::check_written() const {
  std::error_code error;
  for (const std::string& p : written_) {
    const bool whole = std::filesystem::is_regular_file(p, error) && std::filesystem::file_size(p, error) > 0;
    if (!whole)
      fail("run", p, " was not written (", std::filesystem::exists(p, error) ? "it is empty" : "it is missing",
           "): is the disk full? The run keeps its last checkpoint; free space and continue it with --resume ", folder_);
  }
}

double Run::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Run::checkpoint_file(const std::string& loop) {
  if (std::find(loops_.begin(), loops_.end(), loop) != loops_.end())
    fail("run", "two training loops keep their checkpoints as '", loop, "'; give each its own csv or name");
  if (loops_.empty() && !resuming()) record_flags(folder_, cli_.lesson(), cli_.flags_at_start());
  loops_.push_back(loop);
  return harness::checkpoint_file(folder_, loop);
}

void Run::checkpoint_written(int64_t step, const std::string& loop) {
  if (++checkpoints_ != cli_.common.stop_after) return;
  stop_message_ = cat(cli_.lesson(), ": stopped after checkpoint ", checkpoints_, " (step ", step, " of ", loop, ") as --stop-after ",
                      cli_.common.stop_after, " asked; continue the run with --resume ", folder_);
}

void Run::stop_if_asked() {
  if (stop_signal() != 0) interrupted(stop_signal());
  if (stop_message_.empty()) return;
  status_ = "interrupted";
  write_summary("interrupted", {{"interrupted", {{"by", "--stop-after"}, {"after_step", last_step_}}}, {"last_evaluations", evaluations_},
                                {"metrics", nlohmann::ordered_json::object()}});
  throw Stopped(stop_message_);
}

void Run::interrupted(int signal) {
  status_ = "interrupted";
  const bool resumable = std::filesystem::exists(std::filesystem::path(resume_folder(folder_)) / "flags.json");
  write_summary("interrupted", {{"interrupted", {{"by", signal_name(signal)}, {"after_step", last_step_}}},
                                {"last_evaluations", evaluations_}, {"metrics", nlohmann::ordered_json::object()}});
  throw Interrupted(cat(cli_.lesson(), ": interrupted by ", signal_name(signal), " after step ", last_step_, "; ",
                        resumable ? "continue the run from its last checkpoint with --resume " + folder_
                                  : "it kept no checkpoint to resume from: run it again"),
                    signal);
}

void Run::evaluated(const std::string& loop, const nlohmann::ordered_json& figures) {
  nlohmann::ordered_json& kept = evaluations_[loop] = figures;
  for (auto& value : kept)
    if (value.is_number_float()) value = json_number(value.get<double>());
  if (status_ == "running") prepare_exit_at_once();
}

void Run::check_loss(int64_t step, double loss, LossKind kind, const std::string& what) {
  const double first = first_losses_.emplace(what, loss).first->second;
  const std::string why = divergence(loss, kind, what, first);
  if (!why.empty()) diverged(step, loss, why);
  last_step_ = step;
  last_loss_ = loss;
  if (stop_signal() != 0) interrupted(stop_signal());
}

void Run::check_figure(int64_t step, const std::string& figure, double value, LossKind kind) {
  const std::string why = divergence(value, kind, "the evaluation's " + figure);
  if (!why.empty()) diverged(step, last_loss_, why);
}

void Run::check_finite(int64_t step, const std::map<std::string, Tensor>& tensors, const std::string& whose) {
  if (const auto bad = io::first_non_finite(tensors))
    diverged(step, last_loss_, cat("the last update left ", whose, bad->tensor, " with a value of ", number_name(bad->value)));
}

std::string Run::save_checkpoint(const nn::Module& model, std::map<std::string, std::string> metadata) {
  check_finite(last_step_, model.state_dict(), "");
  const std::string checkpoint = file("model.safetensors");
  metadata["lesson"] = cli_.lesson();
  io::save_module(checkpoint, model, metadata);
  return checkpoint;
}

void Run::diverged(int64_t step, double loss, const std::string& why) {
  // Removed, not marked: no diverged run leaves weights that --load or --resume could take for good ones.
  std::error_code ignored;  // a folder that cannot be cleaned must not hide the divergence
  std::filesystem::remove_all(resume_folder(folder_), ignored);
  const std::string weights = path("model.safetensors");
  std::filesystem::remove(weights, ignored);
  written_.erase(std::remove(written_.begin(), written_.end(), weights), written_.end());
  status_ = "diverged";
  write_summary("diverged", {{"diverged", {{"step", step}, {"loss", json_number(loss)}, {"why", why}}},
                             {"metrics", nlohmann::ordered_json::object()}});
  throw Diverged(cat(cli_.lesson(), ": training diverged at step ", step, ": ", why, "; try a smaller --lr (this run: ",
                     shortest_decimal(cli_.common.lr), "). ", path("summary.json"), " records it"));
}

nlohmann::ordered_json Run::summary(const std::string& status, const nlohmann::ordered_json& fields) const {
  nlohmann::ordered_json summary = {{"lesson", cli_.lesson()}, {"status", status}, {"seconds", seconds()}, {"machine", machine_},
                                    {"flags", nlohmann::ordered_json(cli_.flags_json())}};
  if (!fields.is_null()) summary.update(fields);
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const std::string& p : written_) files.push_back(std::filesystem::path(p).lexically_relative(folder_).string());
  summary["files"] = files;
  return summary;
}

void Run::write_summary(const std::string& status, const nlohmann::ordered_json& fields) {
  write_json(path("summary.json"), summary(status, fields));
  if (status == "running") prepare_exit_at_once();
  else forget_exit_at_once();
}

void Run::prepare_exit_at_once() {
  // The step a second signal comes at is not known ahead: last_evaluations say where --resume picks up.
  const nlohmann::ordered_json fields = {{"interrupted", {{"by", "a second stop signal, at once"}}},
                                         {"last_evaluations", evaluations_}, {"metrics", nlohmann::ordered_json::object()}};
  harness::prepare_exit_at_once(path("summary.json"), utf8_json(summary("interrupted", fields)).dump(2) + "\n", path(kLockName));
}

void Run::finish(const nlohmann::ordered_json& metrics, const MetricNotes& notes, const std::string& next,
                 Metrics metrics_print) {
  stop_if_asked();
  for (const auto& [name, value] : metrics.items())
    if (value.is_number_float() && !std::isfinite(value.get<double>()))
      diverged(last_step_, last_loss_, cat("the reported ", name, " is ", number_name(value.get<double>())));
  check_written();
  wrote({path("summary.json")});
  status_ = "finished";
  write_summary("finished", {{"metrics", metrics}});
  std::filesystem::remove_all(resume_folder(folder_));  // a finished run has nothing to resume
  std::printf("\n== %s done in %.1f s ==\n", cli_.lesson().c_str(), seconds());
  if (metrics_print == Metrics::listed) print_metrics(metrics, notes);
  else if (!metrics.empty()) std::printf("the %zu figures of the tables above are in summary.json\n", metrics.size());
  std::printf("files:\n");
  for (const std::string& p : written_) std::printf("  %s\n", p.c_str());
  std::printf("next: %s\n", next.c_str());
  if (cli_.common.quick) std::printf("%s\n", quick_run_warning);
  std::fflush(stdout);
}

int lesson_main(const std::function<void()>& body) {
  try {
    body();
    return 0;
  } catch (const Diverged& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 3;
  } catch (const Stopped& e) {
    std::printf("\n%s\n", e.what());
    return 0;
  } catch (const Interrupted& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "\n%s\n", e.what());
    return 128 + e.signal;
  } catch (const std::exception& e) {  // ladder::Error, and anything a library throws (out of memory, ...)
    std::fflush(stdout);
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    try {
      if (record_failure()) std::exchange(record_failure(), nullptr)(e.what());
    } catch (const std::exception& also) {  // the disk that failed the run may refuse its summary too
      std::fprintf(stderr, "error: and summary.json could not say so: %s\n", also.what());
    }
    return 2;
  }
}

}  // namespace ladder::harness
