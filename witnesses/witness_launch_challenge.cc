#include "witnesses/witness_launch_challenge.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "contract/launch_control.h"

namespace sandprobe {
namespace {

std::string Errno(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// Writes all of `content` to `fd`.
bool WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The inotify descriptor every launch's control watch is on, and what each watch saw so far.
// Made once, never closed (see the header).
struct SharedWatches {
  std::mutex mu;
  int fd = -1;
  std::string error;             // why there is no descriptor
  std::map<int, bool> opened;    // watch descriptor -> an open (or a lost event) was seen
};

SharedWatches& Shared() {
  static SharedWatches* shared = [] {
    auto* s = new SharedWatches;
    s->fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (s->fd < 0) s->error = Errno("inotify_init1 (the launches' controls)");
    return s;
  }();
  return *shared;
}

// Reads every queued event into `opened`; the caller holds the lock.
void Drain(SharedWatches& shared) {
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    ssize_t n = ::read(shared.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more queued
    for (char* at = buffer; at < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      if (event->mask & IN_Q_OVERFLOW) {
        // Lost events may have been any watch's open: counted as one for all, since a replay
        // still fails the answer.
        for (auto& [watch, seen] : shared.opened) seen = true;
      } else if (event->mask & IN_OPEN) {
        auto it = shared.opened.find(event->wd);
        if (it != shared.opened.end()) it->second = true;  // else a watch already removed
      }
      at += sizeof(inotify_event) + event->len;
    }
  }
}

}  // namespace

StatusOr<LaunchChallenge> LaunchChallenge::Plant(const ChallengeSite& site, const std::string& name,
                                                 std::string content) {
  LaunchChallenge challenge;
  challenge.host_path_ = site.host_dir + "/" + name;
  challenge.inside_path_ = site.inside_dir + "/" + name;
  challenge.readable_by_policy_ = site.readable_by_policy;
  // O_EXCL | O_NOFOLLOW: a name the sandbox planted first (it may own the workspace) is refused.
  int fd = ::open(challenge.host_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return Status::Error(Errno(fmt::format("create the launch's control {}", challenge.host_path_)));
  // Owned by the run from here on: the destructor removes it.
  challenge.content_ = std::move(content);
  const bool written = WriteAll(fd, challenge.content_) && ::fchmod(fd, 0444) == 0;
  const std::string write_error = written ? "" : Errno(fmt::format("write the launch's control {}", challenge.host_path_));
  ::close(fd);
  if (!written) return Status::Error(write_error);
  SharedWatches& shared = Shared();
  std::lock_guard lock(shared.mu);
  if (shared.fd < 0) return Status::Error(shared.error);
  challenge.watch_ = ::inotify_add_watch(shared.fd, challenge.host_path_.c_str(), IN_OPEN | IN_DONT_FOLLOW);
  if (challenge.watch_ < 0) return Status::Error(Errno(fmt::format("inotify_add_watch({})", challenge.host_path_)));
  shared.opened[challenge.watch_] = false;
  return challenge;
}

LaunchChallenge::LaunchChallenge(LaunchChallenge&& other) noexcept
    : host_path_(std::move(other.host_path_)),
      inside_path_(std::move(other.inside_path_)),
      content_(std::move(other.content_)),
      readable_by_policy_(other.readable_by_policy_),
      watch_(other.watch_) {
  other.watch_ = -1;
  other.host_path_.clear();
}

LaunchChallenge::~LaunchChallenge() {
  if (watch_ >= 0) {
    SharedWatches& shared = Shared();
    std::lock_guard lock(shared.mu);
    ::inotify_rm_watch(shared.fd, watch_);
    shared.opened.erase(watch_);
  }
  if (!host_path_.empty()) ::unlink(host_path_.c_str());
}

bool LaunchChallenge::SawOpen() {
  SharedWatches& shared = Shared();
  std::lock_guard lock(shared.mu);
  Drain(shared);
  auto it = shared.opened.find(watch_);
  return it != shared.opened.end() && it->second;
}

nlohmann::json LaunchChallenge::Judge(const ProbeFrames& frames, const std::string& nonce) {
  const bool opened = SawOpen();
  const nlohmann::json* hello = frames.facts.empty() ? nullptr : &frames.facts.front();
  const bool answered = hello != nullptr && hello->is_object() && hello->contains(std::string(kControlAnswerKey));
  nlohmann::json out = {{"path", inside_path_}, {"answered", answered}, {"opened", opened}};
  // A sandbox whose policy refuses the workspace (RestrictedPython refuses open() itself) cannot
  // let the probe answer: no control for this launch, said so, and its passes rest on the
  // probe's word alone. A replay may claim this too, and gains no more than that — unless the
  // claim contradicts what the host saw, or what the policy promises.
  if (!answered && hello != nullptr && hello->is_object() && hello->contains(std::string(kControlErrnoKey))) {
    const std::string claim = *ChallengeFailure(hello, "", opened, inside_path_);
    const bool open_claimed_failed = hello->value(std::string(kControlStepKey), nlohmann::json()) == "open";
    if (opened && open_claimed_failed) {
      out["failed"] = claim + ", but the host's watch saw it opened during the launch: not the live probe's account";
    } else if (readable_by_policy_) {
      out["failed"] = claim + ", although the policy declares {workspace} readable: a sandbox refusing what "
                              "its policy allows, or a launcher hiding the control";
    } else {
      out["unavailable"] = claim;
    }
    return out;
  }
  if (std::optional<std::string> why = ChallengeFailure(hello, ControlAnswer(nonce, content_), opened, inside_path_)) {
    out["failed"] = *why;
  }
  return out;
}

std::optional<std::string> ChallengeFailure(const nlohmann::json* hello, const std::string& expected,
                                            bool opened, const std::string& inside_path) {
  if (hello == nullptr || !hello->is_object() || hello->value("family", nlohmann::json()) != "hello") {
    return "no hello fact answered the fresh control";
  }
  const nlohmann::json answer = hello->value(std::string(kControlAnswerKey), nlohmann::json());
  if (!answer.is_string()) {
    const nlohmann::json err = hello->value(std::string(kControlErrnoKey), nlohmann::json());
    if (err.is_string()) {
      const std::string errno_name = err.get<std::string>();
      return fmt::format("the probe could not read its fresh control {} ({} {})", inside_path,
                         hello->value(std::string(kControlStepKey), nlohmann::json("?")).dump(),
                         errno_name.empty() ? "refused by its runtime" : errno_name);
    }
    return "the hello did not answer the fresh control (no control_sha256)";
  }
  if (answer.get<std::string>() != expected) {
    return "the answer to the fresh control is not SHA-256(nonce || the file planted for this launch): "
           "output of another launch (a replay, a cached result) or of another program";
  }
  if (!opened) {
    return fmt::format("the control was answered, but the host's watch saw no open of {} during the launch",
                       inside_path);
  }
  return std::nullopt;
}

}  // namespace sandprobe
