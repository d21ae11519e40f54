#include "run/preflight_gate.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sandprobe {

DockerSocketAccess ProbeDockerSocketAccess(std::string_view docker_host) {
  constexpr std::string_view kUnix = "unix://";
  std::string socket = "/var/run/docker.sock";
  if (docker_host.starts_with(kUnix)) socket = std::string(docker_host.substr(kUnix.size()));
  // What the docker CLI would meet: a connect(2), which needs write permission on the socket
  // and search permission on its directories, and fails ECONNREFUSED when the file is there
  // but no daemon listens (a dockerd killed with SIGKILL leaves its socket behind). It is
  // closed unused: nothing is sent to the daemon.
  struct stat st {};
  if (::stat(socket.c_str(), &st) != 0) {
    return errno == EACCES ? DockerSocketAccess::kDenied : DockerSocketAccess::kNoSocket;
  }
  if (!S_ISSOCK(st.st_mode)) return DockerSocketAccess::kNoSocket;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.size() >= sizeof address.sun_path) return DockerSocketAccess::kNoSocket;
  std::memcpy(address.sun_path, socket.c_str(), socket.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return DockerSocketAccess::kNoSocket;
  int result = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int error = result == 0 ? 0 : errno;
  ::close(fd);
  switch (error) {
    case 0: return DockerSocketAccess::kAllowed;
    case EACCES:
    case EPERM: return DockerSocketAccess::kDenied;
    case ECONNREFUSED: return DockerSocketAccess::kNotListening;
    default: return DockerSocketAccess::kNoSocket;  // ENOENT: gone since the stat
  }
}

PreflightGate::PreflightGate(PreflightWhen when, std::function<Status()> run_preflight)
    : when_(when), run_preflight_(std::move(run_preflight)) {}

const Status& PreflightGate::RunOnce() {
  if (!result_) {
    result_ = run_preflight_();
    went_away_ = !result_->ok() && answered_;
  }
  return *result_;
}

std::optional<BackendUnavailable> PreflightGate::Failure() const {
  if (!result_ || result_->ok()) return std::nullopt;
  if (!went_away_) return BackendUnavailable{result_->message(), false};
  return BackendUnavailable{"the backend went away during the run (a probe had answered through it): " +
                                result_->message(),
                            true};
}

std::optional<BackendUnavailable> PreflightGate::BeforeLaunch() {
  std::lock_guard lock(mu_);
  if (when_ == PreflightWhen::kBefore) RunOnce();
  return Failure();
}

std::optional<BackendUnavailable> PreflightGate::AfterIncompleteLaunch() {
  std::lock_guard lock(mu_);
  RunOnce();
  return Failure();
}

void PreflightGate::BackendAnswered() {
  std::lock_guard lock(mu_);
  answered_ = true;
}

std::string PreflightGate::Summary() {
  std::lock_guard lock(mu_);
  if (!result_) {
    return when_ == PreflightWhen::kBefore
               ? "not run: no probe launch"
               : "not run: every probe launch completed (profile preflight: on_failure)";
  }
  if (std::optional<BackendUnavailable> failed = Failure()) return failed->why;
  return "ok";
}

}  // namespace sandprobe
