// sandprobe: the command line. The only place that prints a Status and picks an exit code.
//
// Exit codes: 0 all pass (skips allowed) · 1 a fail at or above --fail-on · 2 usage or invalid
// input · 3 harness error or inconclusive checks (and no fail).
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <span>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "contract/exit_code.h"
#include "sandprobe_build_info.h"
#include "launch/atomic_file.h"
#include "reports/console_report.h"
#include "reports/matrix_report.h"
#include "reports/progress_line.h"
#include "reports/diff.h"
#include "reports/report_format.h"
#include "cli/cli_command.h"
#include "cli/cli_recorded.h"
#include "load/data_dir.h"
#include "load/data_lint.h"
#include "families/evaluate.h"
#include "gate/gate.h"
#include "load/json_source.h"
#include "launch/launcher.h"
#include "families/plan.h"
#include "load/policy.h"
#include "load/profile.h"
#include "run/run.h"
#include "gate/run_matrix.h"
#include "run/run_sweep.h"
#include "load/suite.h"
#include "gate/waivers.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_interrupted{false};

// First SIGINT/SIGTERM/SIGHUP/SIGQUIT: stop launching, clean up, write the reports. Second:
// die now. SIGHUP (the terminal or the CI runner's session went away) and SIGQUIT would
// otherwise end the harness with its sandboxes still running and no report.
void OnInterrupt(int signal_number) {
  if (g_interrupted.exchange(true)) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

void InstallInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  sigaction(SIGQUIT, &action, nullptr);
}

struct RunFlags {
  std::vector<std::string> sandboxes;  // --sandbox a,b,c: resolved to profile files
  std::vector<std::string> suites;     // --suite a,b / all: resolved to suite files
  std::string policy, probe_dir, fail_on = "low";
  ReportPaths outputs = ReportPaths(ReportFormats().size());  // one per ReportFormats() row
  bool require_backend = false, no_color = false, keep_run_dir = false, no_progress = false;
  int jobs = 1;
  int timeout_seconds = 0;
  CheckSelection selection;  // --check, --skip
  std::string waivers;       // --waivers FILE
};

// A live line on a terminal only: not in CI, not into a file or pipe, not with --no-progress.
bool ShowProgress(const RunFlags& flags) {
  return !flags.no_progress && std::getenv("CI") == nullptr && ::isatty(STDERR_FILENO);
}

// Rewrites one stderr line in place: '\r', the text, spaces over what a longer line left.
class ProgressPrinter {
 public:
  void Show(const std::string& line) {
    std::string out = "\r" + line;
    if (line.size() < shown_) out += std::string(shown_ - line.size(), ' ');
    shown_ = line.size();
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
  }
  void Clear() {
    if (shown_ == 0) return;
    std::fputs(("\r" + std::string(shown_, ' ') + "\r").c_str(), stderr);
    shown_ = 0;
  }

 private:
  std::size_t shown_ = 0;
};

std::size_t TerminalWidth() {
  struct winsize ws {};
  return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
}

// The watchdog's last resort: the run is stuck even after its launches were killed. Writes a
// report that says so (one error check), then exits 3 without waiting for the stuck thread.
[[noreturn]] void AbandonStalledRun(const std::string& sandbox, const ReportPaths& outputs,
                                    const std::string& why) {
  std::cerr << "\nsandprobe run: " << why << "; the run did not end after its launches were "
            << "killed: giving up (exit 3)\n";
  // Not to stdout: the stuck thread may hold its lock.
  (void)WriteReports({AbandonedRunReport(SANDPROBE_VERSION, sandbox, why)}, outputs,
                     /*skip_stdout=*/true);
  std::_Exit(kExitHarness);
}

bool UseColor(bool no_color, FILE* stream) {
  return !no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(::fileno(stream));
}

// One sandbox of the run: its profile file and the report paths it writes.
struct SandboxRun {
  std::string profile_path;
  ReportPaths outputs;
};

struct SandboxResult {
  std::optional<RunReport> report;  // unset: invalid input found by the run (exit 2)
  int exit_code = 0;
  std::string invalid_input;  // what it was
};

