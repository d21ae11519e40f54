// Filesystem families: fs.read, fs.write (allowed and denied paths, both directions), fs.alias
// (denied paths reached through a symlink, `..`, /proc/self/root or another mount's root),
// fs.mounts (family_fs_mounts.cc) and fs.storage (family_fs_storage.cc). A denied read counts
// only when it shows the host's own data (family_fs_weigh.cc): a canary's hash, or a denied
// path's host content.
#include <fmt/format.h>

#include "families/family_fs.h"
#include "model/check_id.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// fs.read and fs.write share their shape: allowed list + denied list, one fact per path.
Status ExpandAccess(const ExpandInput& in, BatchBuilder& batch, const std::string& family,
                    const std::vector<PolicyPath>& allowed, const std::vector<PolicyPath>& denied) {
  auto add = [&](const PolicyPath& path, Expectation expect) -> Status {
    StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
    if (!resolved.ok()) return resolved.status();
    Check check;
    check.family = family;
    check.expect = expect;
    check.id = PlaceholderFreeId(fmt::format("{}.{}:{}", family, ExpectationName(expect), path.path));
    // A forbidden access is a leak; a missing allowed one breaks the workload.
    check.severity = expect == Expectation::kDenied ? Severity::kHigh : Severity::kMedium;
    check.target = path.path;
    check.resolved_target = *resolved;
    check.reference = path.ref;
    batch.AddArg(family, *resolved);
    return batch.AddCheck(std::move(check));
  };
  for (const PolicyPath& path : allowed) {
    if (Status s = add(path, Expectation::kAllowed); !s.ok()) return s;
  }
  for (const PolicyPath& path : denied) {
    if (Status s = add(path, Expectation::kDenied); !s.ok()) return s;
  }
  return Status::Ok();
}

