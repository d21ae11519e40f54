// UtcTime: a wall-clock instant of a run (started, finished), kept as a time point; each report
// writes it in its own format, so no report parses back what another formatted.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace sandprobe {

using UtcTime = std::chrono::sys_seconds;

// Now, to the second.
UtcTime UtcNow();

// RFC 3339 in UTC: "2026-11-20T10:00:00Z" (JSON, SARIF).
std::string Rfc3339(UtcTime time);
// The same without the zone: "2026-11-20T10:00:00" (JUnit's timestamp is xs:dateTime without one).
std::string Rfc3339NoZone(UtcTime time);
// "2026-11-20" (waiver expiry dates compare with it).
std::string UtcDate(UtcTime time);

// An RFC 3339 date-time read back from a report: "2026-11-20T12:00:01.250+02:00" ->
// 2026-11-20T10:00:01Z (fractions dropped). nullopt when it is not one; a time without a
// zone is ambiguous and refused.
std::optional<UtcTime> ParseRfc3339(std::string_view text);

}  // namespace sandprobe
