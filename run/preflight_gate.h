// When a run asks whether the backend is there (the profile's `requires`), and what it found.
// One gate per run, shared by the launch threads (run -j N).
//
//   before:     the first launch waits for the preflight; a failure keeps every launch from
//               starting.
//   on_failure: launches start at once; only a probe launch that did not complete runs the
//               preflight (once per run), so a missing backend still reads "backend unavailable,
//               install: ..." and not as a broken sandbox. A passing run pays no extra launch.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

// Whether this process may talk to the docker daemon's socket, as the harness sees it.
enum class DockerSocketAccess {
  kAllowed,   // it may open it (root, or a member of the socket's group)
  kNoSocket,  // there is no socket there: the daemon is not running, or not installed
  kDenied,    // the socket is there and this user may not open it
};
// `docker_host` is $DOCKER_HOST: a unix:// address names the socket, anything else or ""
// means the default /var/run/docker.sock.
DockerSocketAccess ProbeDockerSocketAccess(std::string_view docker_host);

// What ends a failed preflight's message: "; install: <install_hint>" ("" without a hint). When
// the failed command is docker and its socket is there but denied to this user, installing is
// not the fix, the docker group is: that hint instead.
std::string PreflightHint(std::string_view failed_program, DockerSocketAccess access,
                          std::string_view install_hint);

class PreflightGate {
 public:
  PreflightGate(PreflightWhen when, std::function<Status()> run_preflight);

  // Before a probe launch: why it must not start (the preflight failed), or nullopt.
  std::optional<std::string> BeforeLaunch();
  // After a probe launch that did not complete: the preflight's failure, if it fails; then the
  // launch's own outcome says nothing about the sandbox.
  std::optional<std::string> AfterIncompleteLaunch();
  // For the report: "ok", the failure, or "not run: <why>".
  std::string Summary();

 private:
  // Runs the preflight unless it has run; the caller holds mu_.
  const Status& RunOnce();

  std::mutex mu_;
  PreflightWhen when_;
  std::function<Status()> run_preflight_;
  std::optional<Status> result_;
};

}  // namespace sandprobe
