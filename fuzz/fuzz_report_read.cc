// Any file given to `sandprobe report`, `infer` or `diff`: the report reader and the diff return
// a Status naming the file, never crash, and take nothing but sandprobe-report/1.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "reports/diff.h"
#include "reports/json_report_read.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto report = sandprobe::ParseJsonReport(text, "r.json");
  if (!report.ok()) {
    if (report.status().message().rfind("r.json", 0) != 0) std::abort();
    return 0;
  }
  if ((*report)["schema"] != sandprobe::kReportSchema) std::abort();
  auto facts = sandprobe::ReadJsonReportFacts(*report, "r.json");
  if (!facts.ok() && facts.status().message().rfind("r.json", 0) != 0) std::abort();
  auto diff = sandprobe::DiffReports(*report, *report);
  if (diff.ok()) {
    // A report compared with itself changes nothing and regresses nothing.
    if (diff->regressions != 0 || diff->Significant() != 0) std::abort();
    (void)sandprobe::RenderDiffText(*diff);
    (void)sandprobe::DiffToJson(*diff).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
