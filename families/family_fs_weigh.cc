// Weighing reads of denied paths against the host's own facts (family_fs.h): a decoy mounted
// over a denied path is a pass that says so; the host's data, or a canary's hash anywhere in a
// launch, is a leak whatever the check's own fact said.
#include <fmt/format.h>

#include "families/family_fs.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// "12 bytes" / "3 entries"
std::string Size(const json& fact) {
  if (FactString(fact, "kind") == "dir") return fmt::format("{} entries", fact.value("entries", 0));
  return fmt::format("{} bytes", fact.value("bytes", 0));
}

bool Empty(const json& fact) {
  return FactString(fact, "kind") == "dir" ? fact.value("entries", 0) == 0 : fact.value("bytes", 0) == 0;
}

// "dev 254:0 ino 12"; "" when the fact has no identity.
std::string Identity(const json& fact) {
  if (FactString(fact, "dev").empty() || !fact.contains("ino")) return "";
  return fmt::format("dev {} ino {}", FactString(fact, "dev"), fact["ino"].dump());
}

// Whether any string in `value` (recursively, bounded by the frame depth limit) holds `needle`.
bool HoldsString(const json& value, const std::string& needle) {
  if (value.is_string()) return value.get_ref<const std::string&>().find(needle) != std::string::npos;
  if (value.is_object() || value.is_array()) {
    for (const json& item : value) {
      if (HoldsString(item, needle)) return true;
    }
  }
  return false;
}

std::string Where(const json& fact, std::size_t index, const std::string& launch) {
  return fmt::format("frame {}{} ({} {}{})", index, launch.empty() ? "" : " of launch " + launch,
                     FactString(fact, "family").empty() ? "?" : FactString(fact, "family"), FactString(fact, "path"),
                     FactString(fact, "variant").empty() ? "" : "[" + FactString(fact, "variant") + "]");
}

// A host object the harness witnessed, by path: its facts (dev, ino, kind, sha256, ...).
struct Witnessed {
  std::string path;
  const json* fact;
  std::size_t min_entries;  // a listing of fewer names identifies nothing
  bool content = true;      // matched by content too, not only by identity
};

std::vector<Witnessed> WitnessedObjects(const WitnessFacts& witnesses) {
  std::vector<Witnessed> out;
  auto paths = witnesses.observed.find("host_paths");
  if (paths != witnesses.observed.end() && paths->second.contains("paths") && paths->second["paths"].is_object()) {
    for (const auto& [path, fact] : paths->second["paths"].items()) out.push_back({path, &fact, 1});
  }
  auto mounts = witnesses.observed.find("host_mounts");
  if (mounts != witnesses.observed.end() && mounts->second.contains("critical") && mounts->second["critical"].is_object()) {
    for (const CriticalHostDir& dir : CriticalHostDirs()) {
      auto fact = mounts->second["critical"].find(dir.path);
      if (fact != mounts->second["critical"].end()) out.push_back({dir.path, &*fact, 4, dir.listing_identifies});
    }
  }
  return out;
}

// The witnessed host object `got` is, by identity or by content; "" when none. `own`, the
// check's own path's host facts, is left to the rules below.
std::string SameAsWitnessed(const json& got, const json* own, const WitnessFacts& witnesses) {
  const std::string identity = Identity(got);
  for (const Witnessed& w : WitnessedObjects(witnesses)) {
    if (w.fact == own || !w.fact->is_object() || FactString(*w.fact, "dev").empty()) continue;
    if (!identity.empty() && identity == Identity(*w.fact)) {
      return fmt::format("the host's {} itself ({}), under another name", w.path, identity);
    }
  }
  for (const Witnessed& w : WitnessedObjects(witnesses)) {
    const json& f = *w.fact;
    if (w.fact == own || !w.content || !f.is_object() || !FactOk(f) || FactString(f, "sha256").empty() || FactString(f, "kind") != FactString(got, "kind")) continue;
    const bool enough = FactString(f, "kind") == "dir" ? f.value("entries", 0) >= static_cast<int>(w.min_entries)
                                                : f.value("bytes", 0) > 0;
    if (enough && !f.value("truncated", false) && FactString(got, "sha256") == FactString(f, "sha256")) {
      return fmt::format("the same content as the host's {} ({}, sha256 {})", w.path, Size(f), FactString(f, "sha256").substr(0, 16));
    }
  }
  return "";
}

}  // namespace

