#include "lessons/common/run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <utility>

#include "core/kernels/parallel.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "lessons/common/resume.h"

namespace ladder::lessons {

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns)
    : out_(path), columns_(columns.size()), path_(path) {
  if (!out_) fail("CsvWriter", "cannot write ", path);
  for (const std::string& c : columns)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path, ": column name '", c, "' has a comma, quote or newline");
  for (size_t i = 0; i < columns.size(); ++i) out_ << (i ? "," : "") << columns[i];
  out_ << "\n";
  out_.flush();
}

void CsvWriter::row(const std::vector<double>& values) {
  std::vector<std::string> cells;
  for (double v : values) {
    std::ostringstream cell;
    cell << std::setprecision(8) << v;
    cells.push_back(cell.str());
  }
  row(cells);
}

void CsvWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) fail("CsvWriter", path_, ": ", cells.size(), " values for ", columns_, " columns");
  for (const std::string& c : cells)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path_, ": cell '", c, "' has a comma, quote or newline");
  for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cells[i];
  out_ << "\n";
  out_.flush();
}

namespace {

// A number as a message shows it: NaN without the sign printf would give it ("-nan").
std::string number_name(double value) { return std::isnan(value) ? "nan" : cat(value); }

}  // namespace

std::string divergence(double loss, LossKind kind, const std::string& what) {
  if (!std::isfinite(loss)) return what + " is " + number_name(loss);
  if (kind == LossKind::cross_entropy && !std::isfinite(std::exp(loss)))
    return cat(what, " is ", loss, " nats, so large that its perplexity exp(loss) is infinite");
  return "";
}

namespace {

constexpr const char* kLockName = "run.lock";

// The process id written in a lock file ("" if none).
std::string lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  pid.erase(std::find_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
  return pid;
}

// Locks a run folder: run.lock, flock()ed for as long as the run lives and holding its pid. The
// kernel drops a flock when its process dies, so a lock file left by a killed run is free to take.
int lock_folder(const std::string& folder) {
  const std::string path = (std::filesystem::path(folder) / kLockName).string();
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);  // CLOEXEC: no child keeps the lock
    if (fd < 0) fail("run", "cannot create the lock file ", path, ": ", std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const std::string holder = lock_holder(fd);
      ::close(fd);
      fail("run", "another run (pid ", holder.empty() ? "unknown" : holder, ") is writing into ", folder,
           "; wait for it to end, or give this run another --out");
    }
    // The run that held the lock may have removed the file between our open() and flock(): start again.
    struct stat opened {}, named {};
    if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0 || opened.st_ino != named.st_ino ||
        opened.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string stale = lock_holder(fd);
    if (!stale.empty()) std::printf("(%s was left by pid %s, which no longer holds it: taken over)\n", path.c_str(), stale.c_str());
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      fail("run", "cannot write the lock file ", path, ": ", reason);
    }
    return fd;
  }
}

// The signal (SIGINT, SIGTERM) that asked the run to stop, 0 while none has. Its handler does
// nothing else: the training loop looks at it between steps (Run::stop_if_asked).
volatile std::sig_atomic_t stop_signal = 0;

extern "C" void ask_to_stop(int signal) {
  stop_signal = signal;
  constexpr char kSaid[] = "\n(stopping at the next step, the last checkpoint kept; a second Ctrl-C ends the run at once)\n";
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);  // write(): safe in a handler, printf is not
}

// SA_RESETHAND: the handler serves once, so a second Ctrl-C ends a run that does not stop at once.
struct sigaction stop_handler() {
  struct sigaction action {};
  action.sa_handler = ask_to_stop;
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&action.sa_mask);
  return action;
}

// The handlers before the run's, put back when it ends.
struct sigaction handler_before_interrupt {}, handler_before_terminate {};

const char* signal_name(int signal) { return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal"; }

// Writes the summary of a run that an exception ended, as "failed" with the exception's message:
// set by ~Run, called by lesson_main's catch, the only place that knows the message.
std::function<void(const std::string&)>& record_failure() {
  static std::function<void(const std::string&)> record;
  return record;
}

void write_json(const std::string& path, const nlohmann::ordered_json& json) {
  io::write_atomically("run", path, {json.dump(2) + "\n"});
}

// The files an earlier run's summary.json lists (relative to the folder), none outside it: a
// summary edited by hand must not make a run remove anything else. Nothing when it is unreadable.
std::vector<std::filesystem::path> files_listed(const std::filesystem::path& summary) {
  namespace fs = std::filesystem;
  constexpr uintmax_t kMaxSummaryBytes = 1 << 24;
  std::error_code error;
  if (!fs::is_regular_file(summary, error) || fs::file_size(summary, error) > kMaxSummaryBytes) return {};
  std::ifstream in(summary);
  const nlohmann::json earlier = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!earlier.is_object() || !earlier.contains("files") || !earlier["files"].is_array()) return {};
  std::vector<fs::path> files;
  for (const nlohmann::json& file : earlier["files"]) {
    if (!file.is_string()) continue;
    const fs::path name = fs::path(file.get<std::string>()).lexically_normal();
    if (!name.empty() && name.is_relative() && *name.begin() != "..") files.push_back(name);
  }
  return files;
}