// One denied read per canary the profile planted in a host directory it mounts (`canaries_in`,
// witness_mounted_canary.cc): "fs.read.denied:mounted-canary:/root".
Status ExpandMountedCanaries(const ExpandInput& in, BatchBuilder& batch) {
  const auto& values = in.context.values;
  auto count = values.find("mounted_canaries.count");
  if (count == values.end()) return Status::Ok();
  for (int i = 0; i < std::stoi(count->second); ++i) {
    const std::string& label = values.at(fmt::format("mounted_canaries.{}.label", i));
    Check check;
    check.family = "fs.read";
    check.expect = Expectation::kDenied;
    check.target = fmt::format("{{mounted_canary:{}}}", label);
    check.id = PlaceholderFreeId("fs.read.denied:" + check.target);
    check.severity = Severity::kHigh;
    check.resolved_target = values.at(fmt::format("mounted_canaries.{}.inside", i));
    check.reference = PolicyRef::InWords("the profile's canaries_in");
    batch.AddArg("fs.read", check.resolved_target);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ExpandFsRead(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  if (Status s = ExpandAccess(in, batch, "fs.read", fs.readable, fs.unreadable); !s.ok()) return s;
  return ExpandMountedCanaries(in, batch);
}

Status ExpandFsWrite(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  return ExpandAccess(in, batch, "fs.write", fs.writable, fs.unwritable);
}

Status ExpandFsAlias(const ExpandInput& in, BatchBuilder& batch) {
  const std::vector<std::string>& variants =
      in.entry.variants.empty() ? DefaultAliasVariants() : in.entry.variants;
  StatusOr<std::string> scratch = WritableScratchDir(in);  // its symlinks go there
  if (!scratch.ok()) return scratch.status();
  bool first = true;
  for (const PolicyPath& path : in.policy.filesystem.unreadable) {
    StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
    if (!resolved.ok()) return resolved.status();
    for (const std::string& variant : variants) {
      Check check;
      check.family = "fs.alias";
      check.expect = Expectation::kDenied;
      check.id = PlaceholderFreeId(fmt::format("fs.alias.denied:{}[{}]", path.path, variant));
      check.severity = Severity::kHigh;
      check.target = path.path;
      check.resolved_target = *resolved;
      check.variant = variant;
      check.reference = path.ref;
      if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
    }
    if (first) {
      // Options first, outside the per-path de-duplication.
      std::vector<std::string>& args = batch.Invocation("fs.alias").args;
      args.insert(args.begin(), {"--scratch", *scratch});
      first = false;
    }
    batch.AddArg("fs.alias", *resolved);
  }
  return Status::Ok();
}

// `canary`: the sha256 of the canary the check is about (CanarySha), if any.
std::string DescribeRead(const json& fact, const std::optional<std::string>& canary) {
  if (!FactOk(fact)) return "read failed: " + DescribeFailure(fact);
  if (fact.value("kind", "") == "dir") {
    return fmt::format("listed a directory of {} entries", fact.value("entries", 0));
  }
  std::string sha = fact.value("sha256", "");
  if (canary && !canary->empty() && sha == *canary) {
    return fmt::format("read {} bytes whose sha256 matches the host canary", fact.value("bytes", 0));
  }
  return fmt::format("read {} bytes (sha256 {})", fact.value("bytes", 0), sha.substr(0, 16));
}

// Whether one read (an fs.read / fs.alias fact or a mount_root hit) shows what the check
// denies. A canary counts only by its hash: another file at that path is not the host's secret.
// Any other denied path counts when it shows the host's own data (WeighRead).
bool ShowsRead(const json& fact, const JudgeInput& in, const std::optional<std::string>& canary,
               Verdict& v) {
  if (!FactOk(fact)) return false;
  if (in.check.expect == Expectation::kAllowed) return true;
  if (canary) {
    bool matched = !canary->empty() && fact.value("sha256", "") == *canary;
    if (!matched) v.observed += "; not the canary's content";
    return matched;
  }
  ReadWeight weight = WeighRead(fact, HostPathFact(in.witnesses, in.check.resolved_target), &in.witnesses);
  v.observed += "; " + weight.why;
  return weight.leak;
}

// The canary rule that overrides a check's own fact: its hash anywhere in the launches fails a
// canary the policy denies. Where the policy declares the canary readable, a read of it (here
// or anywhere) is what was promised, so the rule does not apply.
void ApplyCanaryAnywhere(const JudgeInput& in, const std::optional<std::string>& canary, Verdict& v) {
  if (!canary) return;
  if (canary->empty()) {
    v.outcome = Outcome::kInconclusive;
    v.observed += "; the harness has no record of this canary's hash";
    return;
  }
  v.evidence.witness_facts.push_back("canary sha256 " + *canary);
  if (v.outcome == Outcome::kFail || in.check.expect != Expectation::kDenied) return;
  std::string where = FindCanaryAnywhere(in, *canary, v);
  if (where.empty()) return;
  Judge(v, false, Direction::kTooPermissive);
  v.observed += "; but the canary's sha256 appears in " + where +
                ": only a real read of the canary can produce it";
}

std::string AccessRemediation(const Check& check, bool write) {
  if (check.expect == Expectation::kDenied) {
    return write ? fmt::format("make {} read-only inside the sandbox (read-only root or ro bind, "
                               "no write permission for the sandbox user)", check.target)
                 : fmt::format("do not mount or bind {} into the sandbox (expose only the paths "
                               "the workload needs)", check.target);
  }
  return fmt::format("{} {} for the sandbox, or drop it from the policy's filesystem.{} list",
                     write ? "mount writable" : "expose", check.target,
                     write ? "writable" : "readable");
}

// Looks up the check's fact; without one the verdict is inconclusive (returns nullopt).
std::optional<int> FindFact(const JudgeInput& in, Verdict& v, const char* what) {
  std::optional<int> index = in.facts.Find(in.check.family, in.check.resolved_target, in.check.variant);
  if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = fmt::format("the probe reported no fact for this {}", what);
    return std::nullopt;
  }
  v.evidence.frame_indexes.push_back(*index);
  return index;
}

Verdict JudgeRead(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = fmt::format("read {}", ExpectationName(in.check.expect));
  v.remediation = AccessRemediation(in.check, false);
  std::optional<std::string> canary = CanarySha(in.check, in.witnesses);
  if (std::optional<int> index = FindFact(in, v, "path")) {
    const json& fact = in.facts.Fact(*index);
    v.observed = DescribeRead(fact, canary);
    bool read = ShowsRead(fact, in, canary, v);
    bool allowed = in.check.expect == Expectation::kAllowed;
    Judge(v, read == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
    ApplyControl(v, in.controls.read, "readable");
  }
  ApplyCanaryAnywhere(in, canary, v);
  ApplyCanaryWatch(in, v);
  return v;
}

// " (statvfs: read-only; mountinfo /: ro)": what each source says about the mount, never
// "read-write" for the mount when any of them says read-only.
std::string DescribeMountFlags(const json& fact) {
  std::vector<std::string> said;
  bool any_ro = false, all_rw = true;
  if (fact.contains("ro_mount") && fact["ro_mount"].is_boolean()) {
    bool ro = fact["ro_mount"].get<bool>();
    said.push_back(ro ? "statvfs: read-only" : "statvfs: read-write");
    any_ro = any_ro || ro;
    all_rw = all_rw && !ro;
  }
  if (fact.contains("mountinfo_ro") && fact["mountinfo_ro"].is_boolean()) {
    bool ro = fact["mountinfo_ro"].get<bool>();
    said.push_back(fmt::format("mountinfo {}: {}", fact.value("mount_point", "?"),
                               ro ? "ro" : "rw"));
    any_ro = any_ro || ro;
    all_rw = all_rw && !ro;
  }
  if (said.empty()) return "";
  std::string joined = said.front();
  for (std::size_t i = 1; i < said.size(); ++i) joined += "; " + said[i];
  if (any_ro) return fmt::format(" (read-only mount: {})", joined);
  return all_rw ? fmt::format(" (mount is read-write: {})", joined) : " (" + joined + ")";
}

// A write into the workspace that failed for space (ENOSPC, EDQUOT) while the run root that
// holds the workspace on the host is full, or with EROFS while that filesystem is read-only
// (the harness's own statvfs after the launches, witnesses.run_root, run/run_dir.h): the
// harness's disk, never the sandbox's policy. "" when not. statvfs shows no quota: EDQUOT with
// space left stays the sandbox's.
std::string HarnessDiskAtFault(const JudgeInput& in, const json& fact) {
  auto root = in.witnesses.observed.find("run_root");
  if (root == in.witnesses.observed.end() || !root->second.is_object()) return "";
  const json& disk = root->second;
  auto text = [](const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  auto flag = [](const json& j, const char* key) { return j.contains(key) && j[key].is_boolean() && j[key].get<bool>(); };
  const std::string inside = text(disk, "workspace_inside"), err = text(fact, "errno");
  const std::string& path = in.check.resolved_target;
  if (inside.empty() || (path != inside && path.rfind(inside + "/", 0) != 0)) return "";
  bool full = (err == "ENOSPC" || err == "EDQUOT") && flag(disk, "full");
  bool read_only = err == "EROFS" && flag(disk, "read_only");
  if (!full && !read_only) return "";
  return fmt::format("; the harness's run root is {} ({}: {} bytes and {} inodes free): the "
                     "harness's own disk, not the sandbox's policy",
                     full ? "full" : "read-only", text(disk, "path"), disk.value("bytes_free", json()).dump(),
                     disk.value("inodes_free", json()).dump());
}

Verdict JudgeWrite(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = fmt::format("write {}", ExpectationName(in.check.expect));
  v.remediation = AccessRemediation(in.check, true);
  std::optional<int> index = FindFact(in, v, "directory");
  if (!index) return v;
  const json& fact = in.facts.Fact(*index);
  bool wrote = FactOk(fact);
  v.observed = wrote ? "created and removed a file" : "create failed: " + DescribeFailure(fact);
  v.observed += DescribeMountFlags(fact);
  bool allowed = in.check.expect == Expectation::kAllowed;
  if (std::string harness = wrote ? "" : HarnessDiskAtFault(in, fact); !harness.empty()) {
    v.outcome = Outcome::kError;
    v.observed += harness;
    v.remediation = "free space on the run root's filesystem (or make it writable), or point "
                    "SANDPROBE_RUN_ROOT at one that has room, then run again";
    return v;
  }
  Judge(v, wrote == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  ApplyControl(v, in.controls.write, "writable");
  return v;
}

// mount_root: one fact per path, its readable names under other mounts in "hits".
void JudgeMountRoot(const JudgeInput& in, const json& fact, const std::optional<std::string>& canary,
                    Verdict& v) {
  v.observed = fmt::format("tried {} names under {} mounts", fact.value("tried", 0),
                           fact.value("mounts", 0));
  std::string leaked, decoys;
  const json hits = fact.contains("hits") && fact["hits"].is_array() ? fact["hits"] : json::array();
  for (const json& hit : hits) {
    Verdict scratch;
    scratch.check = in.check;
    if (ShowsRead(hit, in, canary, scratch)) {
      if (leaked.empty()) leaked = fmt::format("{}: {}", hit.value("via", "?"), DescribeRead(hit, canary) + scratch.observed);
    } else if (decoys.empty()) {
      decoys = fmt::format("{}: {}", hit.value("via", "?"), DescribeRead(hit, canary) + scratch.observed);
    }
  }
  if (!leaked.empty()) v.observed += "; via " + leaked;
  else if (!decoys.empty()) v.observed += "; readable but not the host's data: " + decoys;
  else v.observed += "; none readable";
  if (fact.value("hits_truncated", false)) v.observed += "; more readable names than listed";
  Judge(v, leaked.empty(), Direction::kTooPermissive);
}

Verdict JudgeAlias(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = fmt::format("read through a {} alias denied", in.check.variant);
  v.remediation = fmt::format("{} is reachable through a {} alias: remove the mount that holds "
                              "it; path-based filters do not stop aliases", in.check.target,
                              in.check.variant);
  std::optional<std::string> canary = CanarySha(in.check, in.witnesses);
  if (std::optional<int> index = FindFact(in, v, "alias")) {
    const json& fact = in.facts.Fact(*index);
    if (in.check.variant == "mount_root") {
      JudgeMountRoot(in, fact, canary, v);
    } else {
      v.observed = fmt::format("via {}: {}", fact.value("via", "?"), DescribeRead(fact, canary));
      Judge(v, !ShowsRead(fact, in, canary, v), Direction::kTooPermissive);
    }
    ApplyControl(v, in.controls.read, "readable");
  }
  ApplyCanaryAnywhere(in, canary, v);
  ApplyCanaryWatch(in, v);
  return v;
}

}  // namespace

std::string FactString(const json& fact, const char* key) {
  auto it = fact.find(key);
  return it != fact.end() && it->is_string() ? it->get<std::string>() : "";
}

bool PathWithin(const std::string& inner, const std::string& outer) {
  if (outer == "/") return !inner.empty() && inner[0] == '/';
  return inner == outer ||
         (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/');
}

std::string JoinedFirst(const std::vector<std::string>& items, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > shown) out += fmt::format("; and {} more", items.size() - shown);
  return out;
}

const std::vector<std::string>& DefaultAliasVariants() {
  static const std::vector<std::string> kVariants = {"symlink", "dotdot", "proc_root", "mount_root"};
  return kVariants;
}

std::vector<FamilyRow> FilesystemFamilies() {
  return {{"fs.read", ExpandFsRead, JudgeRead},
          {"fs.write", ExpandFsWrite, JudgeWrite},
          {.name = "fs.alias", .expand = ExpandFsAlias, .judge = JudgeAlias,
           .variants = {VariantKind::kOneOf, DefaultAliasVariants()}},
          {"fs.mounts", ExpandFsMounts, JudgeFsMounts},
          {"fs.storage", ExpandFsStorage, JudgeFsStorage}};
}

}  // namespace sandprobe
