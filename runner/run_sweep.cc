#include "runner/run_sweep.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "runner/errno_text.h"
#include "runner/leftover_process.h"
#include "runner/proc_info.h"
#include "runner/profile.h"
#include "runner/sandbox.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kDeathWait{3000};

// Dry run: the profile's `list` command (the first launch of Sandbox::Sweep) runs for real,
// since it only reads; every later launch (a removal) is answered "exit 0" without running.
class ListOnlyLauncher final : public Launcher {
 public:
  explicit ListOnlyLauncher(Launcher& real) : real_(real) {}
  StatusOr<LaunchResult> Launch(const LaunchSpec& spec) override {
    if (launches_++ == 0) return real_.Launch(spec);
    LaunchResult pretend;
    pretend.exit_code = 0;
    return pretend;
  }

 private:
  Launcher& real_;
  int launches_ = 0;
};

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// "exit 1: Cannot connect to the Docker daemon", or the harness error.
std::string WhyFailed(const LaunchRecord& r) {
  if (!r.error.empty()) return r.error;
  std::string how = r.timed_out ? "timed out"
                    : r.exit_code ? fmt::format("exit {}", *r.exit_code)
                    : r.signal    ? fmt::format("signal {}", *r.signal)
                                  : "no exit status";
  std::string output = FirstLine(r.stderr_tail.empty() ? r.stdout_tail : r.stderr_tail);
  return output.empty() ? how : how + ": " + output;
}

bool Succeeded(const LaunchRecord& r) { return r.error.empty() && r.exit_code == 0; }

// Step 1: the profile's sweep spec for the dead run's run_id.
void SweepOneSpec(const Profile& profile, const DeadRun& run, Launcher& launcher, bool dry_run,
                  SweepSummary& out) {
  ListOnlyLauncher list_only(launcher);
  Sandbox sandbox(profile, dry_run ? static_cast<Launcher&>(list_only) : launcher,
                  SandboxContext{.run_id = run.run_id, .workspace = run.root + "/workspace"});
  sandbox.Sweep();
  const std::vector<LaunchRecord>& records = sandbox.records();
  if (records.empty()) return;
  const LaunchRecord& listed = records.front();
  if (!Succeeded(listed)) {
    out.errors.push_back(fmt::format("sweep list `{}`: {}", FormatArgv(listed.argv), WhyFailed(listed)));
    return;
  }
  // The ids in the order Sandbox::Sweep removed them (same trimming, empty lines skipped).
  std::vector<std::string> ids;
  std::istringstream lines(listed.stdout_tail);
  for (std::string id; std::getline(lines, id);) {
    id.erase(0, id.find_first_not_of(" \t\r"));
    id.erase(id.find_last_not_of(" \t\r") + 1);
    if (!id.empty()) ids.push_back(id);
  }
  for (std::size_t i = 1; i < records.size(); ++i) {
    std::string id = i - 1 < ids.size() ? ids[i - 1] : "?";
    const LaunchRecord& removal = records[i];
    if (Succeeded(removal)) {
      out.removed.push_back({SweptItem::Kind::kSandboxObject, id, FormatArgv(removal.argv)});
    } else {
      out.errors.push_back(fmt::format("could not remove {}: `{}`: {}", id,
                                       FormatArgv(removal.argv), WhyFailed(removal)));
    }
  }
}

void SweepSandboxes(const DeadRun& run, Launcher& launcher, bool dry_run, SweepSummary& out) {
  StatusOr<Profile> profile = LoadProfile(run.owner->profile_path);
  if (!profile.ok()) {
    out.errors.push_back(fmt::format("cannot sweep the sandboxes: load profile: {}",
                                     profile.status().message()));
    return;
  }
  // One spec at a time (containers, then volumes, ...): each list's ids pair with its removals.
  for (const SweepSpec& spec : profile->sweeps) {
    Profile one = *profile;
    one.sweeps = {spec};
    SweepOneSpec(one, run, launcher, dry_run, out);
  }
}

// Never these: pid 1, this process, and the chain of its parents (a shell that ran us might
// carry a token in its own command line).
std::set<int> Untouchable() {
  std::set<int> pids = {1, ::getpid()};
  for (int pid = ::getppid(); pid > 1 && pids.insert(pid).second;) {
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (!stat) break;
    pid = stat->ppid;
  }
  return pids;
}

bool CarriesToken(const std::string& cmdline, const std::vector<std::string>& tokens) {
  return std::any_of(tokens.begin(), tokens.end(), [&](const std::string& token) {
    return cmdline.find(token) != std::string::npos;
  });
}

// SIGKILL through a pidfd, re-checking the command line after the pidfd pins the process, so
// a pid recycled since the scan is never hit; then waits for the death. "" or the problem.
std::string KillCarrier(int pid, const std::vector<std::string>& tokens) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0 && errno == ESRCH) return "";  // gone already
  if (!CarriesToken(ReadProcFile(pid, "cmdline"), tokens)) {
    if (fd >= 0) ::close(fd);
    return "";  // exited (or was replaced) since the scan
  }
  int rc = fd >= 0 ? static_cast<int>(::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0))
                   : ::kill(pid, SIGKILL);  // no pidfd (Linux < 5.3): the small race remains
  int err = errno;
  if (rc != 0 && err != ESRCH) {
    if (fd >= 0) ::close(fd);
    return fmt::format("kill({}, SIGKILL): {}", pid, ErrnoText(err));
  }
  bool died = false;
  if (fd >= 0) {
    struct pollfd exited = {fd, POLLIN, 0};
    died = ::poll(&exited, 1, static_cast<int>(kDeathWait.count())) == 1;
    ::close(fd);
  } else {
    for (int i = 0; i < kDeathWait.count() / 20 && !died; ++i) {
      std::optional<ProcStat> stat = ReadProcStat(pid);
      died = !stat || stat->dead();
      if (!died) std::this_thread::sleep_for(milliseconds(20));
    }
  }
  return died ? "" : fmt::format("process {} did not die within {} ms of SIGKILL", pid, kDeathWait.count());
}

