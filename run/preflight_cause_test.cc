#include "run/preflight_cause.h"

#include <set>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::vector<std::string> kBwrapStrict = {"setpriv", "--reuid", "65534", "--regid", "65534",
                                               "--clear-groups", "bwrap", "--unshare-all", "--ro-bind",
                                               "/", "/", "true"};
const std::vector<std::string> kDockerInspect = {"docker", "image", "inspect", "sandprobe/agent:latest"};
constexpr const char* kBwrapHint = "apt-get install bubblewrap util-linux";

// A machine with the named programs installed, as root unless told otherwise.
PreflightHost Host(std::set<std::string> installed, bool root = true) {
  PreflightHost host;
  host.installed = [installed](const std::string& p) { return installed.count(p) > 0; };
  host.docker_socket = DockerSocketAccess::kAllowed;
  host.docker_socket_path = "/var/run/docker.sock";
  host.can_switch_users = root;
  host.privileged = root;
  host.uid = root ? 0 : 1000;
  return host;
}

PreflightFailure Exited(std::vector<std::string> argv, int code) {
  return {.argv = std::move(argv), .started = true, .exit_code = code};
}

// The bwrap-strict case of issue 25: setpriv exits 127 for want of CAP_SETUID, and the advice
// was "install bubblewrap".
TEST(PreflightCauseTest, SetprivWithoutCapabilitiesIsAPermissionNotAMissingPackage) {
  PreflightDiagnosis d =
      DiagnosePreflight(Exited(kBwrapStrict, 127), Host({"setpriv", "bwrap", "true"}, false), kBwrapHint);
  EXPECT_EQ(d.cause, PreflightCause::kPermission);
  EXPECT_NE(d.why.find("CAP_SETUID and CAP_SETGID"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("uid 1000"), std::string::npos) << d.why;
  EXPECT_NE(d.fix.find("bwrap-user"), std::string::npos) << d.fix;
  EXPECT_EQ(d.fix.find("apt-get"), std::string::npos) << d.fix;
}

// The same status 127 as root: setpriv could switch users, so it could not exec bwrap.
TEST(PreflightCauseTest, AProgramAWrapperRunsThatIsNotInstalledIsMissing) {
  PreflightDiagnosis d = DiagnosePreflight(Exited(kBwrapStrict, 127), Host({"setpriv", "true"}), kBwrapHint);
  EXPECT_EQ(d.cause, PreflightCause::kMissingProgram);
  EXPECT_EQ(d.why, "bwrap is not installed (not found in PATH)");
  EXPECT_EQ(d.fix, "install: apt-get install bubblewrap util-linux");
  PreflightFailure not_started{.argv = kBwrapStrict, .started = false};
  d = DiagnosePreflight(not_started, Host({"bwrap"}), kBwrapHint);
  EXPECT_EQ(d.why, "setpriv is not installed (not found in PATH)");
  EXPECT_EQ(DiagnosePreflight(not_started, Host({}), "").fix, "install the package that provides setpriv");
}

// issue 27: wasi-node's requires is `node RUNNER --version`; without the runner node exits 1,
// and the message must name the runner, not blame node.
TEST(PreflightCauseTest, AnInstalledRuntimeWhoseScriptIsNotThereNamesTheScript) {
  const std::vector<std::string> command = {"/usr/bin/node", "/opt/sandprobe-runtimes/bin/runner.mjs", "--version"};
  PreflightHost host = Host({"/usr/bin/node"});
  host.exists = [](const std::string& path) { return path == "/usr/bin/node"; };
  PreflightDiagnosis d = DiagnosePreflight(Exited(command, 1), host, "scripts/setup.sh --with wasi");
  EXPECT_EQ(d.cause, PreflightCause::kMissingProgram);
  EXPECT_EQ(d.why, "/opt/sandprobe-runtimes/bin/runner.mjs does not exist (node's argument: node is installed, that file is not)");
  EXPECT_EQ(d.fix, "install: scripts/setup.sh --with wasi");
  host.exists = [](const std::string&) { return true; };  // the script is there: node's own failure
  EXPECT_EQ(DiagnosePreflight(Exited(command, 1), host, "").cause, PreflightCause::kBackendRefused);
}

TEST(PreflightCauseTest, WrappersOptionValuesAreNotTheProgram) {
  // --inh-caps takes a value, --nnp does not, `--` ends the options; env's NAME=VALUE come first.
  PreflightDiagnosis d = DiagnosePreflight(
      Exited({"setpriv", "--inh-caps", "-all", "--nnp", "--", "env", "-u", "X", "A=1", "bwrap", "true"}, 1),
      Host({"setpriv", "env"}), "");
  EXPECT_EQ(d.why, "bwrap is not installed (not found in PATH)");
}

// Unprivileged bwrap (directly, or after setpriv dropped to another user) on a kernel that
// refuses user namespaces to such users.
TEST(PreflightCauseTest, UserNamespacesRefusedByTheKernelArePermission) {
  PreflightHost host = Host({"setpriv", "bwrap", "true"});
  host.userns_refused = "kernel.unprivileged_userns_clone is 0";
  PreflightDiagnosis d = DiagnosePreflight(Exited(kBwrapStrict, 1), host, kBwrapHint);
  EXPECT_EQ(d.cause, PreflightCause::kPermission);
  EXPECT_NE(d.why.find("kernel.unprivileged_userns_clone is 0"), std::string::npos) << d.why;
  // Root running bwrap itself needs no unprivileged user namespace.
  d = DiagnosePreflight(Exited({"bwrap", "--unshare-all", "true"}, 1), host, kBwrapHint);
  EXPECT_EQ(d.cause, PreflightCause::kBackendRefused);
}

TEST(PreflightCauseTest, TheDockerSocketTellsDaemonDownFromPermission) {
  PreflightHost host = Host({"docker"}, false);
  host.docker_socket = DockerSocketAccess::kNoSocket;
  PreflightDiagnosis d = DiagnosePreflight(Exited(kDockerInspect, 1), host, "scripts/setup.sh");
  EXPECT_EQ(d.cause, PreflightCause::kDaemonDown);
  EXPECT_EQ(d.why, "there is no socket at /var/run/docker.sock: dockerd is not running");
  host.docker_socket = DockerSocketAccess::kNotListening;
  EXPECT_EQ(DiagnosePreflight(Exited(kDockerInspect, 1), host, "").cause, PreflightCause::kDaemonDown);
  host.docker_socket = DockerSocketAccess::kDenied;
  d = DiagnosePreflight(Exited(kDockerInspect, 1), host, "scripts/setup.sh");
  EXPECT_EQ(d.cause, PreflightCause::kPermission);
  EXPECT_NE(d.fix.find("usermod -aG docker"), std::string::npos) << d.fix;
  // A usable daemon that refuses (the image is not built): the profile's own set-up hint.
  host.docker_socket = DockerSocketAccess::kAllowed;
  d = DiagnosePreflight(Exited(kDockerInspect, 1), host, "scripts/setup.sh");
  EXPECT_EQ(d.cause, PreflightCause::kBackendRefused);
  EXPECT_EQ(d.fix, "set the backend up: scripts/setup.sh");
  // DOCKER_HOST=tcp://...: no socket to look at, so no claim about one.
  host.docker_socket_path.clear();
  host.docker_socket = DockerSocketAccess::kNoSocket;
  EXPECT_EQ(DiagnosePreflight(Exited(kDockerInspect, 1), host, "").cause, PreflightCause::kBackendRefused);
  // The docker CLI itself missing is a missing program, whatever the socket.
  EXPECT_EQ(DiagnosePreflight(Exited(kDockerInspect, 1), Host({}), "").cause, PreflightCause::kMissingProgram);
}

TEST(PreflightCauseTest, ATimeoutAndTheMessage) {
  PreflightFailure hung{.argv = {"rt", "info"}, .started = true, .timed_out = true};
  PreflightDiagnosis d = DiagnosePreflight(hung, Host({"rt"}), "x");
  EXPECT_EQ(d.cause, PreflightCause::kTimedOut);
  EXPECT_EQ(DescribeDiagnosis({PreflightCause::kPermission, "why", "fix it"}), "; cause: permission: why; fix: fix it");
  EXPECT_EQ(DescribeDiagnosis({PreflightCause::kBackendRefused, "why", ""}), "; cause: backend refused: why");
}

// The real host view answers for this machine without crashing; `sh` is everywhere.
TEST(PreflightCauseTest, TheRealHostViewFindsInstalledPrograms) {
  PreflightHost host = RealPreflightHost();
  EXPECT_TRUE(host.installed("sh"));
  EXPECT_FALSE(host.installed("sandprobe-no-such-program-1f3a"));
  EXPECT_FALSE(host.installed("/nonexistent/bin/x"));
}

}  // namespace
}  // namespace sandprobe
