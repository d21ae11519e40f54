#include "runner/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
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
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <fmt/format.h>

#include "runner/launch_leftovers.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace sandprobe {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : fmt::format("errno {}", err);
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

int SweepProcSelfFd() noexcept {
  int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return errno;
  alignas(8) char buf[4096];
  for (;;) {
    long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      ::close(dir);
      return err;
    }
    for (long off = 0; off < n;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[].
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (name[0] < '0' || name[0] > '9') continue;  // "." and ".."
      int fd = 0;
      for (const char* p = name; *p >= '0' && *p <= '9'; ++p) fd = fd * 10 + (*p - '0');
      if (fd >= 3 && fd != dir) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
}

void SweepEveryNumber() noexcept {
  struct rlimit lim {};
  // Capped: with an unlimited or huge RLIMIT_NOFILE this would take seconds.
  rlim_t top = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    top = std::min<rlim_t>(lim.rlim_cur, 1 << 20);
  for (rlim_t fd = 3; fd < top; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

// Which step of the child's setup failed, written by the child into a MAP_SHARED page so the
// parent can name it (Boost.Process only carries the errno back).
enum class ChildStep : int { kNone, kPdeathsig, kSetpgid, kSigmask, kFdSweep, kChdir, kRlimit, kCgroup };
struct ChildFailure {
  ChildStep step;
  int err;
};

// Runs in the forked child before execve. Failing here reports through Boost's exec-error pipe
// and exits, so the parent never mistakes a half-set-up child for a started one.
struct ChildSetup : bp::extend::handler {
  ChildFailure* failure;     // MAP_SHARED
  const char* working_dir;   // nullptr: inherit
  pid_t* failed_pid;         // parent side: a child that failed before or at exec, to reap
  const LaunchEnvelope* envelope;
  const char* cgroup_procs;  // nullptr: no pids cgroup to join
  pid_t launcher_pid;        // getpid() of the harness, taken before fork

  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    auto fail = [&](ChildStep step, int err) {
      failure->step = step;
      failure->err = err;
      exec.set_error(std::error_code(err, std::system_category()), "child setup");
      ::_exit(127);
    };
    // Dies with the harness: a `kill -9` of sandprobe must not leave a docker client or a
    // canary process running. If the harness died between fork and here, the signal will
    // never come (the parent already changed), so leave now; nobody reads the error pipe.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(ChildStep::kPdeathsig, errno);
    if (::getppid() != launcher_pid) ::_exit(127);
    // Own group, so the whole tree can be signalled with killpg(pid).
    if (::setpgid(0, 0) != 0) fail(ChildStep::kSetpgid, errno);
    // Launch() blocks SIGPIPE in its thread; the child must start clean.
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail(ChildStep::kSigmask, errno);
    ::signal(SIGPIPE, SIG_DFL);
    if (int err = MarkInheritedFdsCloexec(FdSweep::kCloseRange)) fail(ChildStep::kFdSweep, err);
    if (working_dir && ::chdir(working_dir) != 0) fail(ChildStep::kChdir, errno);
    auto limit = [&](int resource, const std::optional<std::uint64_t>& value) {
      if (!value) return;
      struct rlimit lim = {static_cast<rlim_t>(*value), static_cast<rlim_t>(*value)};
      struct rlimit old {};
      // Never raise a hard limit (that needs CAP_SYS_RESOURCE): only lower.
      if (::getrlimit(resource, &old) == 0 && old.rlim_max != RLIM_INFINITY &&
          old.rlim_max < lim.rlim_max) {
        lim.rlim_max = old.rlim_max;
        lim.rlim_cur = std::min(lim.rlim_cur, old.rlim_max);
      }
      if (::setrlimit(resource, &lim) != 0) fail(ChildStep::kRlimit, errno);
    };
    limit(RLIMIT_AS, envelope->address_space_bytes);
    limit(RLIMIT_NOFILE, envelope->open_files);
    limit(RLIMIT_FSIZE, envelope->file_size_bytes);
    limit(RLIMIT_CPU, envelope->cpu_seconds);
    if (cgroup_procs) {
      int fd = ::open(cgroup_procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0) fail(ChildStep::kCgroup, errno);
      // cgroup v1: "0" moves the writing process.
      if (::write(fd, "0", 1) != 1) fail(ChildStep::kCgroup, errno);
      ::close(fd);
    }
  }

  template <class Executor>
  void on_error(Executor& exec, const std::error_code&) const {
    if (exec.pid > 0) *failed_pid = exec.pid;
  }
};

// Writing stdin to a child that stopped reading raises SIGPIPE in the writing thread, which
// would kill the whole harness. Blocked, the write fails with EPIPE instead; the pending
// thread-directed SIGPIPE is consumed before the old mask comes back.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (sigismember(&old_, SIGPIPE)) return;
    struct timespec zero {};
    while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
};

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
  void MakePidsCgroup();
  void RemovePidsCgroup();
  void Read(Capture& c);
  void WriteStdin();
  void WatchExit();
  void ArmTimeout();
  void PollCancel();
  void BeginKill();
  void SignalTree(int sig);
  void OnExit();
  void MaybeFinish();
  void TakeOrphans();

  const LaunchSpec& spec_;
  LaunchRegistration registration_;  // outlives the child: unregistered after the destructor body
  asio::io_context ios_;
  Capture out_{ios_}, err_{ios_};
  std::optional<bp::async_pipe> stdin_;
  std::optional<asio::posix::stream_descriptor> pidfd_;
  std::thread waiter_;  // only when pidfd_open is unavailable
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> waiter_work_;
  asio::steady_timer timeout_timer_{ios_}, grace_timer_{ios_}, cancel_timer_{ios_},
      drain_timer_{ios_};
  bp::child child_;
  std::string cgroup_, cgroup_procs_;  // the launch's pids cgroup, when one was made
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
  RemovePidsCgroup();
}

