// The persistence witness ("persist"): the token the persistence probes plant, and what the
// host sees of it between launches.
//
//  - After each launch: the host side of {workspace} is scanned for the token file (a file the
//    sandbox wrote there really is on the host), and /proc for processes carrying the token in
//    their argv — noting whether each is in the harness's own (host) pid namespace, i.e. a
//    background process that escaped the sandbox's lifetime onto the host.
//  - At the end (Collect): every process still carrying the token is killed with everything
//    below it, pinned by a pidfd first (launch/pinned_process.h) — by then every sandbox
//    instance of the run is gone, so whatever is left outlived its sandbox.
//
// If the run dies first (kill -9), `sandprobe sweep` finds what was planted from owner.json:
// the token as a process token, and the host directories a probe on the host (or a sandbox
// sharing them) would plant its token file in.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "launch/pinned_process.h"
#include "launch/proc_info.h"
#include "launch/run_registry.h"
#include "witnesses/witness.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

class PersistWitness final : public RunWitness {
 public:
  explicit PersistWitness(const WitnessSetup& setup)
      : token_("persist" + RandomHex(10)), workspace_(setup.run_dir + "/workspace"),
        backend_(NameOf(setup.profile.backend)) {
    // If this run dies before Collect(), `sandprobe sweep` finds the planted process by it,
    // and the planted files in what the persistence probes' standard locations are on the
    // host (families/family_persist.cc: /tmp, $HOME, /dev/shm, /var/tmp, the working directory,
    // which a host launch inherits from the harness). The workspace goes with the run dir.
    RecordProcessToken(setup.run_dir, token_);
    std::vector<std::string> dirs = {"/tmp", "/dev/shm", "/var/tmp"};
    if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') dirs.push_back(home);
    std::error_code ec;
    std::string cwd = std::filesystem::current_path(ec).string();
    if (!ec) dirs.push_back(cwd);
    RecordPlantedFiles(setup.run_dir, token_, dirs);
  }
  ~PersistWitness() override { KillLeftovers(); }

  std::string name() const override { return "persist"; }
  std::map<std::string, std::string> PlanValues() const override { return {{"token", token_}}; }

  void AfterLaunch(const std::string& launch_id) override {
    std::error_code ec;
    if (std::filesystem::exists(workspace_ + "/.sandprobe-persist-" + token_, ec)) {
      workspace_files_.push_back({{"after_launch", launch_id},
                                  {"path", workspace_ + "/.sandprobe-persist-" + token_}});
    }
    std::vector<HostProcess> found = FindProcessesWithArg(token_);
    if (!found.empty()) {
      // A sandbox's pid namespace is torn down asynchronously (bwrap returns as its child
      // exits, while the kernel is still killing the rest): look again a moment later and
      // record only what is still there.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      found = FindProcessesWithArg(token_);
    }
    for (const HostProcess& p : found) {
      processes_.push_back({{"after_launch", launch_id}, {"pid", p.pid}, {"argv", p.argv},
                            {"host_pid_namespace", p.host_pid_namespace}});
    }
  }

  nlohmann::json Collect() override {
    return {{"token", token_},
            {"backend", backend_},  // the profile's label: persist.host's fix names its flags
            {"workspace_files", workspace_files_},
            {"processes", processes_},
            {"killed_at_end", KillLeftovers()}};
  }

 private:
  nlohmann::json KillLeftovers() {
    nlohmann::json killed = nlohmann::json::array();
    // Ours: only the persistence probe puts this run's random token in an argv. Confirmed
    // again after the pin, so a pid recycled since the scan is never hit.
    auto carries = [this](int pid) { return CmdlineHasArg(ReadProcFile(pid, "cmdline"), token_); };
    for (const HostProcess& p : FindProcessesWithArg(token_)) {
      if (p.pid <= 1) continue;
      KillOutcome outcome = KillProcessTree(static_cast<int>(p.pid), carries, {1, ::getpid()});
      for (const LeftoverProcess& k : outcome.killed) {
        killed.push_back({{"pid", k.pid}, {"argv", k.argv}});
        // A process a launch spared (the policy let it outlive the launch) may be the
        // harness's own child, reparented to it as subreaper: reap it. ECHILD otherwise.
        while (::waitpid(k.pid, nullptr, WNOHANG) == -1 && errno == EINTR) {
        }
      }
    }
    return killed;
  }

  std::string token_;
  std::string workspace_;
  std::string backend_;
  nlohmann::json workspace_files_ = nlohmann::json::array();
  nlohmann::json processes_ = nlohmann::json::array();
};

StatusOr<std::unique_ptr<RunWitness>> StartPersistWitness(const WitnessSetup& setup) {
  return std::unique_ptr<RunWitness>(std::make_unique<PersistWitness>(setup));
}

}  // namespace

std::vector<WitnessRow> PersistenceWitnesses() {
  return {{"persist", {"persist"}, StartPersistWitness}};
}

}  // namespace sandprobe
