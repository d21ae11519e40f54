// The `timestamp` attribute of a JUnit <testsuite>.
//
// Reports carry RFC 3339 times ("2026-11-20T10:00:00Z"); the JUnit dialects CI tools parse
// (Ant, Surefire, Jenkins xUnit) use ISO 8601 without a zone suffix, meaning UTC.
#pragma once

#include <string>
#include <string_view>

namespace sandprobe {

// "2026-11-20T10:00:00Z" or "2026-11-20T12:00:00.5+02:00" -> "2026-11-20T10:00:00" (UTC, no
// fraction, no zone); "" when `rfc3339` does not parse or has no zone (the caller then omits
// the attribute rather than guess).
std::string JunitTimestamp(std::string_view rfc3339);

}  // namespace sandprobe
