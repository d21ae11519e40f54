#include "launch/launcher.h"

#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <system_error>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/async_pipe.hpp>
#include <boost/process/child.hpp>
#include <boost/process/args.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <fmt/format.h>

#include "model/errno_text.h"
#include "launch/launch_child_setup.h"
#include "launch/launch_executable.h"
#include "launch/launch_leftovers.h"
#include "launch/proc_info.h"
#include "launch/launch_pids_cgroup.h"
#include "io/sigpipe_block.h"

namespace sandprobe {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

// One output stream being drained into a capped buffer.
struct Capture {
  explicit Capture(asio::io_context& ios) : pipe(ios), buf(64 * 1024) {}
  bp::async_pipe pipe;
  std::vector<char> buf;
  std::string kept;
  std::size_t dropped = 0;
  bool done = false;
};

// One Launch() call: a private io_context drives the pipes, the exit watch and the timers on
// the calling thread. The destructor guarantees that an aborted launch still kills and reaps.
class LaunchSession {
 public:
  explicit LaunchSession(const LaunchSpec& spec) : spec_(spec) {}
  ~LaunchSession();
  StatusOr<LaunchResult> Run();

 private:
  Status Spawn();
  void Read(Capture& c);
  void WriteStdin();
  void WatchExit();
  void ArmTimeout();
  void PollCancel();
  void WatchCancelFd();
  void BeginKill();
  void SignalTree(int sig);
  static std::vector<LeftoverProcess> ListTree(int root);
  void OnExit();
  void MaybeFinish();
  void TakeOrphans();
  void RecordExecutableHash();

  const LaunchSpec& spec_;
  LaunchRegistration registration_;  // outlives the child: unregistered after the destructor body
  asio::io_context ios_;
  Capture out_{ios_}, err_{ios_};
  std::optional<bp::async_pipe> stdin_;
  std::optional<asio::posix::stream_descriptor> pidfd_;
  std::optional<asio::posix::stream_descriptor> cancel_fd_;  // a dup of spec_.cancel_fd
  std::thread waiter_;  // only when pidfd_open is unavailable
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> waiter_work_;
  asio::steady_timer timeout_timer_{ios_}, grace_timer_{ios_}, cancel_timer_{ios_},
      drain_timer_{ios_};
  bp::child child_;
  PidsCgroup pids_cgroup_;  // made only when the envelope has pids_max
  std::future<StatusOr<std::string>> executable_hash_;  // valid from Spawn() until recorded
  pid_t pid_ = 0;
  bool reaped_ = false, exited_ = false, killing_ = false;
  LaunchResult result_;
};

LaunchSession::~LaunchSession() {
  if (pid_ > 0 && !reaped_) {
    ::killpg(pid_, SIGKILL);
    std::error_code ec;
    child_.wait(ec);
  }
  if (waiter_.joinable()) waiter_.join();
  pids_cgroup_.Remove();
}

Status LaunchSession::Spawn() {
  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : spec_.extra_env) env[name] = value;
  env[kLaunchMarkerEnv] = registration_.marker();
  registration_.set_orphan_tag(spec_.orphan_tag);
  // Resolved here, as execvp would with the child's PATH, and exec'd by that absolute path:
  // what the report records is what ran (launch/launch_executable.h). An empty environment
  // resolves with the harness's PATH, as `env -i CMD` finds CMD in the caller's.
  std::optional<std::string> path_env;
  if (auto path = env.find("PATH"); path != env.end()) path_env = path->to_string();
  // Without the marker too: orphan attribution then falls back to start times, exactly as for
  // a child of `env -i` (launch_leftovers.h).
  if (spec_.empty_environment) env.clear();
  StatusOr<ResolvedExecutable> resolved =
      ResolveExecutable(spec_.argv[0], path_env, spec_.working_dir);
  if (!resolved.ok()) return resolved.status();
  const std::string exe = resolved->path;
  result_.executable = exe;
  // Forgeable (untrusted) only by its permissions; where PATH found it is said, not held against it.
  const std::string forgeable = ExecutableWarning(exe);
  const std::string location = PathLocationNote(exe, /*found_in_path=*/spec_.argv[0].find('/') == std::string::npos);
  result_.executable_forgeable = !forgeable.empty();
  result_.executable_warning = forgeable.empty() || location.empty() ? forgeable + location : forgeable + "; " + location;
  executable_hash_ = StartExecutableSha256(exe);  // read while the launch runs
  std::vector<std::string> args(spec_.argv.begin() + 1, spec_.argv.end());

