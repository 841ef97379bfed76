#include "lessons/common/run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <sstream>

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

// A loss for JSON, which has no NaN or infinity: those become "nan", "inf", "-inf".
nlohmann::ordered_json json_number(double value) {
  if (std::isfinite(value)) return value;
  return number_name(value);
}

// A metric as the final printout shows it: 4 decimals, or 3 significant digits when very small or large.
std::string rounded(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_number_float()) return value.dump();  // whole numbers, true/false
  const double v = value.get<double>();
  if (!std::isfinite(v)) return number_name(v);
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
  if (!resuming()) std::filesystem::remove_all(resume_folder(folder_));
  start_ = std::chrono::steady_clock::now();
}

Run::~Run() {
  ::unlink(path(kLockName).c_str());  // while still holding it: see lock_folder
  ::close(lock_fd_);
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

void Run::stop_if_asked() const {
  if (!stop_message_.empty()) throw Stopped(stop_message_);
}

void Run::check_loss(int64_t step, double loss, LossKind kind, const std::string& what) {
  const std::string why = divergence(loss, kind, what);
  if (!why.empty()) diverged(step, loss, why);
  last_step_ = step;
  last_loss_ = loss;
}

std::string Run::save_checkpoint(const nn::Module& model, std::map<std::string, std::string> metadata) {
  for (const auto& [name, tensor] : model.state_dict()) {
    const float* values = tensor.data();
    const float* bad = std::find_if(values, values + tensor.numel(), [](float v) { return !std::isfinite(v); });
    if (bad != values + tensor.numel())
      diverged(last_step_, last_loss_, cat("the last update left ", name, " with a value of ", number_name(*bad)));
  }
  const std::string checkpoint = file("model.safetensors");
  metadata["lesson"] = cli_.lesson();
  io::save_module(checkpoint, model, metadata);
  return checkpoint;
}

void Run::diverged(int64_t step, double loss, const std::string& why) {
  std::filesystem::remove_all(resume_folder(folder_));  // resuming would only diverge again
  write_summary({{"diverged", {{"step", step}, {"loss", json_number(loss)}, {"why", why}}}, {"metrics", nlohmann::ordered_json::object()}});
  throw Diverged(cat(cli_.lesson(), ": training diverged at step ", step, ": ", why, "; try a smaller --lr (this run: ",
                     shortest_decimal(cli_.common.lr), "). ", path("summary.json"), " records it"));
}

void Run::write_summary(const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json summary = {{"lesson", cli_.lesson()}, {"seconds", seconds()}, {"flags", nlohmann::ordered_json(cli_.flags_json())}};
  summary.update(fields);
  const std::string p = file("summary.json");
  std::ofstream out(p);
  out << summary.dump(2) << "\n";
  if (!out) fail("run", "cannot write ", p);
}

void Run::finish(const nlohmann::ordered_json& metrics, const MetricNotes& notes, const std::string& next) {
  write_summary({{"metrics", metrics}});
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
  } catch (const std::exception& e) {  // ladder::Error, and anything a library throws (out of memory, ...)
    std::fflush(stdout);
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 2;
  }
}

}  // namespace ladder::lessons
