#include "reports/junit_timestamp.h"

#include <ctime>

namespace sandprobe {
namespace {

// Reads `n` digits at s[*pos]; advances *pos.
bool Digits(std::string_view s, std::size_t* pos, int n, int* out) {
  if (*pos + n > s.size()) return false;
  *out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[(*pos)++];
    if (c < '0' || c > '9') return false;
    *out = *out * 10 + (c - '0');
  }
  return true;
}

bool Expect(std::string_view s, std::size_t* pos, std::string_view one_of) {
  if (*pos >= s.size() || one_of.find(s[*pos]) == std::string_view::npos) return false;
  ++*pos;
  return true;
}

}  // namespace

std::string JunitTimestamp(std::string_view s) {
  std::tm tm{};
  std::size_t p = 0;
  if (!Digits(s, &p, 4, &tm.tm_year) || !Expect(s, &p, "-") || !Digits(s, &p, 2, &tm.tm_mon) ||
      !Expect(s, &p, "-") || !Digits(s, &p, 2, &tm.tm_mday) || !Expect(s, &p, "Tt ") ||
      !Digits(s, &p, 2, &tm.tm_hour) || !Expect(s, &p, ":") || !Digits(s, &p, 2, &tm.tm_min) ||
      !Expect(s, &p, ":") || !Digits(s, &p, 2, &tm.tm_sec)) {
    return "";
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return "";
  }
  if (Expect(s, &p, ".")) {
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') ++p;  // fractions are dropped
  }
  int offset_seconds = 0;
  if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int sign = s[p++] == '-' ? -1 : 1;
    int hh = 0, mm = 0;
    if (!Digits(s, &p, 2, &hh) || !Expect(s, &p, ":") || !Digits(s, &p, 2, &mm)) return "";
    offset_seconds = sign * (hh * 3600 + mm * 60);
  } else if (!Expect(s, &p, "Zz")) {
    return "";  // RFC 3339 requires a zone; without one the time is ambiguous
  }
  if (p != s.size()) return "";
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t utc = ::timegm(&tm) - offset_seconds;
  std::tm out{};
  if (::gmtime_r(&utc, &out) == nullptr) return "";
  char buffer[32];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &out);
  return std::string(buffer, n);
}

}  // namespace sandprobe