  void* page = ::mmap(nullptr, sizeof(ChildFailure), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Status::Error(fmt::format("mmap: {}", ErrnoText(errno)));
  auto* failure = new (page) ChildFailure{ChildStep::kNone, 0};
  pid_t failed_pid = 0;
  ChildSetup setup;
  setup.failure = failure;
  setup.working_dir = spec_.working_dir.empty() ? nullptr : spec_.working_dir.c_str();
  setup.failed_pid = &failed_pid;
  setup.envelope = &spec_.envelope;
  setup.cgroup_procs = pids_cgroup_.made() ? pids_cgroup_.procs_path().c_str() : nullptr;
  setup.launcher_pid = ::getpid();
  std::optional<LabJoinPaths> lab_join;
  if (spec_.lab_join) {
    StatusOr<LabJoinPaths> paths = ResolveLabJoin(*spec_.lab_join);
    if (!paths.ok()) {
      ::munmap(page, sizeof(ChildFailure));
      return paths.status();
    }
    lab_join.emplace(std::move(*paths));
    setup.lab_join = &*lab_join;
  }
  std::error_code ec;
  auto start = [&](auto&& stdin_init) {
    return bp::child(bp::exe = exe, bp::args = args, env, stdin_init, bp::std_out > out_.pipe,
                     bp::std_err > err_.pipe, setup, ec);
  };
  {
    // Until the child is registered (or a failed one reaped), no orphan scan may run: it
    // would see a child of ours that no launch claims yet.
    std::unique_lock<std::mutex> spawn_lock = LaunchRegistration::LockSpawns();
    if (stdin_) child_ = start(bp::std_in < *stdin_);
    else child_ = start(bp::std_in < bp::null);
    if (!ec) registration_.Register(child_.id(), spawn_lock);
    if (failed_pid > 0)
      while (::waitpid(failed_pid, nullptr, 0) == -1 && errno == EINTR) {
      }
  }
  ChildFailure seen = *failure;
  ::munmap(page, sizeof(ChildFailure));
  if (!ec) {
    pid_ = child_.id();
    return Status::Ok();
  }
  int err = seen.step == ChildStep::kNone ? ec.value() : seen.err;
  return Status::Error(
      DescribeChildSetupFailure(seen.step, err, spec_, pids_cgroup_.procs_path()));
}

void LaunchSession::Read(Capture& c) {
  c.pipe.async_read_some(asio::buffer(c.buf), [this, &c](boost::system::error_code ec, std::size_t n) {
    std::size_t room = c.kept.size() < spec_.output_cap ? spec_.output_cap - c.kept.size() : 0;
    std::size_t take = std::min(n, room);
    c.kept.append(c.buf.data(), take);
    c.dropped += n - take;
    if (ec) {  // EOF, or closed by the drain timer
      c.done = true;
      MaybeFinish();
      return;
    }
    Read(c);
  });
}

void LaunchSession::WriteStdin() {
  if (!stdin_) return;
  asio::async_write(*stdin_, asio::buffer(spec_.stdin_data),
                    [this](boost::system::error_code, std::size_t) {
                      // EPIPE (child stopped reading) is the child's business, not an error.
                      boost::system::error_code ignored;
                      stdin_->close(ignored);
                    });
}

// Readiness of a pidfd means "exited" without reaping: the zombie keeps its pid, so the
// process group id cannot be reused before we have SIGKILLed the stragglers in OnExit.
void LaunchSession::WatchExit() {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (fd >= 0) {
    pidfd_.emplace(ios_, fd);
    pidfd_->async_wait(asio::posix::stream_descriptor::wait_read,
                       [this](boost::system::error_code ec) {
                         if (ec != asio::error::operation_aborted) OnExit();
                       });
    return;
  }
  waiter_work_.emplace(ios_.get_executor());
  waiter_ = std::thread([this, pid = pid_] {
    siginfo_t info;
    while (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT) == -1 && errno == EINTR) {
    }
    asio::post(ios_, [this] { OnExit(); });
  });
}

