#include "runner/launch_pids_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "runner/errno_text.h"

namespace sandprobe {
namespace {

bool WriteSmallFile(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace

Status PidsCgroup::Make(std::int64_t pids_max) {
  static std::atomic<int> counter{0};
  std::string dir = fmt::format("{}/{}-{}", root_, ::getpid(), ++counter);
  if ((::mkdir(root_.c_str(), 0755) != 0 && errno != EEXIST) || ::mkdir(dir.c_str(), 0755) != 0) {
    return Status::Error(fmt::format("pids cgroup unavailable: mkdir({}): {}", dir, ErrnoText(errno)));
  }
  dir_ = dir;
  procs_ = dir + "/cgroup.procs";
  if (!WriteSmallFile(dir + "/pids.max", std::to_string(pids_max))) {
    Status note = Status::Error(
        fmt::format("pids cgroup unavailable: write {}/pids.max: {}", dir, ErrnoText(errno)));
    Remove();
    return note;
  }
  return Status::Ok();
}

void PidsCgroup::Remove() {
  if (dir_.empty()) return;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) break;
    if (FILE* procs = ::fopen(procs_.c_str(), "re")) {
      int pid = 0;
      while (::fscanf(procs, "%d", &pid) == 1) ::kill(pid, SIGKILL);
      ::fclose(procs);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  dir_.clear();
  procs_.clear();
}

}  // namespace sandprobe
