// fs.storage: can the sandbox write to storage that outlives it anywhere outside the policy's
// filesystem.writable list? fs.write tries the paths the policy names (/, /etc, /usr); a root
// filesystem left writable is writable where those are not: an image's 1777 /var/tmp, the
// user's own home. The probe (probes/fs_storage.cc) tries a real write in every mount it may
// write to without touching a kernel interface, walking each mount's directories until one
// write goes through; this judge decides what a write that went through wrote to, by the
// mount's identity, never its path:
//   - a host directory: the mount's device, type and root are one of the host's own mounts
//     (the host_mounts witness, by device numbers shown to be the host kernel's) -> counts, high;
//   - the sandbox's private memory: a fresh mount (not the host's) of a filesystem whose content
//     lives in memory only (MemoryOnlyFilesystems: tmpfs, ramfs, rootfs; bwrap's /dev, docker's
//     /dev/shm, a VM's initramfs root) -> dies with the sandbox, not counted, named in `observed`;
//   - anything else: the sandbox's own storage (a runtime's root layer, its upper directory on
//     the host's disk; a disk; a gofer or network filesystem) -> counts, medium.
// A write under a declared-writable directory is never counted (the probe does not try them):
// filesystem.writable, and persistence.survives / survives_turns (content promised to survive
// is written there by design).
#include <algorithm>

#include <fmt/format.h>

#include "families/family_fs.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kCheckId = "fs.storage.undeclared-writable";

// Filesystem types that keep their content in memory only: a mount of one the sandbox made
// itself is gone when the sandbox is. "rootfs" is the kernel's initial root, always a ramfs or
// tmpfs instance (a VM booted on its initramfs, like microvm's guest).
const std::vector<std::string>& MemoryOnlyFilesystems() {
  static const std::vector<std::string> kTypes = {"tmpfs", "ramfs", "rootfs"};
  return kTypes;
}

enum class WriteLanded { kHostDirectory, kOwnStorage, kPrivateMemory };

struct Landing {
  WriteLanded where;
  std::string text;  // for `observed`
};

Landing Classify(const JudgeInput& in, const json& summary, const json& fact) {
  const SandboxMountId id{FactString(fact, "dev"), FactString(fact, "fstype"), FactString(fact, "root")};
  const std::string at = fmt::format("{} (mount {}, {} dev {})", FactString(fact, "at"), FactString(fact, "path"), id.fstype, id.dev);
  const std::string host_dir = HostDirectoryOfMount(in.witnesses, summary, id);
  if (!host_dir.empty()) {
    return {WriteLanded::kHostDirectory, fmt::format("{}: the host's directory {}", at, host_dir)};
  }
  const auto& memory = MemoryOnlyFilesystems();
  if (std::find(memory.begin(), memory.end(), id.fstype) != memory.end()) {
    return {WriteLanded::kPrivateMemory, at + ": the sandbox's own memory filesystem"};
  }
  return {WriteLanded::kOwnStorage, at + ": the sandbox's own storage, not a memory filesystem"};
}

}  // namespace

Status ExpandFsStorage(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("fs.storage");  // runs even when nothing is declared writable
  Check check;
  check.family = "fs.storage";
  check.expect = Expectation::kDenied;
  check.id = kCheckId;
  check.severity = Severity::kMedium;
  check.target = "storage outside the policy's writable list";
  check.variant = "undeclared-writable";
  check.reference = in.policy.Ref("/filesystem/writable");
  // Declared writable: the writable list, and where the policy promises written content
  // survives (a turn or a session): the workload writes there by design.
  const PersistencePolicy& persist = in.policy.persistence;
  std::vector<std::string> args;
  for (const auto* list : {&in.policy.filesystem.writable, &persist.survives, &persist.survives_turns}) {
    for (const PolicyPath& path : *list) {
      StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
      if (!resolved.ok()) return resolved.status();
      if (std::find(args.begin(), args.end(), *resolved) != args.end()) continue;
      args.push_back(*resolved);
      check.resolved_target += (check.resolved_target.empty() ? "" : "\n") + *resolved;
      batch.AddArg("fs.storage", *resolved);
    }
  }
  return batch.AddCheck(std::move(check));
}

Verdict JudgeFsStorage(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "no write outside the policy's writable list reaches storage that outlives the sandbox";
  v.remediation = "make the sandbox's root read-only (docker --read-only, bwrap --remount-ro /) and mount "
                  "read-only every host directory the workload only reads; declare the directories it must "
                  "write in filesystem.writable";
  std::optional<int> summary = in.facts.Find("fs.storage", "", "summary");
  if (!summary || !FactOk(in.facts.Fact(*summary))) {
    v.outcome = Outcome::kInconclusive;
    v.observed = !summary ? "the probe reported no mount table"
                          : "the probe could not read /proc/self/mountinfo: " + FactString(in.facts.Fact(*summary), "errno");
    return v;
  }
  v.evidence.frame_indexes.push_back(*summary);
  const json& sum = in.facts.Fact(*summary);
  const std::vector<std::string> declared = NonEmptyLines(in.check.resolved_target);
  std::vector<std::string> counted, memory, walk_cut;
  bool host = false;
  int mounts_tried = 0;
  for (int index : in.facts.OfFamily("fs.storage")) {
    const json& fact = in.facts.Fact(index);
    if (FactString(fact, "variant") == "summary" || fact.contains("skipped")) continue;
    ++mounts_tried;
    if (fact.value("walk_truncated", false)) walk_cut.push_back(FactString(fact, "path"));
    if (!fact.value("ok", false)) continue;
    const std::string at = FactString(fact, "at");
    bool under_declared = false;
    for (const std::string& d : declared) under_declared = under_declared || PathWithin(at, d);
    if (under_declared) continue;
    const Landing landing = Classify(in, sum, fact);
    switch (landing.where) {
      case WriteLanded::kPrivateMemory:
        memory.push_back(landing.text);
        continue;
      case WriteLanded::kHostDirectory:
        host = true;
        break;
      case WriteLanded::kOwnStorage:
        break;
    }
    v.evidence.frame_indexes.push_back(index);
    counted.push_back(landing.text);
  }
  v.observed = counted.empty()
                   ? fmt::format("tried {} directories in {} mounts; no write reached storage outside the writable list",
                                 sum.value("tried", 0), mounts_tried)
                   : "created and removed a file in " + JoinedFirst(counted, 4);
  if (!memory.empty()) v.observed += "; not counted (gone with the sandbox): " + JoinedFirst(memory, 4);
  Judge(v, counted.empty(), Direction::kTooPermissive);
  if (host && v.outcome == Outcome::kFail) v.check.severity = Severity::kHigh;
  if ((sum.value("truncated", false) || !walk_cut.empty()) && v.outcome == Outcome::kPass) {
    v.outcome = Outcome::kInconclusive;  // the rest of the table or of a walk is unseen
    v.observed += walk_cut.empty() ? "; the mount table or the walk was cut at its ceiling"
                                   : "; the walk was cut at its ceiling in " + JoinedFirst(walk_cut, 4);
  }
  return v;
}

}  // namespace sandprobe
