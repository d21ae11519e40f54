#include "model/utc_time.h"

#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace sandprobe {
namespace {

std::tm Broken(UtcTime time) { return fmt::gmtime(std::chrono::system_clock::to_time_t(time)); }

// Reads `n` digits at text[pos]; advances pos.
bool Digits(std::string_view text, std::size_t& pos, int n, int& out) {
  if (pos + n > text.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = text[pos++];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

bool Take(std::string_view text, std::size_t& pos, std::string_view one_of) {
  if (pos >= text.size() || one_of.find(text[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

}  // namespace

UtcTime UtcNow() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

std::string Rfc3339(UtcTime time) { return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", Broken(time)); }
std::string Rfc3339NoZone(UtcTime time) { return fmt::format("{:%Y-%m-%dT%H:%M:%S}", Broken(time)); }
std::string UtcDate(UtcTime time) { return fmt::format("{:%Y-%m-%d}", Broken(time)); }

std::optional<UtcTime> ParseRfc3339(std::string_view text) {
  using namespace std::chrono;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::size_t p = 0;
  if (!Digits(text, p, 4, year) || !Take(text, p, "-") || !Digits(text, p, 2, month) ||
      !Take(text, p, "-") || !Digits(text, p, 2, day) || !Take(text, p, "Tt ") ||
      !Digits(text, p, 2, hour) || !Take(text, p, ":") || !Digits(text, p, 2, minute) ||
      !Take(text, p, ":") || !Digits(text, p, 2, second)) {
    return std::nullopt;
  }
  const year_month_day date{std::chrono::year(year), std::chrono::month(month), std::chrono::day(day)};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  if (Take(text, p, ".")) {
    while (p < text.size() && text[p] >= '0' && text[p] <= '9') ++p;  // fractions are dropped
  }
  seconds offset{0};
  if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
    const int sign = text[p++] == '-' ? -1 : 1;
    int hh = 0, mm = 0;
    if (!Digits(text, p, 2, hh) || !Take(text, p, ":") || !Digits(text, p, 2, mm)) return std::nullopt;
    offset = seconds(sign * (hh * 3600 + mm * 60));
  } else if (!Take(text, p, "Zz")) {
    return std::nullopt;  // RFC 3339 requires a zone; without one the time is ambiguous
  }
  if (p != text.size()) return std::nullopt;
  return sys_days(date) + hours(hour) + minutes(minute) + seconds(second) - offset;
}

}  // namespace sandprobe