// A loss for JSON, which has no NaN or infinity: those become "nan", "inf", "-inf".
nlohmann::ordered_json json_number(double value) {
  if (std::isfinite(value)) return value;
  return number_name(value);
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
    write_summary("running", {});
  } catch (...) {  // no destructor runs for a constructor that throws: free the folder here
    unlock();
    throw;
  }
  std::printf("run: %d thread%s (%s) on %d cores, load average %s at the start\nBLAS: %s\n", num_threads(), num_threads() == 1 ? "" : "s",
              cli_.common.threads > 0 ? "--threads" : "fewer while cores are busy", omp_get_num_procs(),
              load < 0 ? "unknown" : cat(load).c_str(), blas_config().c_str());
  stop_signal = 0;
  record_failure() = nullptr;
  const struct sigaction handler = stop_handler();
  sigaction(SIGINT, &handler, &handler_before_interrupt);
  sigaction(SIGTERM, &handler, &handler_before_terminate);
}

Run::~Run() {
  sigaction(SIGINT, &handler_before_interrupt, nullptr);
  sigaction(SIGTERM, &handler_before_terminate, nullptr);
  if (status_ == "running" && std::uncaught_exceptions() > 0)
    record_failure() = [path = path("summary.json"), summary = summary("failed", {})](const std::string& message) mutable {
      summary["error"] = message;
      write_json(path, summary);
    };
  unlock();
}

void Run::unlock() {
  ::unlink(path(kLockName).c_str());  // while still holding it: see lock_folder
  ::close(lock_fd_);
}

void Run::clear_earlier_run() {
  namespace fs = std::filesystem;
  std::error_code ignored;
  for (const fs::path& name : files_listed(path("summary.json")))
    if (fs::is_regular_file(fs::symlink_status(path(name), ignored))) fs::remove(path(name), ignored);
  fs::remove(path("model.safetensors"), ignored);
  fs::remove_all(resume_folder(folder_), ignored);
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
}

double Run::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Run::checkpoint_file(const std::string& loop) {
  if (std::find(loops_.begin(), loops_.end(), loop) != loops_.end())
    fail("run", "two training loops keep their checkpoints as '", loop, "'; give each its own csv or name");
  if (loops_.empty() && !resuming()) record_flags(folder_, cli_.flags_at_start());
  loops_.push_back(loop);
  return lessons::checkpoint_file(folder_, loop);
}

void Run::checkpoint_written(int64_t step, const std::string& loop) {
  if (++checkpoints_ != cli_.common.stop_after) return;
  stop_message_ = cat(cli_.lesson(), ": stopped after checkpoint ", checkpoints_, " (step ", step, " of ", loop, ") as --stop-after ",
                      cli_.common.stop_after, " asked; continue the run with --resume ", folder_);
}

void Run::stop_if_asked() {
  if (stop_signal != 0) interrupted(stop_signal);
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
}

void Run::check_loss(int64_t step, double loss, LossKind kind, const std::string& what) {
  const std::string why = divergence(loss, kind, what);
  if (!why.empty()) diverged(step, loss, why);
  last_step_ = step;
  last_loss_ = loss;
  if (stop_signal != 0) interrupted(stop_signal);
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
}

void Run::finish(const nlohmann::ordered_json& metrics, const MetricNotes& notes, const std::string& next) {
  stop_if_asked();
  for (const auto& [name, value] : metrics.items())
    if (value.is_number_float() && !std::isfinite(value.get<double>()))
      diverged(last_step_, last_loss_, cat("the reported ", name, " is ", number_name(value.get<double>())));
  wrote({path("summary.json")});
  status_ = "finished";
  write_summary("finished", {{"metrics", metrics}});
  std::filesystem::remove_all(resume_folder(folder_));  // a finished run has nothing to resume
  std::printf("\n== %s done in %.1f s ==\n", cli_.lesson().c_str(), seconds());
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
  std::printf("files:\n");
  for (const std::string& p : written_) std::printf("  %s\n", p.c_str());
  std::printf("next: %s\n", next.c_str());
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
    if (record_failure()) std::exchange(record_failure(), nullptr)(e.what());
    return 2;
  }
}

}  // namespace ladder::lessons