// Runs one sandbox, prints its console text and gate line, writes its reports.
SandboxResult RunOne(const RunFlags& flags, const SandboxRun& sandbox, FailOn fail_on,
                     const std::optional<WaiverFile>& waivers, ProcessLauncher& launcher) {
  RunOptions options{.profile_path = sandbox.profile_path,
                     .policy_path = flags.policy,
                     .suite_paths = flags.suites,
                     .probe_dir = flags.probe_dir,
                     .require_backend = flags.require_backend,
                     .keep_run_dir = flags.keep_run_dir,
                     .tool_version = SANDPROBE_VERSION,
                     .cancel = &g_interrupted,
                     .jobs = flags.jobs,
                     .run_timeout = std::chrono::seconds(flags.timeout_seconds),
                     .selection = flags.selection};
  options.on_stalled = [sandbox](const std::string& why) {
    AbandonStalledRun(sandbox.profile_path, sandbox.outputs, why);
  };
  ProgressPrinter printer;
  if (ShowProgress(flags)) {
    std::size_t width = TerminalWidth();
    options.on_progress = [&printer, width](std::size_t done, std::size_t total,
                                            const std::string& running) {
      printer.Show(RenderProgressLine(done, total, running, width - 1));
    };
  }
  StatusOr<RunReport> report = RunProfile(options, launcher);
  printer.Clear();
  if (!report.ok()) {
    std::cerr << "sandprobe run: " << report.status().message() << "\n";
    if (report.status().code() == StatusCode::kInvalidInput) {
      return {std::nullopt, kExitUsage, report.status().message()};
    }
    // The harness failed before any verdict: the reports still say so, so a CI job that
    // publishes them finds both files and one error in them.
    RunReport failed = HarnessFailureReport(SANDPROBE_VERSION, sandbox.profile_path, "sandprobe.harness",
                                            report.status().message(), false);
    for (const Status& s : WriteReports({failed}, sandbox.outputs)) {
      std::cerr << "sandprobe run: " << s.message() << "\n";
    }
    return {std::move(failed), kExitHarness, ""};
  }
  // With `--json -` (or /dev/stdout, or any other format's "-") stdout carries the report
  // alone; the console summary goes to stderr.
  FILE* console = AnyOutputOnStdout(flags.outputs) ? stderr : stdout;
  if (waivers) ApplyWaivers(*report, *waivers, UtcToday());
  std::string text = RenderConsole(*report, UseColor(flags.no_color, console));
  std::fputs(text.c_str(), console);
  GateResult gate = Gate(*report, fail_on);
  std::fprintf(console, "%s\n", gate.why.c_str());
  std::fflush(console);
  int exit_code = gate.exit_code;
  for (const Status& s : WriteReports({*report}, sandbox.outputs)) {
    std::cerr << "sandprobe run: " << s.message() << "\n";
    exit_code = kExitHarness;
  }
  if (report->interrupted) {
    std::cerr << "sandprobe run: interrupted; unfinished checks are reported as errors\n";
    exit_code = kExitHarness;
  }
  return {std::move(*report), exit_code, ""};
}

// The row of --matrix in ReportFormats(): written once, over every sandbox's report.
std::size_t MatrixFormatIndex() { return static_cast<std::size_t>(FindReportFormat("matrix") - ReportFormats().data()); }