void LaunchSession::ArmTimeout() {
  timeout_timer_.expires_after(spec_.timeout);
  timeout_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || exited_ || killing_) return;
    result_.timed_out = true;
    result_.alive_at_timeout = ListTree(pid_);
    BeginKill();
  });
}

void LaunchSession::PollCancel() {
  if (!spec_.cancel) return;
  cancel_timer_.expires_after(std::chrono::milliseconds(50));
  cancel_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || exited_) return;
    if (!spec_.cancel->load()) return PollCancel();
    if (killing_) return;
    result_.cancelled = true;
    BeginKill();
  });
}

void LaunchSession::WatchCancelFd() {
  if (spec_.cancel_fd < 0) return;
  int fd = ::fcntl(spec_.cancel_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return PollCancel();  // unlikely (EMFILE): `cancel`, if any, still works
  cancel_fd_.emplace(ios_, fd);
  cancel_fd_->async_wait(asio::posix::stream_descriptor::wait_read,
                         [this](boost::system::error_code ec) {
                           if (ec || exited_ || killing_) return;
                           result_.cancelled = true;
                           BeginKill();
                         });
}

// The launch's process tree (the direct child and its descendants) with argv, as it is now.
std::vector<LeftoverProcess> LaunchSession::ListTree(int root) {
  std::vector<LeftoverProcess> tree;
  std::vector<int> pids = {root};
  if (std::optional<std::vector<int>> below = ListDescendants(root)) {
    pids.insert(pids.end(), below->begin(), below->end());
  }
  for (int pid : pids) {
    tree.push_back({pid, CmdlineForDisplay(ReadProcFile(pid, "cmdline"), kLeftoverArgvCap)});
  }
  return tree;
}

// The direct child may have left its group (setsid); it is still ours to signal, and its pid
// cannot be reused before we reap it.
void LaunchSession::SignalTree(int sig) {
  if (::killpg(pid_, sig) == -1) ::kill(pid_, sig);
}

void LaunchSession::BeginKill() {
  killing_ = true;
  SignalTree(SIGTERM);
  grace_timer_.expires_after(spec_.grace);
  grace_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && !exited_) SignalTree(SIGKILL);
  });
}

void LaunchSession::OnExit() {
  if (exited_) return;
  exited_ = true;
  waiter_work_.reset();
  // Whatever is left of the group must not outlive the launch nor hold the pipes open. It is
  // evidence too (a background process outlived the invocation): listed before the kill.
  result_.leftovers_killed = StopAndListGroup(pid_);
  ::killpg(pid_, SIGKILL);
  // And what escaped the group: killed now, so a daemon holding our pipes does not make the
  // drain below wait out the grace period.
  TakeOrphans();
  timeout_timer_.cancel();
  grace_timer_.cancel();
  cancel_timer_.cancel();
  if (cancel_fd_) cancel_fd_->cancel();  // else its pending wait keeps ios_.run() going
  // A process that left the group may still hold the pipes: drain for at most `grace`.
  drain_timer_.expires_after(spec_.grace);
  drain_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    boost::system::error_code ignored;
    out_.pipe.close(ignored);
    err_.pipe.close(ignored);
    if (stdin_) stdin_->close(ignored);
  });
  MaybeFinish();
}

void LaunchSession::TakeOrphans() {
  for (LeftoverProcess& orphan :
       registration_.KillOrphans(spec_.spare_processes_with_arg, &result_.leftovers_spared)) {
    result_.leftovers_killed.push_back(std::move(orphan));
  }
}