bool WriteSmallFile(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

constexpr const char* kPidsRoot = "/sys/fs/cgroup/pids/sandprobe";

void LaunchSession::MakePidsCgroup() {
  if (!spec_.envelope.pids_max) return;
  static std::atomic<int> counter{0};
  std::string dir = fmt::format("{}/{}-{}", kPidsRoot, ::getpid(), ++counter);
  if ((::mkdir(kPidsRoot, 0755) != 0 && errno != EEXIST) || ::mkdir(dir.c_str(), 0755) != 0) {
    result_.envelope_note = fmt::format("pids cgroup unavailable: mkdir({}): {}", dir, ErrnoName(errno));
    return;
  }
  cgroup_ = dir;
  cgroup_procs_ = dir + "/cgroup.procs";
  if (!WriteSmallFile(dir + "/pids.max", std::to_string(*spec_.envelope.pids_max))) {
    result_.envelope_note = fmt::format("pids cgroup unavailable: write {}/pids.max: {}", dir, ErrnoName(errno));
    RemovePidsCgroup();
  }
}

// Every process still in the launch's cgroup is killed (one that left the process group with
// setsid included), then the cgroup is removed.
void LaunchSession::RemovePidsCgroup() {
  if (cgroup_.empty()) return;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(cgroup_.c_str()) == 0 || errno == ENOENT) break;
    if (FILE* procs = ::fopen(cgroup_procs_.c_str(), "re")) {
      int pid = 0;
      while (::fscanf(procs, "%d", &pid) == 1) ::kill(pid, SIGKILL);
      ::fclose(procs);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  cgroup_.clear();
}

Status LaunchSession::Spawn() {
  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : spec_.extra_env) env[name] = value;
  env[kLaunchMarkerEnv] = registration_.marker();
  std::string exe = spec_.argv[0];
  if (exe.find('/') == std::string::npos) {
    std::vector<boost::filesystem::path> dirs;
    auto path = env.find("PATH");
    if (path != env.end())
      for (const std::string& dir : path->to_vector())
        if (!dir.empty()) dirs.emplace_back(dir);
    exe = bp::search_path(exe, dirs).string();
    if (exe.empty()) return Status::Error(fmt::format("execve({}): ENOENT (not in PATH)", spec_.argv[0]));
  }
  std::vector<std::string> args(spec_.argv.begin() + 1, spec_.argv.end());

  void* page = ::mmap(nullptr, sizeof(ChildFailure), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Status::Error(fmt::format("mmap: {}", ErrnoName(errno)));
  auto* failure = new (page) ChildFailure{ChildStep::kNone, 0};
  pid_t failed_pid = 0;
  ChildSetup setup;
  setup.failure = failure;
  setup.working_dir = spec_.working_dir.empty() ? nullptr : spec_.working_dir.c_str();
  setup.failed_pid = &failed_pid;
  setup.envelope = &spec_.envelope;
  setup.cgroup_procs = cgroup_.empty() ? nullptr : cgroup_procs_.c_str();
  setup.launcher_pid = ::getpid();
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
  switch (seen.step) {
    case ChildStep::kNone:
      return Status::Error(fmt::format("execve({}): {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kPdeathsig:
      return Status::Error(fmt::format("prctl(PR_SET_PDEATHSIG) for {}: {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kSetpgid:
      return Status::Error(fmt::format("setpgid(0, 0) for {}: {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kSigmask:
      return Status::Error(fmt::format("sigprocmask for {}: {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kFdSweep:
      return Status::Error(fmt::format("close fds >= 3 for {}: {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kRlimit:
      return Status::Error(fmt::format("setrlimit for {}: {}", spec_.argv[0], ErrnoName(err)));
    case ChildStep::kCgroup:
      return Status::Error(fmt::format("join {} for {}: {}", cgroup_procs_, spec_.argv[0],
                                       ErrnoName(err)));
    case ChildStep::kChdir:
      return Status::Error(fmt::format("chdir({}) for {}: {}", spec_.working_dir, spec_.argv[0],
                                       ErrnoName(err)));
  }
  return Status::Error("unreachable ChildStep");
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
  for (LeftoverProcess& orphan : registration_.KillOrphans()) {
    result_.leftovers_killed.push_back(std::move(orphan));
  }
}

void LaunchSession::MaybeFinish() {
  if (!exited_ || !out_.done || !err_.done) return;
  drain_timer_.cancel();
  boost::system::error_code ignored;
  if (stdin_) stdin_->close(ignored);
  if (pidfd_) pidfd_->close(ignored);
}

StatusOr<LaunchResult> LaunchSession::Run() {
  auto start = Clock::now();
  result_.timeout = spec_.timeout;
  if (spec_.cancel && spec_.cancel->load()) {
    result_.cancelled = true;  // never started
    return std::move(result_);
  }
  if (!spec_.stdin_data.empty()) stdin_.emplace(ios_);
  MakePidsCgroup();
  if (Status s = Spawn(); !s.ok()) return s;
  result_.pid = pid_;
  Read(out_);
  Read(err_);
  WriteStdin();
  WatchExit();
  ArmTimeout();
  PollCancel();
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
  RemovePidsCgroup();
  return std::move(result_);
}

}  // namespace

int MarkInheritedFdsCloexec(FdSweep how) noexcept {
  switch (how) {
    case FdSweep::kCloseRange:
      if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
      [[fallthrough]];
    case FdSweep::kProcSelfFd:
      if (SweepProcSelfFd() == 0) return 0;
      [[fallthrough]];
    case FdSweep::kEveryNumber:
      SweepEveryNumber();
      return 0;
  }
  return EINVAL;
}

Status BecomeChildSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return Status::Error(fmt::format("prctl(PR_SET_CHILD_SUBREAPER): {}", ErrnoName(errno)));
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
