#include "run/preflight_gate.h"

#include <sys/stat.h>
#include <unistd.h>

namespace sandprobe {

DockerSocketAccess ProbeDockerSocketAccess(std::string_view docker_host) {
  constexpr std::string_view kUnix = "unix://";
  std::string socket = "/var/run/docker.sock";
  if (docker_host.starts_with(kUnix)) socket = std::string(docker_host.substr(kUnix.size()));
  struct stat st {};
  if (::stat(socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return DockerSocketAccess::kNoSocket;
  // connect(2) on a unix socket needs write permission on it; access() asks with the real
  // uid and groups, which are the harness's own.
  return ::access(socket.c_str(), R_OK | W_OK) == 0 ? DockerSocketAccess::kAllowed
                                                    : DockerSocketAccess::kDenied;
}

std::string PreflightHint(std::string_view failed_program, DockerSocketAccess access,
                          std::string_view install_hint) {
  const std::string_view program = failed_program.substr(failed_program.rfind('/') + 1);
  if (program == "docker") {
    switch (access) {
      case DockerSocketAccess::kDenied:
        return "; docker is installed but this user may not use its socket: add the user to the "
               "docker group (sudo usermod -aG docker $USER, then log in again) or run as root";
      case DockerSocketAccess::kAllowed:
      case DockerSocketAccess::kNoSocket: break;
    }
  }
  return install_hint.empty() ? "" : "; install: " + std::string(install_hint);
}

PreflightGate::PreflightGate(PreflightWhen when, std::function<Status()> run_preflight)
    : when_(when), run_preflight_(std::move(run_preflight)) {}

const Status& PreflightGate::RunOnce() {
  if (!result_) result_ = run_preflight_();
  return *result_;
}

std::optional<std::string> PreflightGate::BeforeLaunch() {
  std::lock_guard lock(mu_);
  if (when_ == PreflightWhen::kBefore) RunOnce();
  if (result_ && !result_->ok()) return result_->message();
  return std::nullopt;
}

std::optional<std::string> PreflightGate::AfterIncompleteLaunch() {
  std::lock_guard lock(mu_);
  const Status& result = RunOnce();
  if (!result.ok()) return result.message();
  return std::nullopt;
}

std::string PreflightGate::Summary() {
  std::lock_guard lock(mu_);
  if (!result_) {
    return when_ == PreflightWhen::kBefore
               ? "not run: no probe launch"
               : "not run: every probe launch completed (profile preflight: on_failure)";
  }
  return result_->ok() ? "ok" : result_->message();
}

}  // namespace sandprobe