ReadWeight WeighRead(const json& got, const json* host, const WitnessFacts* witnesses) {
  if (witnesses != nullptr) {
    std::string same = SameAsWitnessed(got, host, *witnesses);
    if (!same.empty()) return {true, same};
  }
  if (host == nullptr || !host->is_object()) {
    return {true, "no host witness for this path, so the read counts"};
  }
  if (!FactOk(*host)) {
    if (FactString(*host, "errno") == "ENOENT") {
      return {false, "the host has no such path (ENOENT): what was read is the sandbox's own"};
    }
    return {true, fmt::format("the host could not read its own copy ({}), so the read counts",
                              DescribeFailure(*host))};
  }
  std::string identity = Identity(got), host_identity = Identity(*host);
  if (!identity.empty() && identity == host_identity) {
    return {true, fmt::format("the host's own object ({})", identity)};
  }
  // "a file of 12 bytes"
  std::string host_desc = fmt::format("a {} of {}", FactString(*host, "kind"), Size(*host));
  if (FactString(got, "kind") != FactString(*host, "kind")) {
    return {false, fmt::format("decoy: a {} where the host has {}", FactString(got, "kind"), host_desc)};
  }
  bool truncated = got.value("truncated", false) || host->value("truncated", false);
  if (FactString(got, "sha256") == FactString(*host, "sha256")) {
    if (!Empty(*host)) return {true, fmt::format("matches the host's content (sha256 {})", FactString(*host, "sha256").substr(0, 16))};
    if (!identity.empty() && !host_identity.empty()) {
      return {false, fmt::format("decoy: as empty as the host's, but another object ({}; the "
                                 "host's: {})", identity, host_identity)};
    }
    return {true, "matches the host's, which is empty: a weak match (an empty decoy would look "
                  "the same, and nothing tells them apart)"};
  }
  if (truncated && FactString(got, "kind") == "dir") {
    return {true, fmt::format("listing cut at the name cap, so it cannot be compared with the "
                              "host's ({})", host_desc)};
  }
  return {false, fmt::format("decoy: not the host's content (read a {} of {}, sha256 {}; the "
                             "host has {}, sha256 {})",
                             FactString(got, "kind"), Size(got), FactString(got, "sha256").substr(0, 16),
                             host_desc, FactString(*host, "sha256").substr(0, 16))};
}

std::optional<std::string> CanarySha(const Check& check, const WitnessFacts& witnesses) {
  if (check.target == "{host_canary}") return witnesses.canary_sha256;
  if (check.target.rfind("{mounted_canary:", 0) != 0) return std::nullopt;
  auto it = witnesses.observed.find("mounted_canaries");
  if (it == witnesses.observed.end() || !it->second.is_array()) return std::string();
  for (const json& canary : it->second) {
    if (canary.is_object() && FactString(canary, "inside_path") == check.resolved_target) {
      return FactString(canary, "sha256");
    }
  }
  return std::string();
}

std::string FindCanaryAnywhere(const JudgeInput& in, const std::string& sha, Verdict& v) {
  if (sha.empty()) return "";
  const std::vector<json>& own = in.result.frames.facts;
  for (std::size_t i = 0; i < own.size(); ++i) {
    if (!HoldsString(own[i], sha)) continue;
    v.evidence.frame_indexes.push_back(static_cast<int>(i));
    return Where(own[i], i, "");
  }
  if (in.launches == nullptr) return "";
  for (const LaunchFacts& launch : *in.launches) {
    if (launch.result.launch_id == in.result.launch_id) continue;
    const std::vector<json>& facts = launch.result.frames.facts;
    for (std::size_t i = 0; i < facts.size(); ++i) {
      if (HoldsString(facts[i], sha)) return Where(facts[i], i, launch.batch.id);
    }
  }
  return "";
}

const json* HostPathFact(const WitnessFacts& witnesses, const std::string& path) {
  auto it = witnesses.observed.find("host_paths");
  if (it == witnesses.observed.end() || !it->second.is_object()) return nullptr;
  auto paths = it->second.find("paths");
  if (paths == it->second.end() || !paths->is_object()) return nullptr;
  auto entry = paths->find(path);
  return entry == paths->end() ? nullptr : &*entry;
}

}  // namespace sandprobe
