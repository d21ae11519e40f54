// The one step after the verdicts, shared by `run` and `report`: waivers -> console -> gate ->
// report files -> exit code. Two commands that each wrote it drifted apart before (one said
// where the reports went, the other did not); now there is one.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "gate/gate.h"
#include "gate/waivers.h"
#include "model/run_report.h"
#include "reports/console_report.h"
#include "reports/report_format.h"

namespace sandprobe {

struct PublishOptions {
  std::string_view program;   // "sandprobe run": the prefix of every message
  std::string gate_prefix;    // before the gate's "exit N: ..." line ("" for none)
  const WaiverFile* waivers = nullptr;
  std::string today;          // YYYY-MM-DD (UTC) the waivers are judged on
  FailOn fail_on;
  ConsoleLayout layout;
  FILE* console = stdout;     // the console text and the gate line
  FILE* errors = stderr;      // a report that could not be written
};

struct PublishResult {
  int exit_code = 0;
  // As GateResult::backend_skipped, false when a report file could not be written.
  bool backend_skipped = false;
  int judged = 0;
};

// Applies the waivers to `report`, prints it, gates it, writes every given output, then says
// where the reports went. Exit: the gate's, or 3 when any report could not be written.
PublishResult Publish(RunReport& report, const ReportPaths& outputs, const PublishOptions& options);

// "reports: json /tmp/r.json, junit -": the outputs given, in ReportFormats() order; "" if none.
std::string WrittenReportsLine(const ReportPaths& outputs);

// --fail-on TEXT, or a message naming the accepted values.
std::optional<FailOn> ParseFailOnFlag(std::string_view program, std::string_view text, FILE* errors);

}  // namespace sandprobe
