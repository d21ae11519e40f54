#include "families/list_counts.h"

#include <fmt/format.h>

namespace sandprobe {
namespace {

using nlohmann::json;

bool IsSummary(const json& fact) {
  return fact.value("summary", false) == true || fact.value("variant", std::string()) == "summary";
}

// One count a family's summary keeps, and which of its non-summary facts it counts.
struct ListCount {
  const char* family;
  const char* key;   // the summary's field
  const char* what;  // for `observed`
  bool (*counts)(const json& item);
};

bool Any(const json&) { return true; }
bool NotReleaseAgent(const json& f) { return f.value("variant", std::string()) != "release_agent"; }
bool DirFd(const json& f) { return f.value("kind", std::string()) == "dir"; }
bool FoundNetUnix(const json& f) { return f.value("variant", std::string()) == "found"; }
bool FoundRuntimeSocket(const json& f) { return f.value("source", std::string("list")) != "list"; }

// What each probe family emits (probes/fs_mounts.cc, fs_storage.cc, net_unix.cc, priv_host.cc,
// priv_kernel.cc; docs/facts.schema.json).
constexpr ListCount kListCounts[] = {
    {"fs.mounts", "mounts", "mount lines", Any},
    {"fs.storage", "mounts", "mount lines", Any},
    {"net.unix", "found", "sockets found beyond the listed paths", FoundNetUnix},
    {"priv.runtime_sockets", "paths", "socket paths", Any},
    {"priv.runtime_sockets", "found", "sockets found beyond the listed paths", FoundRuntimeSocket},
    {"priv.devices", "nodes", "device nodes", Any},
    {"priv.cgroups", "cgroup_mounts", "cgroup mounts", NotReleaseAgent},
    {"priv.fds", "inherited", "inherited descriptors", Any},
    {"priv.fds", "directories", "inherited directory descriptors", DirFd},
};

}  // namespace

std::optional<std::string> ListCountMismatch(const std::string& family, const FactIndex& facts) {
  for (const ListCount& row : kListCounts) {
    if (family != row.family) continue;
    std::int64_t said = 0, listed = 0;
    bool any_summary = false;
    for (int index : facts.OfFamily(family)) {
      const json& fact = facts.Fact(index);
      if (!IsSummary(fact)) {
        if (row.counts(fact)) ++listed;
        continue;
      }
      auto count = fact.find(row.key);
      if (count == fact.end()) continue;  // a summary without the count (a failed scan)
      if (!count->is_number_integer()) {
        return fmt::format("the probe's {} summary has a {} that is no count: {}", family, row.key,
                           count->dump());
      }
      any_summary = true;
      said += count->get<std::int64_t>();
    }
    if (any_summary && said != listed) {
      return fmt::format("the probe's summary counts {} {} ({}), but it listed {}: the list is "
                         "not believed",
                         said, row.what, row.key, listed);
    }
  }
  return std::nullopt;
}

void DistrustMiscountedList(const FactIndex& facts, Verdict& v) {
  if (v.outcome == Outcome::kFail && v.direction == Direction::kTooPermissive) return;
  if (v.outcome == Outcome::kSkip) return;
  std::optional<std::string> why = ListCountMismatch(v.check.family, facts);
  if (!why) return;
  v.outcome = Outcome::kError;
  v.direction = Direction::kNone;
  v.observed = *why + (v.observed.empty() ? "" : "; the judge saw: " + v.observed);
}

}  // namespace sandprobe
