// `sandprobe mutate --sandbox P [--suite S] [--json F] [--markdown F] [-j N]`.
//
// Exit: 0 every applicable mutant killed · 1 a mutant survived · 2 usage or invalid input
// (profile, policy, suite, operator file) · 3 the profile's own audit did not run, a mutant is
// unfinished, none applied, or the session was interrupted (MutateExitCode).
#include "cli/cli_mutate.h"

#include <signal.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "contract/exit_code.h"
#include "io/atomic_file.h"
#include "launch/launcher.h"
#include "load/data_dir.h"
#include "mutate/mutate.h"
#include "mutate/mutate_report.h"
#include "run/probe_builds.h"
#include "run/run_sweep.h"

namespace sandprobe {
namespace {

std::atomic<bool> g_mutate_interrupted{false};

// First SIGINT/SIGTERM/SIGHUP/SIGQUIT: stop starting runs, let the running ones clean up, write
// what was decided. Second: die now.
void OnMutateInterrupt(int signal_number) {
  if (g_mutate_interrupted.exchange(true)) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

void InstallMutateInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = OnMutateInterrupt;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(signal_number, &action, nullptr);
}

struct MutateFlags {
  std::string sandbox, policy, operators, json, markdown;
  std::vector<std::string> suites, only;
  std::string probe_dir;         // --probe-dir; empty: the layout's directory of the profile's runtime
  std::string layout_probe_dir;  // the native probe's directory in the data layout
  int jobs = 2, run_jobs = 1;
  int timeout_seconds = 0;
  bool full_matrix = false, quiet = false;
};

int Mutate(const MutateFlags& flags, const CliGlobals& globals) {
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!flags.json.empty()) outputs.emplace_back("--json", flags.json);
  if (!flags.markdown.empty()) outputs.emplace_back("--markdown", flags.markdown);
  if (Status s = CheckReportOutputs(outputs); !s.ok()) {
    return std::cerr << "sandprobe mutate: " << s.message() << "\n", kExitUsage;
  }
  InstallMutateInterruptHandlers();
  ProcessLauncher launcher;
  for (const SweepSummary& swept : SweepDeadRuns(launcher, {})) {
    std::cerr << "sandprobe mutate: swept a " << DescribeSweep(swept, /*dry_run=*/false);
  }
  MutateOptions options{.profile_path = flags.sandbox,
                        .policy_path = flags.policy,
                        .suite_paths = flags.suites,
                        .operators_path = flags.operators,
                        .mutations_dir = (std::filesystem::path(globals.data_dir) / "sandboxes" / "mutations").string(),
                        .only = flags.only,
                        .probe_dir = flags.probe_dir,
                        .layout_probe_dir = flags.layout_probe_dir,
                        .probe_builds = BuiltProbes(),
                        .tool_version = SANDPROBE_VERSION,
                        .jobs = flags.jobs,
                        .run_jobs = flags.run_jobs,
                        .full_matrix = flags.full_matrix,
                        .timeout = std::chrono::seconds(flags.timeout_seconds),
                        .cancel = &g_mutate_interrupted};
  if (!flags.quiet) options.on_event = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
  StatusOr<MutateReport> report = RunMutate(options, launcher);
  if (!report.ok()) {
    std::cerr << "sandprobe mutate: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidInput ? kExitUsage : kExitHarness;
  }
  // With `--json -` stdout carries the document alone; the summary goes to stderr.
  const bool json_on_stdout = WritesToStdout(flags.json), markdown_on_stdout = WritesToStdout(flags.markdown);
  (json_on_stdout || markdown_on_stdout ? std::cerr : std::cout) << RenderMutateConsole(*report);
  int exit_code = MutateExitCode(*report);
  auto write = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    if (Status s = WriteReportOutput(path, text); !s.ok()) {
      std::cerr << "sandprobe mutate: " << s.message() << "\n";
      exit_code = kExitHarness;
    }
  };
  write(flags.json, MutateReportToJson(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write(flags.markdown, RenderMutateMarkdown(*report));
  if (report->interrupted) std::cerr << "sandprobe mutate: interrupted; mutants not audited are unfinished\n";
  return exit_code;
}

}  // namespace

CliHandler SetupMutate(CLI::App& mutate, const CliGlobals& globals) {
  auto flags = std::make_shared<MutateFlags>();
  flags->layout_probe_dir = globals.probe_dir;
  mutate.add_option("--sandbox", flags->sandbox, "the sandbox profile to mutate: a name (see list) or a JSON file")
      ->required();
  mutate.add_option("--policy", flags->policy, "policy to judge against: a name or a file (default: the profile's)");
  mutate.add_option("--suite", flags->suites,
                    "suites of checks: names or files, several as a,b; all = every suite (the default)")
      ->delimiter(',');
  mutate.add_option("--operators", flags->operators,
                    "mutation operator file (default: the one in <data-dir>/sandboxes/mutations/ for the "
                    "profile's backend)");
  mutate.add_option("--operator", flags->only, "only operators whose name matches this glob (repeatable)");
  mutate.add_option("--json", flags->json, "write the result as JSON (docs/mutate.schema.json); - for stdout");
  mutate.add_option("--markdown", flags->markdown, "write a Markdown summary");
  mutate.add_option("-j,--jobs", flags->jobs,
                    "audits at once in the shared phase (suites with exclusive families always run alone)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  mutate.add_option("--run-jobs", flags->run_jobs,
                    "each audit's own -j: its shared launch split by family group (as run -j); 1 = one launch")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  mutate.add_flag("--full-matrix", flags->full_matrix,
                  "audit every mutant with every suite, also once a check has killed it (complete `flipped` lists)");
  mutate.add_option("--timeout", flags->timeout_seconds,
                    "limit for the whole session in seconds (0: none); mutants not audited by then are unfinished")
      ->check(CLI::Range(0, 86400));
  mutate.add_option("--probe-dir", flags->probe_dir, "host directory holding the profile's probe (default: this build's, for the profile's runtime)");
  mutate.add_flag("-q,--quiet", flags->quiet, "no line per audited mutant on stderr");
  return [flags, &globals]() -> int {
    if (flags->suites.empty()) flags->suites = {"all"};
    StatusOr<std::vector<std::string>> suites = ResolveSuites(flags->suites, globals.data_dir);
    if (!suites.ok()) return std::cerr << "sandprobe mutate: " << suites.status().message() << "\n", kExitUsage;
    flags->suites = std::move(*suites);
    std::string no_suite;  // resolved above
    if (Status s = ResolveRunInputs(globals.data_dir, flags->sandbox, flags->policy, no_suite); !s.ok()) {
      return std::cerr << "sandprobe mutate: " << s.message() << "\n", kExitUsage;
    }
    return Mutate(*flags, globals);
  };
}

}  // namespace sandprobe
