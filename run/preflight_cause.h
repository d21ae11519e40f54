// Why a backend's preflight (a profile's `requires` command) failed, and what fixes it.
//
// "install bubblewrap" is the wrong advice when bubblewrap is installed and the user may not
// run it, and "start dockerd" is wrong when its socket is there but closed to this user. So
// the cause is told apart by mechanism, never by reading the failed command's words: whether
// `command -v` finds each program the command runs (through wrappers such as setpriv), the
// docker socket's existence and mode, this process's effective capabilities, the kernel's
// switches for unprivileged user namespaces, and the command's own exit status. Programs that
// need a look of their own are rows of one table (preflight_cause.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run/preflight_gate.h"

namespace sandprobe {

enum class PreflightCause {
  kMissingProgram,  // a program the command runs is not installed (not in PATH, not executable)
  kPermission,      // installed, but this user may not use it (socket mode, capabilities, userns)
  kDaemonDown,      // the backend's daemon is not running: no socket where its client looks
  kTimedOut,        // the command did not answer within its limit
  kBackendRefused,  // it ran and failed for a reason of its own (e.g. an image not built yet)
};
std::string_view PreflightCauseName(PreflightCause cause);  // "missing program", "permission", ...

// The failed `requires` command, as the launcher saw it.
struct PreflightFailure {
  std::vector<std::string> argv;  // expanded
  bool started = true;            // false: the launcher could not start argv[0]
  std::optional<int> exit_code;
  bool timed_out = false;
};

// What the diagnosis reads of this machine (RealPreflightHost); a fake in unit tests.
struct PreflightHost {
  std::function<bool(const std::string& program)> installed;  // as execvp would find and run it
  // Whether an absolute path exists (stat): an argument the command needs that is not there,
  // such as the script a runtime runs. Unset: not asked.
  std::function<bool(const std::string& path)> exists;
  DockerSocketAccess docker_socket = DockerSocketAccess::kNoSocket;  // $DOCKER_HOST's or the default
  std::string docker_socket_path;
  bool can_switch_users = false;  // CAP_SETUID and CAP_SETGID in this process's effective set
  bool privileged = false;        // CAP_SYS_ADMIN in the effective set: user namespaces need no sysctl
  unsigned uid = 0;
  // Why this kernel refuses user namespaces to unprivileged users ("kernel.unprivileged_userns_clone
  // is 0"), or "" when it does not.
  std::string userns_refused;
};
PreflightHost RealPreflightHost();

struct PreflightDiagnosis {
  PreflightCause cause = PreflightCause::kBackendRefused;
  std::string why;  // "setpriv cannot switch to uid 65534: this process (uid 1000) lacks CAP_SETUID"
  std::string fix;  // "run sandprobe as root, or ..."; "" when there is nothing to say
};

PreflightDiagnosis DiagnosePreflight(const PreflightFailure& failure, const PreflightHost& host,
                                     std::string_view install_hint);

// "; cause: permission: <why>; fix: <fix>", what ends the preflight's error message.
std::string DescribeDiagnosis(const PreflightDiagnosis& diagnosis);

}  // namespace sandprobe
