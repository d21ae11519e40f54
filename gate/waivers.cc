#include "gate/waivers.h"

#include <chrono>

#include <fmt/format.h>

#include "gate/check_selection.h"
#include "model/utc_time.h"

namespace sandprobe {
namespace {

// YYYY-MM-DD naming a real day (2027-02-30 is not).
bool IsDate(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  std::chrono::year_month_day day{std::chrono::year(std::stoi(text.substr(0, 4))),
                                  std::chrono::month(static_cast<unsigned>(std::stoi(text.substr(5, 2)))),
                                  std::chrono::day(static_cast<unsigned>(std::stoi(text.substr(8, 2))))};
  return day.ok();
}

// Dates as YYYY-MM-DD compare as strings.
bool Expired(const Waiver& waiver, std::string_view today) { return waiver.expires < today; }

std::string Describe(const Waiver& waiver) {
  return fmt::format("{}: waiver for {} expired on {} ({})", waiver.where, waiver.check,
                     waiver.expires, waiver.reason);
}

AppliedWaiver Applied(const Waiver& waiver, bool expired) {
  return {waiver.check, waiver.reason, waiver.expires, waiver.where, expired};
}

}  // namespace

StatusOr<WaiverFile> ParseWaivers(const JsonDocument& doc) {
  ObjectReader root(doc, JsonPointer(), {"waivers"});
  WaiverFile file{doc.file_name(), {}};
  const JsonPointer list_ptr = root.PointerTo("waivers");
  if (root.ok() && !root.Has("waivers")) root.FailAt(JsonPointer(), "missing required \"waivers\"");
  if (root.ok() && !doc.root()["waivers"].is_array()) {
    root.FailAt(list_ptr, fmt::format("expected array, got {}", JsonTypeName(doc.root()["waivers"])));
  }
  if (!root.ok()) return root.status();
  for (std::size_t i = 0; i < doc.root()["waivers"].size(); ++i) {
    JsonPointer ptr = list_ptr / i;
    ObjectReader r(doc, ptr, {"check", "reason", "expires"});
    Waiver w;
    w.check = r.String("check", Presence::kRequired).value_or("");
    w.reason = r.String("reason", Presence::kRequired).value_or("");
    w.expires = r.String("expires", Presence::kRequired).value_or("");
    w.where = doc.Where(ptr);
    for (auto [key, value] : {std::pair{"check", &w.check}, std::pair{"reason", &w.reason}}) {
      if (r.ok() && value->empty()) r.FailAt(r.PointerTo(key), "must not be empty");
    }
    if (r.ok()) {
      if (std::optional<std::string> problem = GlobProblem(w.check)) r.FailAt(r.PointerTo("check"), *problem);
    }
    if (r.ok() && !IsDate(w.expires)) {
      r.FailAt(r.PointerTo("expires"), fmt::format("\"{}\" is not a date YYYY-MM-DD", w.expires));
    }
    if (!r.ok()) return r.status();
    file.waivers.push_back(std::move(w));
  }
  return file;
}

StatusOr<WaiverFile> LoadWaivers(const std::string& path) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  return ParseWaivers(*doc);
}

std::string UtcToday() { return UtcDate(UtcNow()); }

void ApplyWaivers(RunReport& report, const WaiverFile& waivers, std::string_view today) {
  WaiverSummary summary{waivers.source_path, {}, {}};
  std::vector<bool> used(waivers.waivers.size(), false);
  for (Verdict& v : report.verdicts) {
    if (v.outcome != Outcome::kFail) continue;
    const Waiver* expired_match = nullptr;
    for (std::size_t i = 0; i < waivers.waivers.size(); ++i) {
      const Waiver& w = waivers.waivers[i];
      if (!CheckIdMatches(w.check, v.check.id)) continue;
      used[i] = true;
      if (!Expired(w, today)) {
        v.waiver = Applied(w, false);
        break;
      }
      if (expired_match == nullptr) expired_match = &w;
    }
    if (!v.waiver && expired_match != nullptr) v.waiver = Applied(*expired_match, true);
  }
  for (std::size_t i = 0; i < waivers.waivers.size(); ++i) {
    const Waiver& w = waivers.waivers[i];
    if (Expired(w, today)) summary.expired.push_back(Describe(w));
    else if (!used[i]) summary.unused.push_back(fmt::format("{}: waiver for {} matched no fail", w.where, w.check));
  }
  report.waivers = std::move(summary);
}

}  // namespace sandprobe
