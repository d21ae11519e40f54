#include "witnesses/witness_canary_watch.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

// Opens (a read needs one) and everything that changes the inode. IN_ACCESS is left out: the
// re-verification's own pread makes it.
constexpr std::uint32_t kWatched =
    IN_OPEN | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF;

// Far larger than the canary (a 55-byte line): a canary grown past it has changed anyway.
constexpr std::size_t kMaxCanaryBytes = 4096;

// What each change event means for the canary, in the order Changed reports them.
constexpr std::pair<std::uint32_t, const char*> kChangeEvents[] = {
    {IN_MODIFY | IN_CLOSE_WRITE, "written to (inotify)"},
    {IN_ATTRIB, "its mode, owner, times or links changed (inotify)"},
    {IN_MOVE_SELF, "moved or renamed (inotify)"},
    {IN_DELETE_SELF, "deleted (inotify)"},
};

std::string Errno(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

}  // namespace

std::unique_ptr<CanaryWatch> CanaryWatch::Start(const std::string& path, const std::string& sha256) {
  std::unique_ptr<CanaryWatch> watch(new CanaryWatch(path, sha256));
  // The descriptor first, the watch second: this open is the harness's own and must not count.
  watch->file_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (watch->file_fd_ < 0) {
    watch->error_ = Errno(fmt::format("open({})", path).c_str());
    return watch;
  }
  struct stat st {};
  if (::fstat(watch->file_fd_, &st) != 0) {
    watch->error_ = Errno("fstat(canary)");
    return watch;
  }
  watch->dev_ = st.st_dev;
  watch->ino_ = st.st_ino;
  watch->mode_ = st.st_mode & 07777;
  watch->inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (watch->inotify_fd_ < 0) {
    watch->error_ = Errno("inotify_init1");
    return watch;
  }
  if (::inotify_add_watch(watch->inotify_fd_, path.c_str(), kWatched | IN_DONT_FOLLOW) < 0) {
    watch->error_ = Errno(fmt::format("inotify_add_watch({})", path).c_str());
    ::close(watch->inotify_fd_);
    watch->inotify_fd_ = -1;
    return watch;
  }
  watch->Reverify("before the first launch");  // the canary is what was planted
  return watch;
}

CanaryWatch::~CanaryWatch() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (file_fd_ >= 0) ::close(file_fd_);
}

void CanaryWatch::AfterLaunch(const std::string& launch_id) {
  if (inotify_fd_ < 0) return;
  ReadEvents(launch_id);
  Reverify(launch_id);
}

void CanaryWatch::Stop() {
  if (inotify_fd_ < 0) return;
  AfterLaunch("after the last launch");
  ::close(inotify_fd_);
  inotify_fd_ = -1;
}

nlohmann::json CanaryWatch::Collect() {
  nlohmann::json out = {{"path", path_},     {"watched", error_.empty()}, {"opens", opens_},
                        {"changes", changes_}, {"verified", verified_}};
  if (!error_.empty()) out["error"] = error_;
  return out;
}

void CanaryWatch::ReadEvents(const std::string& launch_id) {
  alignas(inotify_event) char buffer[4096];
  int opens = 0;
  bool overflow = false;
  std::uint32_t seen = 0;
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more queued
    for (char* at = buffer; at < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      if (event->mask & IN_OPEN) ++opens;
      if (event->mask & IN_Q_OVERFLOW) overflow = true;
      seen |= event->mask;
      at += sizeof(inotify_event) + event->len;
    }
  }
  if (opens > 0 || overflow) {
    nlohmann::json entry = {{"after_launch", launch_id}, {"count", opens}};
    // Lost events cannot be told apart from opens: they count as one.
    if (overflow) entry["overflow"] = true;
    opens_.push_back(std::move(entry));
  }
  for (const auto& [mask, what] : kChangeEvents) {
    if (seen & mask) Changed(launch_id, what);
  }
}

void CanaryWatch::Reverify(const std::string& launch_id) {
  ++verified_;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) {
    Changed(launch_id, errno == ENOENT ? "gone from its path" : Errno("lstat"));
  } else if (st.st_dev != dev_ || st.st_ino != ino_) {
    Changed(launch_id, "replaced: its path names another file");
  } else if ((st.st_mode & 07777) != mode_) {
    Changed(launch_id, fmt::format("mode changed from {:04o} to {:04o}", mode_, st.st_mode & 07777));
  }
  std::string content(kMaxCanaryBytes + 1, '\0');
  ssize_t n = ::pread(file_fd_, content.data(), content.size(), 0);
  if (n < 0) return Changed(launch_id, Errno("pread(canary)"));
  content.resize(static_cast<std::size_t>(n));
  if (Sha256Hex(content) != sha256_) Changed(launch_id, "content changed (sha256 differs)");
}

void CanaryWatch::Changed(const std::string& launch_id, const std::string& what) {
  for (const nlohmann::json& change : changes_) {
    if (change.at("what") == what) return;  // a lasting change is reported where it was first seen
  }
  changes_.push_back({{"after_launch", launch_id}, {"what", what}});
}

}  // namespace sandprobe