void LaunchSession::MaybeFinish() {
  if (!exited_ || !out_.done || !err_.done) return;
  drain_timer_.cancel();
  boost::system::error_code ignored;
  if (stdin_) stdin_->close(ignored);
  if (pidfd_) pidfd_->close(ignored);
  if (cancel_fd_) cancel_fd_->close(ignored);
}

void LaunchSession::RecordExecutableHash() {
  if (!executable_hash_.valid()) return;
  if (StatusOr<std::string> hash = executable_hash_.get(); hash.ok()) {
    result_.executable_sha256 = *hash;
  } else {
    if (!result_.executable_warning.empty()) result_.executable_warning += "; ";
    result_.executable_warning += "not hashed: " + hash.status().message();
    result_.executable_forgeable = true;  // no identity for what ran
  }
}

StatusOr<LaunchResult> LaunchSession::Run() {
  auto start = Clock::now();
  result_.timeout = spec_.timeout;
  pollfd cancel_event{.fd = spec_.cancel_fd, .events = POLLIN, .revents = 0};
  if ((spec_.cancel && spec_.cancel->load()) ||
      (spec_.cancel_fd >= 0 && ::poll(&cancel_event, 1, 0) == 1)) {
    result_.cancelled = true;  // never started
    return std::move(result_);
  }
  if (!spec_.stdin_data.empty()) stdin_.emplace(ios_);
  if (spec_.envelope.pids_max) {
    Status made = pids_cgroup_.Make(*spec_.envelope.pids_max);
    if (!made.ok()) result_.envelope_note = made.message();  // the launch runs without it
  }
  if (Status s = Spawn(); !s.ok()) return s;
  result_.pid = pid_;
  if (spec_.on_started) spec_.on_started(pid_);
  Read(out_);
  Read(err_);
  WriteStdin();
  WatchExit();
  ArmTimeout();
  PollCancel();
  WatchCancelFd();
  ios_.run();
  if (waiter_.joinable()) waiter_.join();

  std::error_code ec;
  child_.wait(ec);  // already a zombie: returns at once
  reaped_ = true;
  registration_.MarkReaped();
  // Before the pids cgroup goes: removing it kills what is inside without a record.
  TakeOrphans();
  if (ec) return Status::Error(fmt::format("waitpid({}) for {}: {}", pid_, spec_.argv[0], ec.message()));
  int status = child_.native_exit_code();  // raw wait status; exit_code() mangles signals
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  result_.wall = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  result_.out = std::move(out_.kept);
  result_.err = std::move(err_.kept);
  result_.out_dropped = out_.dropped;
  result_.err_dropped = err_.dropped;
  // A spared process lives in the launch's cgroup: removing it would kill what was spared.
  if (!result_.leftovers_spared.empty() && pids_cgroup_.made()) result_.kept_cgroup = pids_cgroup_.Release();
  pids_cgroup_.Remove();
  RecordExecutableHash();
  return std::move(result_);
}

}  // namespace

Status BecomeChildSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return Status::Error(fmt::format("prctl(PR_SET_CHILD_SUBREAPER): {}", ErrnoText(errno)));
  }
  return Status::Ok();
}

StatusOr<LaunchResult> ProcessLauncher::Launch(const LaunchSpec& spec) {
  if (spec.argv.empty()) return Status::Error("launch: empty argv");
  ScopedSigpipeBlock sigpipe_block;
  try {
    LaunchSession session(spec);
    return session.Run();
  } catch (const std::exception& e) {
    return Status::Error(fmt::format("launch {}: {}", FormatArgv(spec.argv), e.what()));
  }
}

std::string DescribeExit(const LaunchResult& r) {
  if (r.cancelled) return "cancelled";
  std::string how = r.exit_code ? fmt::format("exit {}", *r.exit_code)
                    : r.signal  ? SignalName(*r.signal)
                                : std::string("no exit status");
  if (r.timed_out) return fmt::format("timed out after {} ms (then {})", r.timeout.count(), how);
  return how;
}

std::string FormatArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
      return isalnum(c) || (c != 0 && strchr("_@%+=:,./-", c) != nullptr);
    });
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace sandprobe
