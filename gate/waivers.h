// Waivers: `--waivers FILE` lets a known, accepted fail through the gate for a while.
//
//   {"waivers": [{"check": "net.tcp.egress:*", "reason": "INFRA-12: proxy lands in Q1",
//                 "expires": "2027-01-31"}]}
//
// JSON with comments, like the other data files, and errors at file:line:col. A waived fail
// stays a fail in every report, marked waived with its reason; only the gate ignores it. A
// waiver past its date waives nothing and fails the gate by itself, so waivers are renewed
// or removed, never forgotten. Only fails are waived: an error or inconclusive check is the
// harness's problem, not the sandbox's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "load/json_source.h"
#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

struct Waiver {
  std::string check;    // a check id or an fnmatch glob over ids (check_selection.h)
  std::string reason;   // required, non-empty: why the fail is accepted
  std::string expires;  // required, YYYY-MM-DD: the last day (UTC) the waiver holds
  std::string where;    // "waivers.json:3:5"
};

struct WaiverFile {
  std::string source_path;
  std::vector<Waiver> waivers;
};

StatusOr<WaiverFile> ParseWaivers(const JsonDocument& doc);
StatusOr<WaiverFile> LoadWaivers(const std::string& path);

// Today's date in UTC, YYYY-MM-DD: the day expiries are compared with.
std::string UtcToday();

// Marks every fail a waiver matches (the first active one, else the first expired one) and
// fills report.waivers: the expired waivers (each fails the gate) and the ones that matched
// no fail. `today` is YYYY-MM-DD; a waiver expires the day after its `expires`.
void ApplyWaivers(RunReport& report, const WaiverFile& waivers, std::string_view today);

}  // namespace sandprobe