// Step 2: processes carrying one of the run's tokens.
void KillTokenCarriers(const std::vector<std::string>& tokens, bool dry_run, SweepSummary& out) {
  if (tokens.empty()) return;
  std::set<int> untouchable = Untouchable();
  for (int pid : ListPids()) {
    if (untouchable.count(pid)) continue;
    std::string cmdline = ReadProcFile(pid, "cmdline");
    if (!CarriesToken(cmdline, tokens)) continue;
    SweptItem item{SweptItem::Kind::kProcess, std::to_string(pid),
                   CmdlineForDisplay(cmdline, kLeftoverArgvCap)};
    std::string problem = dry_run ? "" : KillCarrier(pid, tokens);
    if (problem.empty()) out.removed.push_back(std::move(item));
    else out.errors.push_back(problem);
  }
}

}  // namespace

std::string_view SweptKindName(SweptItem::Kind kind) {
  switch (kind) {
    case SweptItem::Kind::kSandboxObject: return "sandbox";
    case SweptItem::Kind::kProcess: return "process";
    case SweptItem::Kind::kPlantedFile: return "planted_file";
    case SweptItem::Kind::kRunDir: return "run_dir";
  }
  return "?";
}

SweepSummary SweepDeadRun(const DeadRun& run, Launcher& launcher, bool dry_run) {
  SweepSummary out{.run = run};
  int dir = ::open(run.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    out.skipped = fmt::format("open({}): {}", run.root, ErrnoText(errno));
    return out;
  }
  struct stat st {};
  if (::flock(dir, LOCK_EX | LOCK_NB) != 0) {
    out.skipped = "another sandprobe is sweeping it";
  } else if (::fstat(dir, &st) == 0 && st.st_nlink == 0) {
    out.skipped = "already swept";  // removed by the sweep that held the lock before us
  }
  if (!out.skipped.empty()) {
    ::close(dir);
    return out;
  }
  if (run.owner) SweepSandboxes(run, launcher, dry_run, out);
  // Without owner.json the run dir's name is still a token: it is in the argv of everything
  // that names the workspace.
  std::vector<std::string> tokens = run.owner ? run.owner->process_tokens : std::vector<std::string>{};
  std::string own_name = fs::path(run.root).filename().string();
  if (IsProcessToken(own_name) && std::find(tokens.begin(), tokens.end(), own_name) == tokens.end()) {
    tokens.push_back(own_name);
  }
  KillTokenCarriers(tokens, dry_run, out);
  for (const std::string& path : run.owner ? run.owner->planted_files : std::vector<std::string>{}) {
    if (!IsPlantedCanary(path)) continue;  // gone already, or not ours to remove
    if (dry_run || ::unlink(path.c_str()) == 0) out.removed.push_back({SweptItem::Kind::kPlantedFile, path, ""});
    else out.errors.push_back(fmt::format("unlink({}): {}", path, ErrnoText(errno)));
  }
  if (out.errors.empty()) {
    std::error_code ec;
    if (!dry_run) fs::remove_all(run.root, ec);
    if (ec) out.errors.push_back(fmt::format("remove_all({}): {}", run.root, ec.message()));
    else out.removed.push_back({SweptItem::Kind::kRunDir, run.root, ""});
  }
  ::close(dir);  // releases the lock
  return out;
}

std::vector<SweepSummary> SweepDeadRuns(Launcher& launcher, const SweepOptions& options) {
  std::vector<SweepSummary> summaries;
  for (const DeadRun& run : FindDeadRuns(options.parent, options.unowned_age)) {
    if (!options.only_run_id.empty() && run.run_id != options.only_run_id) continue;
    summaries.push_back(SweepDeadRun(run, launcher, options.dry_run));
  }
  return summaries;
}

nlohmann::json SweepSummaryToJson(const SweepSummary& s) {
  nlohmann::json removed = nlohmann::json::array();
  for (const SweptItem& item : s.removed) {
    removed.push_back({{"kind", SweptKindName(item.kind)}, {"id", item.id}, {"detail", item.detail}});
  }
  return {{"run_id", s.run.run_id}, {"run_dir", s.run.root}, {"why", s.run.why},
          {"removed", std::move(removed)}, {"errors", s.errors}, {"skipped", s.skipped}};
}

std::string DescribeSweep(const SweepSummary& s, bool dry_run) {
  std::string text = fmt::format("dead run {} ({}): {}\n", s.run.run_id, s.run.root, s.run.why);
  if (!s.skipped.empty()) return text + "  skipped: " + s.skipped + "\n";
  for (const SweptItem& item : s.removed) {
    switch (item.kind) {
      case SweptItem::Kind::kSandboxObject:
        text += fmt::format("  {} sandbox {}: {}\n", dry_run ? "would remove" : "removed", item.id, item.detail);
        break;
      case SweptItem::Kind::kProcess:
        text += fmt::format("  {} process {}: {}\n", dry_run ? "would kill" : "killed", item.id, item.detail);
        break;
      case SweptItem::Kind::kPlantedFile:
        text += fmt::format("  {} planted canary {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
      case SweptItem::Kind::kRunDir:
        text += fmt::format("  {} run dir {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
    }
  }
  for (const std::string& error : s.errors) text += "  error: " + error + "\n";
  return text;
}

}  // namespace sandprobe
