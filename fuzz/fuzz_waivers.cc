// Any --waivers file: the loader returns a Status naming w.json:line:col, never crashes, and
// what it accepts is usable (a glob fnmatch can apply, a reason, a real date); applying the
// waivers to a run marks only fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gate/check_selection.h"
#include "gate/waivers.h"

namespace {

sandprobe::Verdict Verdict(const char* id, sandprobe::Outcome outcome) {
  sandprobe::Verdict v;
  v.check.id = id;
  v.outcome = outcome;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = sandprobe::JsonDocument::Parse(text, "w.json");
  if (!doc.ok()) {
    if (doc.status().message().rfind("w.json", 0) != 0) std::abort();
    return 0;
  }
  auto file = sandprobe::ParseWaivers(*doc);
  if (!file.ok()) {
    if (file.status().message().rfind("w.json:", 0) != 0) std::abort();
    return 0;
  }
  for (const sandprobe::Waiver& w : file->waivers) {
    if (w.check.empty() || w.reason.empty() || w.expires.size() != 10) std::abort();
    if (sandprobe::GlobProblem(w.check)) std::abort();
    if (w.where.rfind("w.json:", 0) != 0) std::abort();
  }
  sandprobe::RunReport report;
  report.verdicts = {Verdict("fs.read.denied:/etc/shadow", sandprobe::Outcome::kFail),
                     Verdict("fs.alias.denied:host-canary[symlink]", sandprobe::Outcome::kFail),
                     Verdict("net.tcp.egress:127.0.0.1", sandprobe::Outcome::kError),
                     Verdict("limits.pids", sandprobe::Outcome::kPass)};
  sandprobe::ApplyWaivers(report, *file, "2026-06-15");
  for (const sandprobe::Verdict& v : report.verdicts) {
    if (v.waiver && v.outcome != sandprobe::Outcome::kFail) std::abort();  // only fails are waived
  }
  return 0;
}
