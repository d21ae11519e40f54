#include "run/preflight_cause.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <span>

#include <fmt/format.h>

#include "launch/launch_executable.h"

namespace sandprobe {
namespace {

using Argv = std::span<const std::string>;

std::string_view Basename(std::string_view path) { return path.substr(path.rfind('/') + 1); }

// The command a wrapper runs: what follows its options ("--" ends them; `with_value` options
// take the next item unless written --opt=value). Empty when it names none.
Argv WrappedCommand(Argv argv, std::span<const std::string_view> with_value) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& item = argv[i];
    if (item == "--") return argv.subspan(i + 1);
    if (!item.starts_with('-')) {
      // env's NAME=VALUE assignments come before its command.
      if (item.find('=') != std::string::npos && Basename(argv[0]) == "env") continue;
      return argv.subspan(i);
    }
    if (item.find('=') == std::string::npos &&
        std::find(with_value.begin(), with_value.end(), item) != with_value.end()) {
      ++i;
    }
  }
  return {};
}

bool HasOption(Argv argv, std::span<const std::string_view> options) {
  for (const std::string& item : argv) {
    const std::string_view name = std::string_view(item).substr(0, item.find('='));
    if (std::find(options.begin(), options.end(), name) != options.end()) return true;
  }
  return false;
}

// Where the walk through a command is: the command (from the wrapped program on) and whether
// it still runs with this process's capabilities.
struct Step {
  Argv argv;
  bool privileged;
};

constexpr std::array<std::string_view, 16> kSetprivValueOptions = {
    "--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps",
    "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label",
    "--apparmor-profile", "--landlock-access", "--landlock-rule"};
constexpr std::array<std::string_view, 10> kSetprivSwitchOptions = {
    "--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--clear-groups",
    "--keep-groups", "--init-groups"};
constexpr std::array<std::string_view, 4> kEnvValueOptions = {"-u", "--unset", "-C", "--chdir"};

// setpriv changing uid or groups needs CAP_SETUID and CAP_SETGID; it exits 127 without them
// (util-linux: SETPRIV_EXIT_PRIVERR), the same status as for a command it cannot exec, so the
// capabilities, not the status, tell the two apart.
std::optional<PreflightDiagnosis> Setpriv(Step& step, const PreflightHost& host) {
  if (!HasOption(step.argv, kSetprivSwitchOptions)) return std::nullopt;
  if (!host.can_switch_users) {
    return PreflightDiagnosis{
        PreflightCause::kPermission,
        fmt::format("setpriv switches to another user, which needs CAP_SETUID and CAP_SETGID, and this "
                    "process (uid {}) has neither in its effective set",
                    host.uid),
        "run sandprobe as root, or use a profile with no setpriv step (bwrap-user runs bubblewrap as the "
        "calling user)"};
  }
  step.privileged = false;  // what it runs, runs as the other user
  return std::nullopt;
}

// bwrap as an unprivileged user makes a user namespace; some kernels switch that off.
std::optional<PreflightDiagnosis> Bwrap(Step& step, const PreflightHost& host) {
  if (step.privileged || host.userns_refused.empty()) return std::nullopt;
  return PreflightDiagnosis{
      PreflightCause::kPermission,
      fmt::format("bwrap runs unprivileged here and needs a user namespace, but {}", host.userns_refused),
      "allow unprivileged user namespaces (as root: sysctl -w kernel.unprivileged_userns_clone=1, or "
      "user.max_user_namespaces above 0)"};
}

// The docker CLI talks to dockerd over a unix socket: no socket means no daemon, a socket this
// user may not open means a permission, not a missing package.
std::optional<PreflightDiagnosis> Docker(Step&, const PreflightHost& host) {
  if (host.docker_socket_path.empty()) return std::nullopt;  // DOCKER_HOST is not a unix socket
  switch (host.docker_socket) {
    case DockerSocketAccess::kNoSocket:
      return PreflightDiagnosis{
          PreflightCause::kDaemonDown,
          fmt::format("there is no socket at {}: dockerd is not running", host.docker_socket_path),
          "start dockerd (systemctl start docker), or point DOCKER_HOST at a running one"};
    case DockerSocketAccess::kNotListening:
      return PreflightDiagnosis{
          PreflightCause::kDaemonDown,
          fmt::format("nothing listens on {}: dockerd is not running (one that died leaves its socket)",
                      host.docker_socket_path),
          "start dockerd (systemctl start docker), or point DOCKER_HOST at a running one"};
    case DockerSocketAccess::kDenied:
      return PreflightDiagnosis{
          PreflightCause::kPermission,
          fmt::format("dockerd's socket {} is there, but this user (uid {}) may not open it", host.docker_socket_path,
                      host.uid),
          "add the user to the socket's group (sudo usermod -aG docker $USER, then log in again) or run "
          "as root"};
    case DockerSocketAccess::kAllowed: break;
  }
  return std::nullopt;
}

struct ProgramRow {
  std::string_view program;  // argv[0]'s basename
  // Its own look, or nullptr; may mark the rest of the command unprivileged.
  std::optional<PreflightDiagnosis> (*diagnose)(Step& step, const PreflightHost& host);
  bool wrapper;  // it runs the command after its options
  std::span<const std::string_view> value_options;
};

