// The host canary's checks against what the host itself saw (witnesses/witness_canary_watch.h):
// an open of the canary's inode while the probes ran is a read, a changed or vanished canary is
// a write to the host; both fail whatever the probe reported. A denial the watch confirms (no
// open, canary intact) is witnessed by the host, not only reported by the probe.
#include <functional>

#include <fmt/format.h>

#include "families/family_fs.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// "after launch L1: deleted (inotify); after launch L2: ..." (at most 3, then "and N more").
std::string Describe(const json& entries, const std::function<std::string(const json&)>& what) {
  std::string out;
  std::size_t shown = 0;
  for (const json& entry : entries) {
    if (shown == 3) return out + fmt::format("; and {} more", entries.size() - shown);
    out += fmt::format("{}after launch {}: {}", shown == 0 ? "" : "; ",
                       entry.value("after_launch", std::string("?")), what(entry));
    ++shown;
  }
  return out;
}

// The watch of the check's canary: the run's own ("canary_watch"), or a canary planted in a
// host directory the profile mounts ("mounted_canaries" entry with the label, its "watch").
// Null for other targets and for reports written before the watch existed.
const json* WatchOf(const JudgeInput& in) {
  static const std::string kMounted = "{mounted_canary:";
  const auto& observed = in.witnesses.observed;
  if (in.check.target == "{host_canary}") {
    auto it = observed.find("canary_watch");
    return it != observed.end() && it->second.is_object() ? &it->second : nullptr;
  }
  if (!in.check.target.starts_with(kMounted) || !in.check.target.ends_with("}")) return nullptr;
  const std::string label = in.check.target.substr(kMounted.size(), in.check.target.size() - kMounted.size() - 1);
  auto it = observed.find("mounted_canaries");
  if (it == observed.end() || !it->second.is_array()) return nullptr;
  for (const json& canary : it->second) {
    if (canary.is_object() && canary.value("label", "") == label && canary.contains("watch") &&
        canary["watch"].is_object()) {
      return &canary["watch"];
    }
  }
  return nullptr;
}

}  // namespace

void ApplyCanaryWatch(const JudgeInput& in, Verdict& v) {
  const json* watched = WatchOf(in);
  if (watched == nullptr) return;
  const json& watch = *watched;
  if (!watch.value("watched", false)) {
    v.observed += fmt::format("; the host could not watch its canary ({}): this rests on the "
                              "probe's word", watch.value("error", std::string("no reason given")));
    return;
  }
  const json changes = watch.value("changes", json::array());
  const json opens = watch.value("opens", json::array());
  if (!changes.empty()) {
    Judge(v, false, Direction::kTooPermissive);
    v.check.severity = Severity::kCritical;
    v.evidence.tier = EvidenceTier::kWitnessed;
    v.evidence.witness_facts.push_back("canary_watch changes");
    v.observed += "; the host saw its canary changed: " +
                  Describe(changes, [](const json& c) { return c.value("what", std::string("?")); }) +
                  ": a write to the host";
    v.remediation = "the sandbox changed a host file: mount the host read-only or not at all, and "
                    "do not let the sandbox reach the run directory";
    return;
  }
  if (in.check.expect != Expectation::kDenied) {
    if (v.outcome == Outcome::kPass && !opens.empty()) v.evidence.tier = EvidenceTier::kWitnessed;
    return;
  }
  if (!opens.empty()) {
    Judge(v, false, Direction::kTooPermissive);
    v.evidence.tier = EvidenceTier::kWitnessed;
    v.evidence.witness_facts.push_back("canary_watch opens");
    v.observed += "; the host saw its canary opened: " + Describe(opens, [](const json& o) {
                    return o.value("overflow", false) ? std::string("events lost (queue overflow)")
                                                      : fmt::format("{} open(s)", o.value("count", 0));
                  }) + ": a read, whatever the probe reported";
    return;
  }
  if (v.outcome == Outcome::kPass) {
    v.evidence.tier = EvidenceTier::kWitnessed;
    v.observed += fmt::format("; the host's watch saw no open of its canary and re-verified it "
                              "intact {} times", watch.value("verified", 0));
  }
}

}  // namespace sandprobe
