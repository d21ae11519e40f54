// The launcher: the ONLY code in sandprobe that starts processes.
//
// Every sandbox command (docker run, bwrap, cleanup, sweep, preflight) goes through Launch().
// A launch is a closed episode: when Launch() returns, the child has been reaped, every process
// left in its process group has been SIGKILLed, and both output pipes are closed. When the
// harness is a child subreaper (BecomeChildSubreaper), processes that escaped the group
// (double fork + setsid) are killed and reaped too (launch/launch_leftovers.h). Each child gets
// SIGKILL as its parent-death signal, so a harness killed with -9 does not leave its direct
// children running either.
//
// Launcher is an interface so lifecycles (run/sandbox.*) can be unit-tested with a fake.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/leftover_process.h"
#include "model/status.h"

namespace sandprobe {

// The harness's own bounds around a process it starts directly (host, bwrap, firejail
// profiles): applied in the child before exec, inherited by everything it starts. Each is
// optional; set them above the probes' ceilings so they only catch a runaway probe.
struct LaunchEnvelope {
  std::optional<std::uint64_t> address_space_bytes;  // RLIMIT_AS
  std::optional<std::uint64_t> open_files;           // RLIMIT_NOFILE
  std::optional<std::uint64_t> file_size_bytes;      // RLIMIT_FSIZE
  std::optional<std::uint64_t> cpu_seconds;          // RLIMIT_CPU
  // A pids cgroup made for this launch with this pids.max, because RLIMIT_NPROC does not bind
  // root (v1: /sys/fs/cgroup/pids/sandprobe/...; v2: beside the harness in its own cgroup, see
  // launch/launch_pids_cgroup.h). When the cgroup cannot be made (no pids hierarchy, not
  // delegated, not root), the launch runs without it and LaunchResult::envelope_note says so.
  std::optional<std::int64_t> pids_max;
  bool empty() const {
    return !address_space_bytes && !open_files && !file_size_bytes && !cpu_seconds && !pids_max;
  }
};

// The egress lab's sandbox side (issue 28, lab/lab_sandbox_netns.h): the child joins a network
// namespace the harness made and sees the lab's resolver files, before exec. Between fork and
// exec it setns()es into `netns_fd`, unshares a mount namespace of its own (everything under /
// made private, so nothing propagates back), and bind-mounts `resolv_conf` over /etc/resolv.conf
// and `hosts` over /etc/hosts, read-only (over the target when either is a symlink; the target
// must be a regular file). The host's files are never touched: the mounts exist only in the
// child's namespace and go with its last process.
//
// Needs CAP_SYS_ADMIN where the harness runs (setns into a namespace it does not own, mount):
// a root harness has it. A non-root harness would have to run itself in a user namespace that
// owns both the lab's and the sandbox's network namespaces (unshare -Ur before the lab is
// made); the launch fails naming setns or mount otherwise.
struct LabJoin {
  int netns_fd = -1;        // the sandbox-side network namespace (SandboxNetns), kept open by the caller
  std::string resolv_conf;  // host path of the file the child sees as /etc/resolv.conf
  std::string hosts;        // host path of the file the child sees as /etc/hosts
};

// What to run and how long to let it run.
struct LaunchSpec {
  std::vector<std::string> argv;   // argv[0] is searched in the child's PATH when it has no '/'
  std::vector<std::pair<std::string, std::string>> extra_env;  // added to the inherited environment (override same names)
  std::string stdin_data;          // written to the child's stdin then closed; empty -> stdin is /dev/null
  std::string working_dir;         // empty: inherit
  std::chrono::milliseconds timeout{30000};
  // TERM -> grace -> KILL. Also bounds how long output is drained after the direct child
  // exited, in case a process that left the group still holds the pipes.
  std::chrono::milliseconds grace{2000};
  std::size_t output_cap = 1 << 20;        // per stream: the first `output_cap` bytes are kept, the rest drained and counted
  const std::atomic<bool>* cancel = nullptr;  // when it turns true: kill as on timeout, result.cancelled = true
  // The same as `cancel`, as an event: when this fd turns readable (an eventfd or a pipe's read
  // end the caller writes to), the launch is killed at once, where `cancel` is only looked at
  // every 50 ms. The launcher never reads or closes it; -1: none.
  int cancel_fd = -1;
  // Called on the launching thread right after the child has exec'd (Boost.Process returns from
  // the spawn only then), before Launch() waits for it: a caller that needs the process running
  // (a canary) waits for this instead of polling /proc.
  std::function<void(int pid)> on_started;
  // true: the child gets an empty environment (not even extra_env or the launch marker), as
  // under `env -i`; its argv[0] is still resolved with the harness's PATH.
  bool empty_environment = false;
  LaunchEnvelope envelope;  // empty: the child inherits the harness's limits
  // Non-empty: an orphan of this launch whose argv has this exact element is left running
  // (LaunchResult::leftovers_spared) instead of killed. For a process the policy says must
  // outlive the launch (persistence.background_processes); whoever set it ends the process
  // later, found by the same element (the persist witness's token).
  std::string spare_processes_with_arg;
  // Set: the child runs inside the egress lab (LabJoin above); unset: in the harness's namespaces.
  std::optional<LabJoin> lab_join;
  // Non-empty: an orphan whose argv has this exact element is this launch's (launch_leftovers.h
  // rule 3), e.g. the sandbox instance's name, which podman's conmon carries ("-n NAME") but not
  // the launch marker (podman gives conmon an environment of its own).
  std::string orphan_tag;
};

// Facts about one finished launch; the caller judges them.
struct LaunchResult {
  int pid = 0;
  std::optional<int> exit_code;    // exited normally
  std::optional<int> signal;       // killed by a signal (from anyone, including our own kill)
  bool timed_out = false;          // we killed it at the timeout
  bool cancelled = false;          // we killed it because *cancel became true
  std::chrono::milliseconds timeout{0};  // the spec's timeout, so DescribeExit can name it
  std::chrono::milliseconds wall{0};
  std::string out, err;
  std::size_t out_dropped = 0, err_dropped = 0;   // bytes beyond the cap
  std::string envelope_note;  // "pids cgroup unavailable: mkdir(...): EROFS"; empty when all applied
  // The program that ran: argv[0] resolved as execvp would with the child's PATH, made
  // absolute, and exec'd by exactly this path (launch/launch_executable.h).
  std::string executable;
  std::string executable_sha256;   // hex SHA-256 of that file at launch; "" when unreadable
  // "" or why the file is easy to forge ("in a world-writable directory /tmp/x"), and where PATH
  // found it when outside the system directories (executable_forgeable tells the two apart)
  std::string executable_warning;
  // Processes of this launch still alive after its direct child ended, SIGKILLed and (when
  // ours to reap) reaped by the launcher: group stragglers, and orphans that left the group
  // (only seen when the process is a child subreaper). Evidence that something outlived the
  // invocation; the argv is read before the kill.
  std::vector<LeftoverProcess> leftovers_killed;
  // When the harness's timeout (or a cancel) ends the launch: every process of its tree still
  // alive at that moment, read before the first signal. A sandbox whose own teardown kills what
  // it holds (a pid namespace) leaves no leftovers to find after the kill; this is the proof
  // of what kept the launch running.
  std::vector<LeftoverProcess> alive_at_timeout;
  // Orphans left running because they carry LaunchSpec::spare_processes_with_arg, with the
  // argv read when they were found.
  std::vector<LeftoverProcess> leftovers_spared;
  // The launch's pids cgroup when a spared process is still inside it: left in place (removing
  // it would kill them); the caller removes it (RemoveCgroupDir) once it has ended them.
  std::string kept_cgroup;
  // executable_warning names a way someone other than root or this user could have replaced
  // the file (ExecutableWarning), or it could not be hashed: what it printed decides nothing.
  // False when the warning only says where PATH found it (PathLocationNote).
  bool executable_forgeable = false;
};

class Launcher {  // interface, so lifecycles can be unit-tested with a fake
 public:
  virtual ~Launcher() = default;
  // Error Status only when the process could not be started ("execve(nonexistent-cmd): ENOENT" style,
  // naming argv[0]); a non-zero exit, a signal or a timeout are results, not errors.
  virtual StatusOr<LaunchResult> Launch(const LaunchSpec& spec) = 0;
};

// The real launcher over Boost.Process v1. The child gets its own process group, only fds
// 0-2, an empty signal mask, SIGPIPE at its default, SIGKILL as parent-death signal and
// SANDPROBE_LAUNCH_ID in its environment (see launch_leftovers.h). Launch() may be called from
// several threads at once (each call runs its own io_context; the only shared state is the
// registry of live launches). Installs no signal handler.
//
// The parent-death signal fires when the *thread* that launched exits; Launch() blocks that
// thread until the child is reaped, so it only fires when the whole harness dies. The kernel
// clears it on exec of a set-user-ID binary (firejail): such a child outlives a killed harness,
// and `sandprobe sweep` is what finds it.
class ProcessLauncher final : public Launcher {
 public:
  StatusOr<LaunchResult> Launch(const LaunchSpec& spec) override;
};

// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): orphans of what it launched
// are reparented to it instead of init, so Launch() can find and kill those that escaped the
// process group. Called once at the start of main(); lasts for the process's life.
Status BecomeChildSubreaper();

// "exit 0", "exit 125", "signal 9 (SIGKILL)", "timed out after 2000 ms (then signal 15 (SIGTERM))",
// "cancelled".
std::string DescribeExit(const LaunchResult& r);

// Shell-quoted for messages, never for execution: docker run --name 'a b'
std::string FormatArgv(const std::vector<std::string>& argv);

// How the child makes every inherited fd >= 3 close-on-exec (exposed so tests can force the
// fallbacks). Marking instead of closing keeps Boost.Process's exec-error pipe working: it is
// already close-on-exec and must stay open until execve.
enum class FdSweep {
  kCloseRange,   // close_range(3, ~0, CLOSE_RANGE_CLOEXEC), Linux >= 5.11; falls back on error
  kProcSelfFd,   // getdents64 over /proc/self/fd; falls back to kEveryNumber when unreadable
  kEveryNumber,  // fcntl on every number below RLIMIT_NOFILE (capped)
};
// Async-signal-safe (no allocation): runs between fork and exec. Returns 0 or an errno.
int MarkInheritedFdsCloexec(FdSweep how) noexcept;

}  // namespace sandprobe
