#include "witnesses/witness_launch_challenge.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

StatusOr<LaunchChallenge> LaunchChallenge::Plant(const ChallengeSite& site, const std::string& name,
                                                 std::string content) {
  LaunchChallenge challenge;
  challenge.host_path_ = site.host_dir + "/" + name;
  challenge.inside_path_ = site.inside_dir + "/" + name;
  // O_EXCL | O_NOFOLLOW: a name the sandbox planted first (it may own the workspace) is refused.
  int fd = ::open(challenge.host_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return Status::Error(Errno(fmt::format("create the launch's control {}", challenge.host_path_)));
  // Owned by the run from here on: the destructor removes it.
  challenge.content_ = std::move(content);
  const bool written = WriteAll(fd, challenge.content_) && ::fchmod(fd, 0444) == 0;
  const std::string write_error = written ? "" : Errno(fmt::format("write the launch's control {}", challenge.host_path_));
  ::close(fd);
  if (!written) return Status::Error(write_error);
  challenge.inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (challenge.inotify_fd_ < 0) return Status::Error(Errno("inotify_init1 (the launch's control)"));
  if (::inotify_add_watch(challenge.inotify_fd_, challenge.host_path_.c_str(), IN_OPEN | IN_DONT_FOLLOW) < 0) {
    return Status::Error(Errno(fmt::format("inotify_add_watch({})", challenge.host_path_)));
  }
  return challenge;
}

LaunchChallenge::LaunchChallenge(LaunchChallenge&& other) noexcept
    : host_path_(std::move(other.host_path_)),
      inside_path_(std::move(other.inside_path_)),
      content_(std::move(other.content_)),
      inotify_fd_(other.inotify_fd_) {
  other.inotify_fd_ = -1;
  other.host_path_.clear();
}

LaunchChallenge::~LaunchChallenge() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (!host_path_.empty()) ::unlink(host_path_.c_str());
}

bool LaunchChallenge::SawOpen() {
  alignas(inotify_event) char buffer[1024];
  bool opened = false;
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more queued
    for (char* at = buffer; at < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      // An overflow lost events, which may have been the open: counted as one, since a replay
      // still fails the answer.
      if (event->mask & (IN_OPEN | IN_Q_OVERFLOW)) opened = true;
      at += sizeof(inotify_event) + event->len;
    }
  }
  return opened;
}

nlohmann::json LaunchChallenge::Judge(const ProbeFrames& frames, const std::string& nonce) {
  const bool opened = SawOpen();
  const nlohmann::json* hello = frames.facts.empty() ? nullptr : &frames.facts.front();
  const bool answered = hello != nullptr && hello->is_object() && hello->contains(std::string(kControlAnswerKey));
  nlohmann::json out = {{"path", inside_path_}, {"answered", answered}, {"opened", opened}};
  // A sandbox whose policy refuses the workspace (RestrictedPython refuses open() itself) cannot
  // let the probe answer: no control for this launch, said so, and its passes rest on the
  // probe's word alone. A replay may claim this too, and gains no more than that.
  if (!answered && hello != nullptr && hello->is_object() && hello->contains(std::string(kControlErrnoKey))) {
    out["unavailable"] = *ChallengeFailure(hello, "", opened, inside_path_);
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