// One SandboxRun per profile. With several, every output but --matrix gets the sandbox's name
// before its extension (one file per run: the JSON report holds one run); stdout cannot be
// split, so "-" is refused for them.
StatusOr<std::vector<SandboxRun>> PlanSandboxRuns(const RunFlags& flags, const std::vector<std::string>& names) {
  std::vector<SandboxRun> runs;
  for (std::size_t i = 0; i < flags.sandboxes.size(); ++i) {
    SandboxRun run{flags.sandboxes[i], flags.outputs};
    run.outputs[MatrixFormatIndex()].clear();
    if (flags.sandboxes.size() > 1) {
      for (std::size_t f = 0; f < run.outputs.size(); ++f) {
        if (run.outputs[f].empty()) continue;
        if (WritesToStdout(run.outputs[f])) {
          return Status::Error(fmt::format("{} {}: with several sandboxes each run writes its own file; "
                                           "name a file (--matrix may go to stdout)",
                                           ReportFormats()[f].flag, run.outputs[f]));
        }
        run.outputs[f] = PerSandboxPath(run.outputs[f], names[i]);
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

int Run(const RunFlags& flags) {
  std::optional<FailOn> fail_on = ParseFailOn(flags.fail_on);
  if (!fail_on) {
    std::cerr << "sandprobe run: --fail-on " << flags.fail_on
              << ": expected critical, high, medium, low, info or none\n";
    return kExitUsage;
  }
  std::optional<WaiverFile> waivers;
  if (!flags.waivers.empty()) {
    StatusOr<WaiverFile> loaded = LoadWaivers(flags.waivers);
    if (!loaded.ok()) return std::cerr << "sandprobe run: " << loaded.status().message() << "\n", kExitUsage;
    waivers = std::move(*loaded);
  }
  // Every profile, policy and suite before the first run: bad input is exit 2 before minutes
  // of runs, not after them.
  StatusOr<std::vector<std::string>> names =
      PreloadRunInputs(flags.sandboxes, flags.policy, flags.suites, KnownFamilies());
  if (!names.ok()) return std::cerr << "sandprobe run: " << names.status().message() << "\n", kExitUsage;
  StatusOr<std::vector<SandboxRun>> runs = PlanSandboxRuns(flags, *names);
  if (!runs.ok()) return std::cerr << "sandprobe run: " << runs.status().message() << "\n", kExitUsage;
  // Before a run of minutes, not after it: a report path that cannot be written is refused.
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const SandboxRun& run : *runs) {
    for (auto& named : NamedOutputs(run.outputs)) outputs.push_back(std::move(named));
  }
  const std::string& matrix_path = flags.outputs[MatrixFormatIndex()];
  if (!matrix_path.empty()) outputs.emplace_back("--matrix", matrix_path);
  if (Status s = CheckReportOutputs(outputs); !s.ok()) {
    std::cerr << "sandprobe run: " << s.message() << "\n";
    return kExitUsage;
  }
  InstallInterruptHandlers();
  ProcessLauncher launcher;
  // Before its own work: what earlier runs left when their sandprobe died. Said on stderr,
  // never fatal (`sandprobe sweep` is the command that reports failures in its exit code).
  for (const SweepSummary& swept : SweepDeadRuns(launcher, {})) {
    std::cerr << "sandprobe run: swept a " << DescribeSweep(swept, /*dry_run=*/false);
  }
  std::vector<RunReport> reports;
  std::vector<int> exit_codes;
  for (const SandboxRun& run : *runs) {
    if (g_interrupted.load()) {  // the rest never start
      std::cerr << "sandprobe run: interrupted; " << runs->size() - reports.size() << " sandbox(es) not run\n";
      exit_codes.push_back(kExitHarness);
      break;
    }
    SandboxResult result = RunOne(flags, run, *fail_on, waivers, launcher);
    exit_codes.push_back(result.exit_code);
    if (result.report) {
      reports.push_back(std::move(*result.report));
    } else {  // invalid input only this run found (its plan): a column that says so
      reports.push_back(HarnessFailureReport(SANDPROBE_VERSION, run.profile_path, "sandprobe.input",
                                             "invalid input: " + result.invalid_input, false));
    }
  }
  if (runs->size() > 1) {
    FILE* console = AnyOutputOnStdout(flags.outputs) ? stderr : stdout;
    std::fputs(("\n" + RenderMatrixConsole(BuildMatrix(reports))).c_str(), console);
    std::fflush(console);
  }
  if (!matrix_path.empty()) {
    if (Status s = WriteMatrixReport(reports, matrix_path); !s.ok()) {
      std::cerr << "sandprobe run: " << s.message() << "\n";
      exit_codes.push_back(kExitHarness);
    }
  }
  int worst = WorstExitCode(exit_codes);
  if (runs->size() > 1) {
    std::fprintf(AnyOutputOnStdout(flags.outputs) ? stderr : stdout,
                 "sandprobe run: %zu of %zu sandboxes run; exit %d (the worst of the runs)\n", reports.size(),
                 runs->size(), worst);
  }
  return worst;
}

struct SweepFlags {
  bool dry_run = false, json = false;
  std::string run_id;
};

// Exit: 0 every dead run swept (or none found), 3 something could not be removed.
int Sweep(const SweepFlags& flags) {
  ProcessLauncher launcher;
  std::vector<SweepSummary> summaries =
      SweepDeadRuns(launcher, {.dry_run = flags.dry_run, .only_run_id = flags.run_id});
  bool incomplete = false;
  nlohmann::json runs = nlohmann::json::array();
  for (const SweepSummary& s : summaries) {
    incomplete = incomplete || !s.errors.empty();
    if (flags.json) runs.push_back(SweepSummaryToJson(s));
    else std::cout << DescribeSweep(s, flags.dry_run);
  }
  if (flags.json) {
    std::cout << nlohmann::json({{"dry_run", flags.dry_run}, {"runs", runs}}).dump(2) << "\n";
  } else if (summaries.empty()) {
    std::cout << "no dead runs\n";
  }
  return incomplete ? kExitHarness : 0;
}

struct DiffFlags {
  std::string old_report, new_report, format = "text";
  bool fail_on_change = false;
};

// Exit: 0 nothing regressed, 1 a regression (or, with --fail-on-change, any change beyond the
// checks' tolerance), 2 bad input.
int Diff(const DiffFlags& flags) {
  auto load = [](const std::string& path) -> StatusOr<nlohmann::json> {
    StatusOr<JsonDocument> doc = JsonDocument::Load(path);
    if (!doc.ok()) return doc.status();
    return doc->root();
  };
  StatusOr<nlohmann::json> before = load(flags.old_report);
  if (!before.ok()) return std::cerr << "sandprobe diff: " << before.status().message() << "\n", kExitUsage;
  StatusOr<nlohmann::json> after = load(flags.new_report);
  if (!after.ok()) return std::cerr << "sandprobe diff: " << after.status().message() << "\n", kExitUsage;
  StatusOr<ReportDiff> diff = DiffReports(*before, *after);
  if (!diff.ok()) return std::cerr << "sandprobe diff: " << diff.status().message() << "\n", kExitUsage;
  if (flags.format == "json") {
    std::cout << DiffToJson(*diff).dump(2) << "\n";
  } else {
    std::cout << RenderDiffText(*diff);
  }
  return DiffExitCode(*diff, flags.fail_on_change);
}

int Validate(const std::vector<std::string>& files, const std::string& data_dir) {
  int failures = 0;
  for (const std::string& file : files) {
    StatusOr<std::string> kind = ValidateFile(file, KnownFamilies());
    if (kind.ok()) {
      std::cout << file << ": ok (" << *kind << ")\n";
    } else {
      std::cerr << kind.status().message() << "\n";
      for (const std::string& more : MoreErrors(kind.status().message(), file, data_dir)) std::cerr << more << "\n";
      ++failures;
    }
  }
  return failures ? kExitUsage : 0;
}

// Lists the JSON files of one data directory with a loader that names each.
void ListDirectory(const std::string& title, const fs::path& dir,
                   const std::function<std::string(const std::string&)>& describe) {
  std::cout << title << ":\n";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) std::cout << "  (none in " << dir.string() << ")\n";
  for (const fs::path& file : files) std::cout << "  " << describe(file.string()) << "\n";
}

int List(const std::string& data_dir) {
  std::cout << "probe families:\n";
  for (const auto& [family, variants] : KnownFamilies()) std::cout << "  " << family << "\n";
  auto row = [](const std::string& name, const std::string& what, const std::string& path) {
    return fmt::format("{:<28} {}  ({})", name, what, fs::path(path).filename().string());
  };
  ListDirectory("suites", fs::path(data_dir) / "suites", [&](const std::string& path) {
    StatusOr<Suite> suite = LoadSuite(path, KnownFamilies());
    return suite.ok() ? row(suite->name, suite->description, path) : "INVALID " + suite.status().message();
  });
  ListDirectory("policies", fs::path(data_dir) / "policies", [&](const std::string& path) {
    StatusOr<Policy> policy = LoadPolicy(path);
    return policy.ok() ? row(policy->name, policy->description, path) : "INVALID " + policy.status().message();
  });
  ListDirectory("sandboxes", fs::path(data_dir) / "sandboxes", [&](const std::string& path) {
    StatusOr<Profile> profile = LoadProfile(path);
    return profile.ok() ? row(profile->name, "[" + std::string(NameOf(profile->backend)) + "] " + profile->description, path)
                        : "INVALID " + profile.status().message();
  });
  return 0;
}

CliHandler SetupRun(CLI::App& run, const CliGlobals& globals) {
  auto flags = std::make_shared<RunFlags>();
  flags->probe_dir = globals.probe_dir;
  run.add_option("--sandbox", flags->sandboxes,
                 "sandbox profile: a name (see list) or a JSON file; several (a,b,c) run one after "
                 "another, each writing its own reports with the sandbox's name before the "
                 "extension (out.json -> out.docker-hardened.json); --matrix lines them up")
      ->required()
      ->delimiter(',');
  run.add_option("--policy", flags->policy, "policy to judge against: a name or a file (default: the profile's)");
  run.add_option("--suite", flags->suites,
                 "suites of checks: names or files, several as a,b (one plan, one report), all = "
                 "every suite in the data dir (default: default)")
      ->delimiter(',');
  const std::span<const ReportFormat> formats = ReportFormats();
  for (std::size_t i = 0; i < formats.size(); ++i) {
    run.add_option(std::string(formats[i].flag), flags->outputs[i], std::string(formats[i].help));
  }
  run.add_option("--fail-on", flags->fail_on,
                 "lowest severity whose fail gives exit 1 (none: report only, exit 0 unless a "
                 "harness error)")
      ->capture_default_str();
  run.add_option("--check", flags->selection.only, "run only checks whose id matches this glob (repeatable)");
  run.add_option("--skip", flags->selection.skip, "leave out checks whose id matches this glob (repeatable)");
  run.add_option("--waivers", flags->waivers, "JSON file of waived fails (check glob, reason, expires)");
  run.add_option("--probe-dir", flags->probe_dir, "host directory holding sandprobe-probe")
      ->capture_default_str();
  run.add_flag("--require-backend", flags->require_backend,
               "a missing backend is an error (exit 3), not a skip");
  run.add_flag("--no-color", flags->no_color, "no ANSI colours (NO_COLOR is honoured too)");
  run.add_flag("--keep-run-dir", flags->keep_run_dir, "keep /var/tmp/sandprobe-<run_id>");
  run.add_option("-j,--jobs", flags->jobs, "shared launches at once (resource probes always run alone)")
      ->check(CLI::Range(1, 64));
  run.add_option("--timeout", flags->timeout_seconds,
                 "limit for the whole run in seconds (0: none); unfinished checks are errors")
      ->check(CLI::Range(0, 86400));
  run.add_flag("--no-progress", flags->no_progress, "no live progress line on a terminal");
  return [flags, &globals]() -> int {
    if (flags->suites.empty()) flags->suites = {"default"};
    StatusOr<std::vector<std::string>> suites = ResolveSuites(flags->suites, globals.data_dir);
    if (!suites.ok()) return std::cerr << "sandprobe run: " << suites.status().message() << "\n", kExitUsage;
    flags->suites = std::move(*suites);
    std::string no_suite;  // resolved above
    for (std::string& sandbox : flags->sandboxes) {
      if (Status s = ResolveRunInputs(globals.data_dir, sandbox, flags->policy, no_suite); !s.ok()) {
        return std::cerr << "sandprobe run: " << s.message() << "\n", kExitUsage;
      }
    }
    return Run(*flags);
  };
}

CliHandler SetupValidate(CLI::App& validate, const CliGlobals& globals) {
  auto files = std::make_shared<std::vector<std::string>>();
  validate.add_option("files", *files, "JSON files, or names of built-in sandboxes, policies, suites")->required();
  return [files, &globals] { return Validate(ResolveValidateArgs(*files, globals.data_dir), globals.data_dir); };
}

CliHandler SetupList(CLI::App&, const CliGlobals& globals) {
  return [&globals] { return List(globals.data_dir); };
}

CliHandler SetupDiff(CLI::App& diff, const CliGlobals&) {
  auto flags = std::make_shared<DiffFlags>();
  diff.add_option("old", flags->old_report, "the earlier JSON report")->required();
  diff.add_option("new", flags->new_report, "the later JSON report")->required();
  diff.add_option("--format", flags->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  diff.add_flag("--fail-on-change", flags->fail_on_change,
                "exit 1 on any change beyond the checks' tolerance, not only on a regression");
  return [flags] { return Diff(*flags); };
}

CliHandler SetupSweep(CLI::App& sweep, const CliGlobals&) {
  auto flags = std::make_shared<SweepFlags>();
  sweep.add_flag("--dry-run", flags->dry_run, "only list what would be removed");
  sweep.add_flag("--json", flags->json, "print the summary as JSON");
  sweep.add_option("--run-id", flags->run_id, "sweep only this run (when it is dead)");
  return [flags] { return Sweep(*flags); };
}

// The subcommands, in the order `--help` lists them.
constexpr CliCommand kCommands[] = {
    {"run", "run the probes in a sandbox and judge them", SetupRun},
    {"validate", "check profiles, policies and suites", SetupValidate},
    {"list", "probe families, suites, policies and sandboxes", SetupList},
    {"diff", "checks whose verdict or measured value changed between two JSON reports", SetupDiff},
    {"sweep", "clean up after runs whose sandprobe died: their sandboxes, processes, run dirs",
     SetupSweep},
    {"report", "judge a recorded run (a JSON report) again, against another policy, launching nothing",
     SetupReport},
    {"infer", "the policy a recorded run's sandbox actually enforces, as a policy file", SetupInfer},
};

int Main(int argc, char** argv) {
  CLI::App app{"sandprobe: checks that a sandbox enforces the policy it declares"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("sandprobe {} (commit {}, built {})", SANDPROBE_VERSION,
                                                SANDPROBE_BUILD_COMMIT, SANDPROBE_BUILD_DATE));
  // Relative to this binary: an install's share/ and lib/, or the build tree's checkout.
  // argv[0] only when /proc is not there to say where this binary is.
  const std::string self = SelfExecutable();
  const DataPaths found = DiscoverDataPaths(!self.empty() || argc == 0 ? self : argv[0]);
  CliGlobals globals{.data_dir = found.data_dir, .probe_dir = found.probe_dir};
  // No default shown: --help feeds the man page, which must not name the build machine's paths.
  app.add_option("--data-dir", globals.data_dir,
                 "where suites/, policies/ and sandboxes/ live (default: share/sandprobe beside "
                 "the binary's bin/, or the checkout of a build tree)");
  std::vector<std::pair<CLI::App*, CliHandler>> handlers;
  for (const CliCommand& command : kCommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    handlers.emplace_back(sub, command.setup(*sub, globals));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  for (const auto& [sub, handler] : handlers) {
    if (*sub) return handler();
  }
  return kExitUsage;
}

}  // namespace
}  // namespace sandprobe

int main(int argc, char** argv) {
  // First: orphans of anything sandprobe launches come back to it (not to init), so the
  // launcher can kill what escaped a launch's process group.
  if (sandprobe::Status s = sandprobe::BecomeChildSubreaper(); !s.ok()) {
    std::cerr << "sandprobe: warning: " << s.message() << "; escaped processes cannot be reaped\n";
  }
  return sandprobe::Main(argc, argv);
}
