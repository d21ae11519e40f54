// When a run asks whether the backend is there (the profile's `requires`), and what it found.
// One gate per run, shared by the launch threads (run -j N).
//
//   before:     the first launch waits for the preflight; a failure keeps every launch from
//               starting.
//   on_failure: launches start at once; only a probe launch that did not complete runs the
//               preflight (once per run), so a missing backend still reads "backend unavailable,
//               <cause>, <fix>" and not as a broken sandbox. A passing run pays no extra launch.
//
// A backend that answered in this run (a probe spoke through it) and then fails its preflight
// did not go missing, it went away: that is never a skip, whatever --allow-missing-backend says.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

// Whether this process may talk to the docker daemon's socket, as the harness sees it (by a
// connect(2) that sends nothing).
enum class DockerSocketAccess {
  kAllowed,   // it may open it (root, or a member of the socket's group)
  kNoSocket,      // there is no socket there: the daemon is not running, or not installed
  kNotListening,  // the socket file is there and nothing listens on it: the daemon died
  kDenied,        // the socket is there and this user may not open it
};
// `docker_host` is $DOCKER_HOST: a unix:// address names the socket, anything else or ""
// means the default /var/run/docker.sock.
DockerSocketAccess ProbeDockerSocketAccess(std::string_view docker_host);

// A failed preflight, as a launch must hear it.
struct BackendUnavailable {
  std::string why;  // the preflight's message (preflight_cause.h says what ends it)
  // The backend had answered earlier in this run (a probe's frame came through it): it went
  // away mid-run, a harness failure rather than a backend that may be absent.
  bool went_away = false;
  bool operator==(const BackendUnavailable&) const = default;
};

class PreflightGate {
 public:
  PreflightGate(PreflightWhen when, std::function<Status()> run_preflight);

  // Before a probe launch: why it must not start (the preflight failed), or nullopt.
  std::optional<BackendUnavailable> BeforeLaunch();
  // After a probe launch that did not complete: the preflight's failure, if it fails; then the
  // launch's own outcome says nothing about the sandbox.
  std::optional<BackendUnavailable> AfterIncompleteLaunch();
  // A launch's probe spoke through the backend (a frame with that launch's nonce): it was up.
  void BackendAnswered();
  // For the report: "ok", the failure, or "not run: <why>".
  std::string Summary();

 private:
  // Runs the preflight unless it has run; the caller holds mu_.
  const Status& RunOnce();
  std::optional<BackendUnavailable> Failure() const;  // the caller holds mu_

  std::mutex mu_;
  PreflightWhen when_;
  std::function<Status()> run_preflight_;
  std::optional<Status> result_;
  bool answered_ = false;   // a probe spoke through the backend (BackendAnswered)
  bool went_away_ = false;  // answered_ when the preflight first failed
};

}  // namespace sandprobe
