// The privilege witness ("priv"): host-side facts the privilege families judge against.
//
//  - The canary host process: `sh -c 'while sleep 1; do :; done' sandprobe-canary-<token>`,
//    started through the launcher on a thread of its own and killed (with its process group)
//    when the witness is destroyed. Its token is in the run's owner record, so `sandprobe sweep`
//    finds it if the harness dies; and sh only ever has a 1 s sleep as child, so none of it
//    lingers for long after sh dies (an hour-long sleep would, orphaned and without the token).
//    A probe that finds the token's hash in some /proc/<pid>/cmdline shares the host's PID
//    namespace. The probe only gets the hash, so its own command line cannot match.
//  - The runner's own namespaces (/proc/self/ns/*), which priv.namespaces compares with the
//    sandbox's. "Host" here means the namespaces the harness runs in.
//  - The profile's backend, and its version (the profile's `version` argv, run once, beside the
//    launches), so a remediation hint can name the fix for that backend as installed (docker <
//    25.0 lets io_uring through its default seccomp profile).
//  - The harness's kernel release and cgroup version (release_agent needs CAP_SYS_ADMIN in the
//    initial user namespace since 5.17; cgroup v1 docker shares the host's cgroup namespace).
//  - Whether the harness's user namespace is the initial one (uid_map "0 0 4294967295"): with
//    host_namespaces.user it tells the probe's "appears writable in its own namespace" from
//    "writable as the host's root".
//  - The harness's own terminals (fds 0-2 that are ttys: devpts instance and pty; its
//    controlling terminal), so priv.tiocsti counts only a terminal that comes from outside.
//
// A second, light witness ("kernel") is only the harness's kernel identity (uname release and
// version, boot_id, boot time, nsfs device), for every family whose judge must know whether the
// probe ran on this kernel (families/kernel_identity.h): the privilege families, and res.cpu /
// res.pids, whose in-sandbox clock and counters belong to whichever kernel answered.
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "launch/proc_info.h"
#include "launch/run_registry.h"
#include "model/ready_future.h"
#include "witnesses/witness.h"
#include "contract/mountinfo.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

constexpr const char* kNamespaces[] = {"pid", "net", "mnt", "ipc", "uts", "cgroup", "user", "time"};
constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
constexpr std::chrono::seconds kVersionTimeout{10};

std::string DeviceNumber(dev_t dev) { return DeviceText(major(dev), minor(dev)); }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The harness's kernel, in the keys of the probe's "kernel" context (probes/priv_context.cc).
nlohmann::json HarnessKernel() {
  nlohmann::json kernel = nlohmann::json::object();
  struct utsname uts {};
  if (::uname(&uts) == 0) {
    kernel["release"] = uts.release;
    kernel["version"] = uts.version;
  }
  const std::string boot_id = ReadText("/proc/sys/kernel/random/boot_id");
  if (!boot_id.empty()) kernel["boot_id"] = boot_id.substr(0, boot_id.find('\n'));
  timespec real {}, boot {};
  if (::clock_gettime(CLOCK_REALTIME, &real) == 0 && ::clock_gettime(CLOCK_BOOTTIME, &boot) == 0) {
    kernel["boot_time_ms"] = (static_cast<long long>(real.tv_sec) - boot.tv_sec) * 1000 +
                             (static_cast<long long>(real.tv_nsec) - boot.tv_nsec) / 1000000;
  }
  struct stat ns {};
  if (::stat("/proc/self/ns/user", &ns) == 0) kernel["nsfs_dev"] = DeviceNumber(ns.st_dev);
  return kernel;
}

class KernelWitness final : public RunWitness {
 public:
  KernelWitness() : kernel_(HarnessKernel()) {}
  std::string name() const override { return "kernel"; }
  nlohmann::json Collect() override { return kernel_; }

 private:
  nlohmann::json kernel_;
};

StatusOr<std::unique_ptr<RunWitness>> StartKernelWitness(const WitnessSetup&) {
  return std::unique_ptr<RunWitness>(std::make_unique<KernelWitness>());
}

