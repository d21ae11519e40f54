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
//  - The profile's backend, so a remediation hint can name the fix for that backend.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runner/proc_info.h"
#include "runner/run_registry.h"
#include "runner/witness.h"
#include "runner/witnesses.h"

namespace sandprobe {
namespace {

constexpr const char* kNamespaces[] = {"pid", "net", "mnt", "ipc", "uts", "cgroup", "user", "time"};

class PrivWitness final : public RunWitness {
 public:
  explicit PrivWitness(const WitnessSetup& setup)
      : backend_(setup.profile.backend), canary_arg_("sandprobe-canary-" + setup.run_token) {
    for (const char* ns : kNamespaces) {
      char link[256];
      ssize_t n = ::readlink((std::string("/proc/self/ns/") + ns).c_str(), link, sizeof link - 1);
      if (n > 0) host_ns_[ns] = std::string(link, static_cast<std::size_t>(n));
    }
    RecordProcessToken(setup.run_dir, canary_arg_);
    LaunchSpec spec;
    spec.argv = {"sh", "-c", "while sleep 1; do :; done", canary_arg_};
    spec.timeout = std::chrono::hours(1);
    spec.grace = std::chrono::milliseconds(500);
    spec.cancel = &stop_;
    Launcher* launcher = &setup.launcher;
    thread_ = std::thread([this, launcher, spec] {
      StatusOr<LaunchResult> r = launcher->Launch(spec);
      if (!r.ok()) start_error_ = r.status().message();
      ended_ = true;
    });
    // Wait until the canary is visible on the host, so no probe launch races its start.
    for (int i = 0; i < 100 && pid_ == 0 && !ended_; ++i) {
      std::vector<HostProcess> found = FindProcessesWithArg(canary_arg_);
      if (!found.empty()) pid_ = found.front().pid;
      if (pid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  ~PrivWitness() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::string name() const override { return "priv"; }

  std::map<std::string, std::string> PlanValues() const override {
    std::map<std::string, std::string> values = {{"backend", backend_},
                                                 {"canary_sha256", Sha256Hex(canary_arg_)}};
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
    return {{"backend", backend_}, {"host_namespaces", host_ns_}, {"canary_process", canary},
            {"harness_sid", ::getsid(0)}};
  }

 private:
  std::string backend_;
  std::string canary_arg_;
  std::map<std::string, std::string> host_ns_;
  std::atomic<bool> stop_{false};
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
  return {{"priv",
           {"priv.identity", "priv.caps", "priv.seccomp", "priv.syscalls", "priv.userns",
            "priv.tiocsti", "priv.namespaces", "priv.host_pid", "priv.runtime_sockets", "priv.fds",
            "priv.cwd", "priv.kernel_knobs", "priv.cgroups", "priv.devices", "priv.masked"},
           StartPrivWitness}};
}

}  // namespace sandprobe
