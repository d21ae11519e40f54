#include "run/run_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "model/first_line.h"
#include "model/errno_text.h"
#include "launch/launch_pids_cgroup.h"
#include "model/leftover_process.h"
#include "launch/pinned_process.h"
#include "launch/proc_info.h"
#include "io/remove_tree.h"
#include "io/write_temp.h"
#include "run/sweep_ids.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kDeathWait{3000};

constexpr milliseconds kSweepCommandTimeout{60000};

// "exit 1: Cannot connect to the Docker daemon"; "" when it exited 0.
std::string WhyFailed(const StatusOr<LaunchResult>& r) {
  if (!r.ok()) return r.status().message();
  if (!r->timed_out && r->exit_code == 0) return "";
  std::string output = FirstLineOf(r->err.empty() ? r->out : r->err);
  return output.empty() ? DescribeExit(*r) : DescribeExit(*r) + ": " + output;
}

StatusOr<LaunchResult> RunSweepCommand(Launcher& launcher, const std::vector<std::string>& argv) {
  LaunchSpec spec;
  spec.argv = argv;
  spec.timeout = kSweepCommandTimeout;
  return launcher.Launch(spec);
}

// Step 1: the sweep commands the run recorded when it started: each list, then its remove for
// every whole id listed (run/sweep_ids.h). Dry run: the lists only (they only read).
void SweepRecorded(const DeadRun& run, Launcher& launcher, DeadRunSweep how, SweepSummary& out) {
  bool dry_run = how.dry_run;
  if (!run.owner->sweeps) {
    std::string what = fmt::format(
        "owner.json records no sweep commands (written by an older sandprobe): its sandboxes were "
        "not swept. The profile it names ({}) is not read: whoever can write that file could make "
        "this sweep run anything", run.owner->profile_path);
    if (how.forget_unrecorded) {
      out.notes.push_back(fmt::format("{}. Forgotten as asked: anything still labelled "
                                      "sandprobe.run={} is yours to remove", what, run.run_id));
    } else {
      out.errors.push_back(fmt::format(
          "{}. Remove what carries the run's label (sandprobe.run={}) by hand, then `sandprobe sweep "
          "--run-id {} --forget-unrecorded` sweeps the rest and forgets the run", what, run.run_id, run.run_id));
    }
    return;
  }
  for (const RecordedSweep& sweep : *run.owner->sweeps) {
    StatusOr<LaunchResult> listed = RunSweepCommand(launcher, sweep.list);
    if (std::string why = WhyFailed(listed); !why.empty()) {
      out.errors.push_back(fmt::format("sweep list `{}`: {}", FormatArgv(sweep.list), why));
      continue;
    }
    SweepIds ids = ParseSweepIds(listed->out, listed->out_dropped);
    for (const std::string& id : ids.ids) {
      std::vector<std::string> remove = sweep.RemoveArgv(id);
      StatusOr<LaunchResult> removed = dry_run ? StatusOr<LaunchResult>(LaunchResult{.exit_code = 0})
                                               : RunSweepCommand(launcher, remove);
      if (std::string why = WhyFailed(removed); why.empty()) {
        out.removed.push_back({SweptItem::Kind::kSandboxObject, id, FormatArgv(remove)});
      } else {
        out.errors.push_back(fmt::format("could not remove {}: `{}`: {}", id, FormatArgv(remove), why));
      }
    }
    // The run dir stays, so the next sweep lists again (and finds what this one could not).
    for (const std::string& problem : ids.problems) {
      out.errors.push_back(fmt::format("sweep list `{}`: incomplete: {}", FormatArgv(sweep.list), problem));
    }
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

// Step 2: processes carrying one of the run's tokens, each with everything below it (a
// shell's children need not carry the token). Pinned and confirmed before any signal
// (launch/pinned_process.h).
void KillTokenCarriers(const std::vector<std::string>& tokens, bool dry_run, SweepSummary& out) {
  if (tokens.empty()) return;
  std::set<int> untouchable = Untouchable();
  std::set<int> listed;
  auto item = [&](const LeftoverProcess& p) {
    if (listed.insert(p.pid).second) {
      out.removed.push_back({SweptItem::Kind::kProcess, std::to_string(p.pid), p.argv});
    }
  };
  auto carries = [&](int pid) { return CarriesToken(ReadProcFile(pid, "cmdline"), tokens); };
  for (int pid : ListPids()) {
    if (untouchable.count(pid) || listed.count(pid) || !carries(pid)) continue;
    if (dry_run) {
      item({pid, CmdlineForDisplay(ReadProcFile(pid, "cmdline"), kLeftoverArgvCap)});
      for (int below : ListDescendants(pid).value_or(std::vector<int>{})) {
        if (!untouchable.count(below)) item({below, CmdlineForDisplay(ReadProcFile(below, "cmdline"), kLeftoverArgvCap)});
      }
      continue;
    }
    KillOutcome killed = KillProcessTree(pid, carries, untouchable, kDeathWait);
    for (const LeftoverProcess& p : killed.killed) item(p);
    out.errors.insert(out.errors.end(), killed.errors.begin(), killed.errors.end());
  }
}

// Step 3: the pids cgroups the dead harness's envelope made, with whatever is still inside
// (a process that left its launch's process group, and is not a token carrier).
void RemoveLaunchCgroups(const OwnerRecord& owner, bool dry_run, SweepSummary& out) {
  if (owner.pids_cgroups.empty()) return;
  LeftCgroups left = RemoveLeftLaunchCgroups(owner.pids_cgroups, owner.pid, owner.start_ticks, dry_run);
  for (const std::string& dir : left.removed) out.removed.push_back({SweptItem::Kind::kCgroup, dir, ""});
  out.errors.insert(out.errors.end(), left.errors.begin(), left.errors.end());
}

// Step 4: files the run's probes planted on the host (names holding the recorded token):
// regular files only, found and removed relative to their directory opened without following
// a symlink, and unlinkat never follows one either.
void RemovePlantedFiles(const std::vector<PlantedFiles>& planted, bool dry_run, SweepSummary& out) {
  for (const PlantedFiles& p : planted) {
    for (const std::string& dir : p.dirs) {
      int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) continue;  // gone, or a symlink: nothing of ours to remove there
      DIR* d = ::fdopendir(fd);
      if (d == nullptr) {
        ::close(fd);
        continue;
      }
      std::vector<std::string> names;
      while (const dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name.find(p.token) != std::string::npos) names.push_back(name);
      }
      std::sort(names.begin(), names.end());
      for (const std::string& name : names) {
        std::string path = (dir == "/" ? "" : dir) + "/" + name;
        struct stat st {};
        if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (dry_run || ::unlinkat(fd, name.c_str(), 0) == 0 || errno == ENOENT) {
          out.removed.push_back({SweptItem::Kind::kFile, path, ""});
        } else {
          out.errors.push_back(fmt::format("unlink({}): {}", path, ErrnoText(errno)));
        }
      }
      ::closedir(d);  // closes fd
    }
  }
}

}  // namespace

