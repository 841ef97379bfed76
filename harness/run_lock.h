// A run folder's lock, run.lock: one run at a time writes into a folder.
#pragma once

#include <string>

namespace ladder::harness {

constexpr const char* kLockName = "run.lock";

// Locks `folder`: run.lock, flock()ed for as long as the run lives and holding its pid; returns its
// file descriptor. A second run into the folder is refused, naming the pid that holds it. The kernel
// drops a flock when its process dies, so a lock file left by a killed run is taken over.
int lock_folder(const std::string& folder);
// Removes run.lock (while still holding it: see lock_folder) and closes `fd`.
void unlock_folder(const std::string& folder, int fd);

}  // namespace ladder::harness