// The facts about the harness itself that the privilege judges compare the probe's with.
nlohmann::json HarnessFacts() {
  nlohmann::json facts = nlohmann::json::object();
  struct utsname uts {};
  if (::uname(&uts) == 0) facts["host_kernel"] = uts.release;
  struct statfs fs {};
  if (::statfs("/sys/fs/cgroup", &fs) == 0) facts["host_cgroup"] = fs.f_type == kCgroup2Magic ? "v2" : "v1";
  // Which kernel: a probe in another (a VM's guest) sees namespace numbers equal to ours.
  std::string boot_id = ReadText("/proc/sys/kernel/random/boot_id");
  if (!boot_id.empty()) facts["host_boot_id"] = boot_id.substr(0, boot_id.find('\n'));
  std::istringstream map(ReadText("/proc/self/uid_map"));
  long inside = -1, outside = -1, count = -1;
  map >> inside >> outside >> count;
  std::string more;
  facts["harness_userns_initial"] = inside == 0 && outside == 0 && count == 4294967295L && !(map >> more);
  nlohmann::json ttys = nlohmann::json::array();
  for (int fd : {0, 1, 2}) {
    struct stat st {};
    if (::isatty(fd) == 1 && ::fstat(fd, &st) == 0) {
      ttys.push_back({{"fd", fd}, {"dev", DeviceNumber(st.st_dev)}, {"rdev", DeviceNumber(st.st_rdev)}});
    }
  }
  facts["host_ttys"] = ttys;
  // /proc/self/stat field 7, tty_nr: 0 without a controlling terminal. The command name (field
  // 2) may hold blanks and parentheses: count from the last ')'.
  const std::string stat = ReadText("/proc/self/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') == std::string::npos ? 0 : stat.rfind(')') + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0, tty_nr = 0;
  if (rest >> state >> ppid >> pgrp >> session >> tty_nr && tty_nr != 0) {
    const unsigned long nr = static_cast<unsigned long>(tty_nr);
    facts["harness_ctty_rdev"] = std::to_string((nr >> 8) & 0xfff) + ":" + std::to_string((nr & 0xff) | ((nr >> 12) & 0xfff00));
  }
  return facts;
}

// The first line of the profile's `version` command, or the reason there is none. Started
// with the witness and read at Collect(): the answer only goes into the report and the judges,
// so the command (`docker version`: 40-60 ms, a daemon round trip) runs beside the probe
// launches instead of before the first one. Its limit is taken from the deadline at the start.
std::future<nlohmann::json> StartBackendVersion(const WitnessSetup& setup) {
  if (setup.profile.version.empty()) {
    return ReadyFuture<nlohmann::json>({{"backend_version_error", "the profile has no version command"}});
  }
  const std::string what = fmt::format("{}", fmt::join(setup.profile.version, " "));
  StatusOr<std::chrono::milliseconds> limit = HostCommandLimit(setup, kVersionTimeout);
  if (!limit.ok()) return ReadyFuture<nlohmann::json>({{"backend_version_error", what + ": " + limit.status().message()}});
  LaunchSpec spec = HostCommandSpec(setup.profile.version, *limit);
  spec.output_cap = 4096;
  return std::async(std::launch::async, [launcher = &setup.launcher, spec = std::move(spec), what]() -> nlohmann::json {
    StatusOr<LaunchResult> r = launcher->Launch(spec);
    if (!r.ok()) return {{"backend_version_error", what + ": " + r.status().message()}};
    if (r->exit_code != 0) {
      return {{"backend_version_error", fmt::format("{}: {}", what, r->exit_code ? "exit " + std::to_string(*r->exit_code)
                                                                                 : std::string("did not exit"))}};
    }
    std::string line = r->out.substr(0, r->out.find('\n'));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return {{"backend_version", line}, {"backend_version_command", what}};
  });
}

class PrivWitness final : public RunWitness {
 public:
  explicit PrivWitness(const WitnessSetup& setup)
      : backend_(NameOf(setup.profile.backend)), canary_arg_("sandprobe-canary-" + setup.run_token),
        harness_(HarnessFacts()), backend_version_(StartBackendVersion(setup)) {
    for (const char* ns : kNamespaces) {
      char link[256];
      ssize_t n = ::readlink((std::string("/proc/self/ns/") + ns).c_str(), link, sizeof link - 1);
      if (n > 0) host_ns_[ns] = std::string(link, static_cast<std::size_t>(n));
    }
    RecordProcessToken(setup.run_dir, canary_arg_);
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    LaunchSpec spec;
    spec.argv = {"sh", "-c", "while sleep 1; do :; done", canary_arg_};
    // In the run dir, beside the canary file: its /proc/<pid>/cwd is a door to that file too.
    spec.working_dir = setup.run_dir;
    spec.timeout = std::chrono::hours(1);
    spec.grace = std::chrono::milliseconds(500);
    // The witness's end wakes the launch at once (an eventfd); the atomic stays as the fallback
    // when no eventfd could be made, looked at every 50 ms.
    spec.cancel = &stop_;
    spec.cancel_fd = stop_fd_;
    spec.on_started = [this](int pid) {
      std::lock_guard lock(mu_);
      started_pid_ = pid;
      changed_.notify_all();
    };
    Launcher* launcher = &setup.launcher;
    thread_ = std::thread([this, launcher, spec] {
      StatusOr<LaunchResult> r = launcher->Launch(spec);
      std::lock_guard lock(mu_);
      if (!r.ok()) start_error_ = r.status().message();
      ended_ = true;
      changed_.notify_all();
    });
    // Wait until the canary has exec'd (the launcher says so) or its launch ended, so no probe
    // launch races its start; then see it on the host ourselves.
    int started = 0;
    {
      std::unique_lock lock(mu_);
      changed_.wait_for(lock, kCanaryStartBound, [this] { return started_pid_ != 0 || ended_; });
      started = started_pid_;
    }
    pid_ = started != 0 ? SeeCanary(started) : 0;
  }

  ~PrivWitness() override {
    stop_ = true;
    if (stop_fd_ >= 0) {
      std::uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
    }
    if (thread_.joinable()) thread_.join();
    if (stop_fd_ >= 0) ::close(stop_fd_);
  }

  std::string name() const override { return "priv"; }

  std::map<std::string, std::string> PlanValues() const override {
    std::map<std::string, std::string> values = {{"backend", backend_},
                                                 {"canary_sha256", Sha256Hex(canary_arg_)},
                                                 {"canary_pid", std::to_string(pid_)}};
    for (const auto& [ns, link] : host_ns_) values["ns." + ns] = link;
    return values;
  }

  nlohmann::json Collect() override {
    nlohmann::json canary = {{"started", pid_ != 0}, {"host_pid", pid_},
                             {"argv_sha256", Sha256Hex(canary_arg_)},
                             // Alive at the end: a miss then means the probe could not see it.
                             {"alive_at_collect", pid_ != 0 && !ended_ &&
                                                      ReadProcFile(static_cast<int>(pid_), "cmdline").find(canary_arg_) !=
                                                          std::string::npos}};
    if (!start_error_.empty()) canary["error"] = start_error_;
    nlohmann::json facts = {{"backend", backend_}, {"host_namespaces", host_ns_}, {"canary_process", canary},
                            {"harness_sid", ::getsid(0)}};
    if (backend_version_.valid()) harness_.update(backend_version_.get());
    facts.update(harness_);
    return facts;
  }

 private:
  std::string backend_;
  std::string canary_arg_;
  nlohmann::json harness_;  // HarnessFacts(), taken at the start; the backend version added at Collect()
  std::future<nlohmann::json> backend_version_;
  std::map<std::string, std::string> host_ns_;
  // The canary's pid once the harness itself sees the token in its /proc cmdline, else 0. The
  // kernel sets a new program's argument area a moment after the exec that ends Boost's spawn
  // wait, so a first miss is retried, bounded (kSeeRetries x 1 ms); it normally hits at once.
  long SeeCanary(int pid) const {
    for (int i = 0; i < kSeeRetries; ++i) {
      // A whole argv element, as FindProcessesWithArg matches (never argv[0] here).
      const std::string element = std::string(1, '\0') + canary_arg_ + '\0';
      if (ReadProcFile(pid, "cmdline").find(element) != std::string::npos) return pid;
      if (ended_) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 0;
  }

  static constexpr std::chrono::seconds kCanaryStartBound{2};  // as the old 100 x 20 ms scans
  static constexpr int kSeeRetries = 100;

  std::atomic<bool> stop_{false};
  int stop_fd_ = -1;  // eventfd: written once by the destructor, wakes the canary's launch
  std::mutex mu_;
  std::condition_variable changed_;  // started_pid_ or ended_ changed
  int started_pid_ = 0;              // from the launcher's on_started, under mu_
  std::atomic<bool> ended_{false};
  std::string start_error_;  // written by the thread before ended_, read after
  long pid_ = 0;
  std::thread thread_;
};

StatusOr<std::unique_ptr<RunWitness>> StartPrivWitness(const WitnessSetup& setup) {
  return std::unique_ptr<RunWitness>(std::make_unique<PrivWitness>(setup));
}

}  // namespace

std::vector<WitnessRow> PrivilegeWitnesses() {
  const std::set<std::string> priv = {"priv.identity", "priv.caps", "priv.seccomp", "priv.syscalls", "priv.userns",
                                      "priv.tiocsti", "priv.namespaces", "priv.host_pid", "priv.runtime_sockets",
                                      "priv.fds", "priv.cwd", "priv.kernel_knobs", "priv.cgroups", "priv.devices",
                                      "priv.masked"};
  std::set<std::string> kernel = priv;
  kernel.insert({"res.cpu", "res.pids"});
  return {{"priv", priv, StartPrivWitness}, {"kernel", kernel, StartKernelWitness}};
}

}  // namespace sandprobe
