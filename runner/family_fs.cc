// Filesystem families: fs.read, fs.write (allowed and denied paths, both directions) and
// fs.alias (denied paths reached through a symlink, `..` or /proc/self/root).
#include <fmt/format.h>

#include "runner/family.h"

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
    check.id = fmt::format("{}.{}:{}", family, ExpectationName(expect), path.path);
    // A forbidden access is a leak; a missing allowed one breaks the workload.
    check.severity = expect == Expectation::kDenied ? Severity::kHigh : Severity::kMedium;
    check.target = path.path;
    check.resolved_target = *resolved;
    check.reference = PolicyReference(path);
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

Status ExpandFsRead(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  return ExpandAccess(in, batch, "fs.read", fs.readable, fs.unreadable);
}

Status ExpandFsWrite(const ExpandInput& in, BatchBuilder& batch) {
  const FilesystemPolicy& fs = in.policy.filesystem;
  return ExpandAccess(in, batch, "fs.write", fs.writable, fs.unwritable);
}

// The directory fs.alias creates its symlinks in: /tmp when the policy lets the sandbox write
// there, else the first writable path, else /tmp anyway (the probe reports if it cannot).
StatusOr<std::string> AliasScratchDir(const ExpandInput& in) {
  const auto& writable = in.policy.filesystem.writable;
  for (const PolicyPath& path : writable) {
    if (path.path == "/tmp") return std::string("/tmp");
  }
  if (!writable.empty()) return ResolvePolicyPath(writable.front(), in);
  return std::string("/tmp");
}

Status ExpandFsAlias(const ExpandInput& in, BatchBuilder& batch) {
  const std::vector<std::string>& variants =
      in.entry.variants.empty() ? DefaultAliasVariants() : in.entry.variants;
  StatusOr<std::string> scratch = AliasScratchDir(in);
  if (!scratch.ok()) return scratch.status();
  bool first = true;
  for (const PolicyPath& path : in.policy.filesystem.unreadable) {
    StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
    if (!resolved.ok()) return resolved.status();
    for (const std::string& variant : variants) {
      Check check;
      check.family = "fs.alias";
      check.expect = Expectation::kDenied;
      check.id = fmt::format("fs.alias.denied:{}[{}]", path.path, variant);
      check.severity = Severity::kHigh;
      check.target = path.path;
      check.resolved_target = *resolved;
      check.variant = variant;
      check.reference = PolicyReference(path);
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

std::string DescribeRead(const json& fact, const WitnessFacts& witnesses) {
  if (!FactOk(fact)) return "read failed: " + DescribeFailure(fact);
  if (fact.value("kind", "") == "dir") {
    return fmt::format("listed a directory of {} entries", fact.value("entries", 0));
  }
  std::string sha = fact.value("sha256", "");
  if (!witnesses.canary_sha256.empty() && sha == witnesses.canary_sha256) {
    return fmt::format("read {} bytes whose sha256 matches the host canary", fact.value("bytes", 0));
  }
  return fmt::format("read {} bytes (sha256 {})", fact.value("bytes", 0), sha.substr(0, 16));
}

// Whether the fact shows the target was read. For the host canary only its hash counts: another
// file at that path (a sandbox's own) is not the host's secret.
bool ShowsRead(const json& fact, Verdict& v, const WitnessFacts& witnesses) {
  if (!FactOk(fact)) return false;
  if (v.check.target != "{host_canary}") return true;
  v.evidence.witness_facts.push_back("host canary sha256 " + witnesses.canary_sha256);
  bool canary = fact.value("sha256", "") == witnesses.canary_sha256;
  if (!canary) v.observed += "; not the host canary's content";
  return canary;
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
  std::optional<int> index = FindFact(in, v, "path");
  if (!index) return v;
  const json& fact = in.facts.Fact(*index);
  v.observed = DescribeRead(fact, in.witnesses);
  bool read = ShowsRead(fact, v, in.witnesses);
  bool allowed = in.check.expect == Expectation::kAllowed;
  Judge(v, read == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  ApplyControl(v, in.controls.read, "readable");
  return v;
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
  if (fact.contains("ro_mount") && fact["ro_mount"].is_boolean()) {
    v.observed += fact["ro_mount"].get<bool>() ? " (read-only mount)" : " (mount is read-write)";
  }
  bool allowed = in.check.expect == Expectation::kAllowed;
  Judge(v, wrote == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  ApplyControl(v, in.controls.write, "writable");
  return v;
}

Verdict JudgeAlias(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = fmt::format("read through a {} alias denied", in.check.variant);
  v.remediation = fmt::format("{} is reachable through a {} alias: remove the mount that holds "
                              "it; path-based filters do not stop aliases", in.check.target,
                              in.check.variant);
  std::optional<int> index = FindFact(in, v, "alias");
  if (!index) return v;
  const json& fact = in.facts.Fact(*index);
  v.observed = fmt::format("via {}: {}", fact.value("via", "?"), DescribeRead(fact, in.witnesses));
  Judge(v, !ShowsRead(fact, v, in.witnesses), Direction::kTooPermissive);
  ApplyControl(v, in.controls.read, "readable");
  return v;
}

}  // namespace

const std::vector<std::string>& DefaultAliasVariants() {
  static const std::vector<std::string> kVariants = {"symlink", "dotdot", "proc_root"};
  return kVariants;
}

std::vector<FamilyRow> FilesystemFamilies() {
  return {{"fs.read", ExpandFsRead, JudgeRead},
          {"fs.write", ExpandFsWrite, JudgeWrite},
          {"fs.alias", ExpandFsAlias, JudgeAlias}};
}

}  // namespace sandprobe