constexpr ProgramRow kPrograms[] = {
    {"setpriv", Setpriv, true, kSetprivValueOptions},
    {"env", nullptr, true, kEnvValueOptions},
    {"bwrap", Bwrap, false, {}},
    {"docker", Docker, false, {}},
};

const ProgramRow* FindRow(std::string_view program) {
  for (const ProgramRow& row : kPrograms) {
    if (row.program == program) return &row;
  }
  return nullptr;
}

std::string InstallFix(std::string_view install_hint, std::string_view program) {
  return install_hint.empty() ? fmt::format("install the package that provides {}", program)
                              : fmt::format("install: {}", install_hint);
}

// Bits of the effective capability set, from /proc/self/status; 0 when unreadable.
std::uint64_t EffectiveCapabilities() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("CapEff:")) return std::strtoull(line.c_str() + 7, nullptr, 16);
  }
  return 0;
}

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  in >> value;
  return value;
}

// The kernel's switches for unprivileged user namespaces (Debian's patch and the generic limit).
std::string UsernsRefused() {
  if (ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
    return "kernel.unprivileged_userns_clone is 0";
  }
  if (ReadSysctl("/proc/sys/user/max_user_namespaces") == "0") return "user.max_user_namespaces is 0";
  return "";
}

}  // namespace

std::string_view PreflightCauseName(PreflightCause cause) {
  switch (cause) {
    case PreflightCause::kMissingProgram: return "missing program";
    case PreflightCause::kPermission: return "permission";
    case PreflightCause::kDaemonDown: return "daemon down";
    case PreflightCause::kTimedOut: return "timed out";
    case PreflightCause::kBackendRefused: return "backend refused";
  }
  return "?";
}

PreflightHost RealPreflightHost() {
  constexpr int kCapSetgid = 6, kCapSetuid = 7, kCapSysAdmin = 21;
  const std::uint64_t caps = EffectiveCapabilities();
  auto has = [caps](int cap) { return (caps >> cap) & 1U; };
  PreflightHost host;
  host.installed = [](const std::string& program) {
    const char* path = std::getenv("PATH");
    StatusOr<ResolvedExecutable> found =
        ResolveExecutable(program, path ? std::optional<std::string>(path) : std::nullopt, "");
    return found.ok() && ::access(found->path.c_str(), X_OK) == 0;
  };
  const char* docker_host = std::getenv("DOCKER_HOST");
  const std::string_view address = docker_host ? docker_host : "";
  if (address.empty() || address.starts_with("unix://")) {
    host.docker_socket_path = address.empty() ? "/var/run/docker.sock" : std::string(address.substr(7));
    host.docker_socket = ProbeDockerSocketAccess(address);
  }
  host.exists = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  };
  host.can_switch_users = has(kCapSetuid) && has(kCapSetgid);
  host.privileged = has(kCapSysAdmin);
  host.uid = ::getuid();
  host.userns_refused = UsernsRefused();
  return host;
}

PreflightDiagnosis DiagnosePreflight(const PreflightFailure& failure, const PreflightHost& host,
                                     std::string_view install_hint) {
  Step step{failure.argv, host.privileged};
  while (!step.argv.empty()) {
    const std::string& program = step.argv.front();
    if (!host.installed(program)) {
      return {PreflightCause::kMissingProgram, fmt::format("{} is not installed (not found in PATH)", program),
              InstallFix(install_hint, Basename(program))};
    }
    const ProgramRow* row = FindRow(Basename(program));
    if (row == nullptr) break;
    if (row->diagnose != nullptr) {
      if (std::optional<PreflightDiagnosis> found = row->diagnose(step, host)) return *found;
    }
    if (!row->wrapper) break;
    step.argv = WrappedCommand(step.argv, row->value_options);
  }
  const std::string program(Basename(failure.argv.empty() ? "" : failure.argv.front()));
  if (failure.timed_out) {
    return {PreflightCause::kTimedOut, fmt::format("{} did not answer in time", program),
            "see why the backend hangs (run the command by hand)"};
  }
  // An installed runtime that exits because the file it was to run is not there (node with a
  // runner script that was never installed): that file is what is missing.
  for (std::size_t i = 1; host.exists && i < step.argv.size(); ++i) {
    const std::string& arg = step.argv[i];
    if (arg.starts_with('/') && !host.exists(arg)) {
      const std::string runtime(Basename(step.argv.front()));
      return {PreflightCause::kMissingProgram,
              fmt::format("{} does not exist ({}'s argument: {} is installed, that file is not)", arg, runtime, runtime),
              InstallFix(install_hint, Basename(arg))};
    }
  }
  std::string status = failure.exit_code ? fmt::format("exited {}", *failure.exit_code) : "was killed by a signal";
  return {PreflightCause::kBackendRefused,
          fmt::format("{} is installed, but the command {} (its output says why)", program,
                      failure.started ? status : "did not start"),
          install_hint.empty() ? "" : fmt::format("set the backend up: {}", install_hint)};
}

std::string DescribeDiagnosis(const PreflightDiagnosis& diagnosis) {
  std::string out = fmt::format("; cause: {}: {}", PreflightCauseName(diagnosis.cause), diagnosis.why);
  if (!diagnosis.fix.empty()) out += "; fix: " + diagnosis.fix;
  return out;
}

}  // namespace sandprobe
