#include "cli/cli_recorded.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <span>

#include <fmt/format.h>

#include "cli/color_choice.h"
#include "contract/exit_code.h"
#include "io/atomic_file.h"
#include "cli/console_width.h"
#include "reports/console_report.h"
#include "reports/publish.h"
#include "reports/json_report_read.h"
#include "reports/report_format.h"
#include "load/data_dir.h"
#include "gate/gate.h"
#include "recorded/infer.h"
#include "recorded/rejudge.h"
#include "gate/waivers.h"

namespace sandprobe {
namespace {

struct ReportFlags {
  std::string run_report, policy, format = "console", fail_on = "low", waivers;
  ReportPaths outputs = ReportPaths(ReportFormats().size());  // one per ReportFormats() row
  bool no_color = false;
};

// Exit codes as `run`: the gate over the re-judged verdicts; 2 for bad input.
int Report(ReportFlags flags, const std::string& data_dir) {
  const std::optional<FailOn> fail_on = ParseFailOnFlag("sandprobe report", flags.fail_on, stderr);
  if (!fail_on) return kExitUsage;
  if (flags.format != "console") {  // --format X: that report on stdout
    const ReportFormat* format = FindReportFormat(flags.format);
    flags.outputs[static_cast<std::size_t>(format - ReportFormats().data())] = "-";
  }
  if (Status s = CheckReportOutputs(NamedOutputs(flags.outputs)); !s.ok()) {
    return std::cerr << "sandprobe report: " << s.message() << "\n", kExitUsage;
  }
  if (!flags.policy.empty()) {
    StatusOr<std::string> resolved = ResolveDataFile(DataKind::kPolicy, flags.policy, data_dir);
    if (!resolved.ok()) return std::cerr << "sandprobe report: " << resolved.status().message() << "\n", kExitUsage;
    flags.policy = *resolved;
  }
  StatusOr<nlohmann::json> recorded = LoadJsonReport(flags.run_report);
  if (!recorded.ok()) return std::cerr << "sandprobe report: " << recorded.status().message() << "\n", kExitUsage;
  StatusOr<RunReport> report = RejudgeReport(*recorded, flags.run_report, flags.policy);
  if (!report.ok()) return std::cerr << "sandprobe report: " << report.status().message() << "\n", kExitUsage;
  std::optional<WaiverFile> waivers;  // as `run --waivers`: on the re-judged fails, today's date
  if (!flags.waivers.empty()) {
    StatusOr<WaiverFile> loaded = LoadWaivers(flags.waivers);
    if (!loaded.ok()) return std::cerr << "sandprobe report: " << loaded.status().message() << "\n", kExitUsage;
    waivers = std::move(*loaded);
  }
  FILE* console = AnyOutputOnStdout(flags.outputs) ? stderr : stdout;
  const int exit_code =
      Publish(*report, flags.outputs,
              PublishOptions{.program = "sandprobe report",
                             .gate_prefix = fmt::format("re-judged run {} against policy {}: ", report->run_id,
                                                        report->policy_name),
                             .waivers = waivers ? &*waivers : nullptr,
                             .today = UtcToday(),
                             .fail_on = *fail_on,
                             .layout = {.color = UseColor(flags.no_color, console), .width = ConsoleWidth(console)},
                             .console = console})
          .exit_code;
  return exit_code;
}

struct InferFlags {
  std::string run_report, output = "-", name;
};

// Exit: 0 the policy was written, 2 bad input.
int Infer(const InferFlags& flags) {
  StatusOr<nlohmann::json> recorded = LoadJsonReport(flags.run_report);
  if (!recorded.ok()) return std::cerr << "sandprobe infer: " << recorded.status().message() << "\n", kExitUsage;
  StatusOr<InferredPolicy> inferred = InferPolicy(*recorded, flags.run_report, flags.name);
  if (!inferred.ok()) return std::cerr << "sandprobe infer: " << inferred.status().message() << "\n", kExitUsage;
  for (const std::string& note : inferred->notes) std::cerr << "sandprobe infer: " << note << "\n";
  if (Status s = WriteReportOutput(flags.output, inferred->policy.dump(2) + "\n"); !s.ok()) {
    return std::cerr << "sandprobe infer: " << s.WithContext("write policy").message() << "\n", kExitUsage;
  }
  return 0;
}

}  // namespace

CliHandler SetupReport(CLI::App& command, const CliGlobals& globals) {
  auto flags = std::make_shared<ReportFlags>();
  command.add_option("run", flags->run_report, "a JSON report of `sandprobe run` (--json)")->required();
  command.add_option("--policy", flags->policy,
                     "judge the recorded facts against this policy: a name or a file (default: the run's)");
  std::vector<std::string> names = {"console"};
  const std::span<const ReportFormat> formats = ReportFormats();
  for (const ReportFormat& format : formats) names.emplace_back(format.name);
  command.add_option("--format", flags->format, "write this report to stdout (console: the summary only)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  for (std::size_t i = 0; i < formats.size(); ++i) {
    // The run's help for --matrix speaks of every --sandbox, an option `report` does not have.
    const std::string help = formats[i].name == "matrix"
                                 ? "write this run's checks table here (Markdown; JSON for *.json)"
                                 : std::string(formats[i].help);
    command.add_option(std::string(formats[i].flag), flags->outputs[i], help);
  }
  command.add_option("--fail-on", flags->fail_on, "lowest severity whose fail gives exit 1 (none: report only)")
      ->capture_default_str();
  command.add_option("--waivers", flags->waivers, "JSON file of waived fails (check glob, reason, expires)");
  command.add_flag("--no-color", flags->no_color, "no ANSI colours (also NO_COLOR=1; FORCE_COLOR=1 colours a pipe)");
  return [flags, &globals] { return Report(*flags, globals.data_dir); };
}

CliHandler SetupInfer(CLI::App& command, const CliGlobals&) {
  auto flags = std::make_shared<InferFlags>();
  command.add_option("run", flags->run_report, "a JSON report of `sandprobe run` (--json)")->required();
  command.add_option("-o,--output", flags->output, "write the policy here ('-' for stdout)")->capture_default_str();
  command.add_option("--name", flags->name, "the inferred policy's name (default: <profile>-inferred)");
  return [flags] { return Infer(*flags); };
}

}  // namespace sandprobe
