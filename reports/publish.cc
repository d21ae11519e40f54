#include "reports/publish.h"

#include <fmt/format.h>

#include "contract/exit_code.h"

namespace sandprobe {

std::string WrittenReportsLine(const ReportPaths& outputs) {
  std::string line;
  for (std::size_t i = 0; i < outputs.size() && i < ReportFormats().size(); ++i) {
    if (outputs[i].empty()) continue;
    line += fmt::format("{}{} {}", line.empty() ? "reports: " : ", ", ReportFormats()[i].name,
                        outputs[i] == "-" ? std::string("(stdout)") : outputs[i]);
  }
  return line;
}

PublishResult Publish(RunReport& report, const ReportPaths& outputs, const PublishOptions& options) {
  if (options.waivers != nullptr) ApplyWaivers(report, *options.waivers, options.today);
  std::fputs(RenderConsole(report, options.layout).c_str(), options.console);
  const GateResult gate = Gate(report, options.fail_on);
  std::fprintf(options.console, "%s%s\n", options.gate_prefix.c_str(), gate.why.c_str());
  std::fflush(options.console);
  PublishResult result{.exit_code = gate.exit_code, .backend_skipped = gate.backend_skipped, .judged = gate.judged};
  for (const Status& s : WriteReports({report}, outputs)) {
    std::fprintf(options.errors, "%.*s: %s\n", static_cast<int>(options.program.size()), options.program.data(),
                 s.message().c_str());
    result.exit_code = kExitHarness;
    result.backend_skipped = false;
  }
  if (const std::string line = WrittenReportsLine(outputs); !line.empty() && result.exit_code != kExitHarness) {
    std::fprintf(options.console, "%s\n", line.c_str());
    std::fflush(options.console);
  }
  return result;
}

std::optional<FailOn> ParseFailOnFlag(std::string_view program, std::string_view text, FILE* errors) {
  std::optional<FailOn> fail_on = ParseFailOn(text);
  if (!fail_on) {
    std::fprintf(errors, "%.*s: --fail-on %.*s: expected critical, high, medium, low, info or none\n",
                 static_cast<int>(program.size()), program.data(), static_cast<int>(text.size()), text.data());
  }
  return fail_on;
}

}  // namespace sandprobe
