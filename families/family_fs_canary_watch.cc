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

}  // namespace

void ApplyCanaryWatch(const JudgeInput& in, Verdict& v) {
  if (in.check.target != "{host_canary}") return;  // mounted canaries are not watched (yet)
  auto it = in.witnesses.observed.find("canary_watch");
  if (it == in.witnesses.observed.end() || !it->second.is_object()) return;  // an older report
  const json& watch = it->second;
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