std::string_view SweptKindName(SweptItem::Kind kind) {
  switch (kind) {
    case SweptItem::Kind::kSandboxObject: return "sandbox";
    case SweptItem::Kind::kProcess: return "process";
    case SweptItem::Kind::kCgroup: return "cgroup";
    case SweptItem::Kind::kFile: return "file";
    case SweptItem::Kind::kPlantedCanary: return "planted_canary";
    case SweptItem::Kind::kRunDir: return "run_dir";
    case SweptItem::Kind::kPartialReport: return "partial_report";
  }
  return "?";
}

SweepSummary SweepDeadRun(const DeadRun& run, Launcher& launcher, DeadRunSweep how) {
  bool dry_run = how.dry_run;
  SweepSummary out{.run = run};
  if (run.foreign_uid) {
    out.skipped = fmt::format(
        "owned by uid {}: not swept by uid {} (it would run, kill and remove what another user "
        "recorded); that user's `sandprobe sweep` removes it", *run.foreign_uid, ::geteuid());
    return out;
  }
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
  if (run.owner) SweepRecorded(run, launcher, how, out);
  // Without owner.json the run dir's name is still a token: it is in the argv of everything
  // that names the workspace.
  std::vector<std::string> tokens = run.owner ? run.owner->process_tokens : std::vector<std::string>{};
  std::string own_name = fs::path(run.root).filename().string();
  if (IsProcessToken(own_name) && std::find(tokens.begin(), tokens.end(), own_name) == tokens.end()) {
    tokens.push_back(own_name);
  }
  KillTokenCarriers(tokens, dry_run, out);
  for (const std::string& path : run.owner ? run.owner->planted_canaries : std::vector<std::string>{}) {
    if (!IsPlantedCanary(path)) continue;  // gone already, or not ours to remove
    if (dry_run || ::unlink(path.c_str()) == 0) out.removed.push_back({SweptItem::Kind::kPlantedCanary, path, ""});
    else out.errors.push_back(fmt::format("unlink({}): {}", path, ErrnoText(errno)));
  }
  if (run.owner) {
    RemoveLaunchCgroups(*run.owner, dry_run, out);
    RemovePlantedFiles(run.owner->planted_files, dry_run, out);
  }
  if (out.errors.empty()) {
    // Never through a link the sandbox's uid made in its workspace (io/remove_tree.h).
    Status removed = dry_run ? Status::Ok() : RemoveTree(run.root);
    if (!removed.ok()) out.errors.push_back(removed.message());
    else out.removed.push_back({SweptItem::Kind::kRunDir, run.root, ""});
  }
  ::close(dir);  // releases the lock
  return out;
}

std::vector<SweepSummary> SweepDeadRuns(Launcher& launcher, const SweepOptions& options) {
  std::vector<SweepSummary> summaries;
  for (const DeadRun& run : FindDeadRuns(options.parent, options.unowned_age, options.include_foreign)) {
    if (!options.only_run_id.empty() && run.run_id != options.only_run_id) continue;
    DeadRunSweep how{.dry_run = options.dry_run,
                     .forget_unrecorded = options.forget_unrecorded && !options.only_run_id.empty()};
    summaries.push_back(SweepDeadRun(run, launcher, how));
  }
  if (!options.only_run_id.empty()) return summaries;
  for (const DeadWrite& write : SweepDeadWrites(options.parent, options.dry_run)) {
    SweepSummary summary{.run = {.root = write.temp, .why = write.why}, .partial_report = true};
    if (write.error.empty()) summary.removed.push_back({SweptItem::Kind::kPartialReport, write.temp, ""});
    else summary.errors.push_back(write.error);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

nlohmann::json SweepSummaryToJson(const SweepSummary& s) {
  nlohmann::json removed = nlohmann::json::array();
  for (const SweptItem& item : s.removed) {
    removed.push_back({{"kind", SweptKindName(item.kind)}, {"id", item.id}, {"detail", item.detail}});
  }
  if (s.partial_report) {
    return {{"partial_report", s.run.root}, {"why", s.run.why}, {"removed", std::move(removed)}, {"errors", s.errors}};
  }
  nlohmann::json run = {{"run_id", s.run.run_id}, {"run_dir", s.run.root}, {"why", s.run.why},
                        {"removed", std::move(removed)}, {"errors", s.errors}, {"notes", s.notes},
                        {"skipped", s.skipped}};
  if (s.run.foreign_uid) run["owner_uid"] = *s.run.foreign_uid;
  return run;
}

std::string DescribeSweep(const SweepSummary& s, bool dry_run) {
  std::string text = s.partial_report ? fmt::format("partial report {}: {}\n", s.run.root, s.run.why)
                                      : fmt::format("dead run {} ({}): {}\n", s.run.run_id, s.run.root, s.run.why);
  if (!s.skipped.empty()) return text + "  skipped: " + s.skipped + "\n";
  for (const SweptItem& item : s.removed) {
    switch (item.kind) {
      case SweptItem::Kind::kSandboxObject:
        text += fmt::format("  {} sandbox {}: {}\n", dry_run ? "would remove" : "removed", item.id, item.detail);
        break;
      case SweptItem::Kind::kProcess:
        text += fmt::format("  {} process {}: {}\n", dry_run ? "would kill" : "killed", item.id, item.detail);
        break;
      case SweptItem::Kind::kPlantedCanary:
        text += fmt::format("  {} planted canary {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
      case SweptItem::Kind::kCgroup:
        text += fmt::format("  {} pids cgroup {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
      case SweptItem::Kind::kFile:
        text += fmt::format("  {} planted file {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
      case SweptItem::Kind::kRunDir:
        text += fmt::format("  {} run dir {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
      case SweptItem::Kind::kPartialReport:
        text += fmt::format("  {} partial report {}\n", dry_run ? "would remove" : "removed", item.id);
        break;
    }
  }
  for (const std::string& note : s.notes) text += "  note: " + note + "\n";
  for (const std::string& error : s.errors) text += "  error: " + error + "\n";
  return text;
}

}  // namespace sandprobe
