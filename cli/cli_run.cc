// `sandprobe run`: parses the flags, loads every input, then hands the sandboxes to
// SandboxMatrixRun (run/sandbox_matrix_run.h), which runs, publishes and combines them;
// SIGINT/SIGTERM/SIGHUP/SIGQUIT end it with partial reports. A row of kCommands[] in main.cc.
#include "cli/cli_run.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <span>

#include <CLI/CLI.hpp>

#include "cli/cli_inputs.h"
#include "cli/color_choice.h"
#include "contract/exit_code.h"
#include "cli/console_width.h"
#include "reports/console_report.h"
#include "reports/publish.h"
#include "reports/progress_line.h"
#include "reports/report_format.h"
#include "load/data_dir.h"
#include "gate/check_selection.h"
#include "gate/gate.h"
#include "launch/launcher.h"
#include "families/plan.h"
#include "load/profile.h"
#include "run/probe_builds.h"
#include "run/run.h"
#include "run/run_environment.h"
#include "run/sandbox_matrix_run.h"
#include "run/run_sweep.h"
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
  std::string policy, probe_dir, layout_probe_dir, fail_on = "low";
  ReportPaths outputs = ReportPaths(ReportFormats().size());  // one per ReportFormats() row
  bool allow_missing_backend = false, require_backend = false;  // the latter: accepted, the default
  bool no_color = false, keep_run_dir = false, no_progress = false;
  int jobs = 1;
  int timeout_seconds = 0;
  CheckSelection selection;  // --check, --skip
  std::string waivers;       // --waivers FILE
  std::string host_root;     // --host-root DIR ("": the harness's own root)
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
[[noreturn]] void AbandonStalledRun(const MatrixSandbox& sandbox, const std::string& why) {
  std::cerr << "\nsandprobe run: " << why << "; the run did not end after its launches were "
            << "killed: giving up (exit 3)\n";
  // Not to stdout: the stuck thread may hold its lock.
  (void)WriteReports({AbandonedRunReport(SANDPROBE_VERSION, sandbox.profile_path, why)}, sandbox.outputs,
                     /*skip_stdout=*/true);
  std::_Exit(kExitHarness);
}

int Run(const RunFlags& flags) {
  const std::optional<FailOn> fail_on = ParseFailOnFlag("sandprobe run", flags.fail_on, stderr);
  if (!fail_on) return kExitUsage;
  if (Status s = CheckSelectionGlobs(flags.selection); !s.ok()) {
    return std::cerr << "sandprobe run: " << s.message() << "\n", kExitUsage;
  }
  std::optional<WaiverFile> waivers;
  if (!flags.waivers.empty()) {
    StatusOr<WaiverFile> loaded = LoadWaivers(flags.waivers);
    if (!loaded.ok()) return std::cerr << "sandprobe run: " << loaded.status().message() << "\n", kExitUsage;
    waivers = std::move(*loaded);
  }
  // Every profile, policy and suite before the first run: bad input is exit 2 before minutes
  // of runs, not after them.
  StatusOr<std::vector<RunInputs>> inputs =
      PreloadRunInputs(flags.sandboxes, flags.policy, flags.suites, KnownFamilies());
  if (!inputs.ok()) return std::cerr << "sandprobe run: " << inputs.status().message() << "\n", kExitUsage;
  // A policy that says two opposite things loads, judged by one of them: said before the run.
  for (const RunInputs& input : *inputs) {
    for (const PolicyContradiction& c : input.policy.contradictions) {
      std::cerr << "sandprobe run: " << DescribeContradiction(c) << "\n";
    }
  }
  StatusOr<std::vector<MatrixSandbox>> sandboxes = PlanMatrixSandboxes(flags.sandboxes, flags.outputs, std::move(*inputs));
  if (!sandboxes.ok()) return std::cerr << "sandprobe run: " << sandboxes.status().message() << "\n", kExitUsage;
  // Before a run of minutes, not after it: a report path that cannot be written is refused.
  const std::string& matrix_path = MatrixOutputPath(flags.outputs);
  if (Status s = CheckMatrixOutputs(*sandboxes, matrix_path); !s.ok()) {
    std::cerr << "sandprobe run: " << s.message() << "\n";
    return kExitUsage;
  }
  StatusOr<HostView> host = flags.host_root.empty() ? StatusOr<HostView>(HostView()) : HostView::Through(flags.host_root);
  if (!host.ok()) {
    std::cerr << "sandprobe run: " << host.status().message() << "\n";
    return kExitUsage;
  }
  InstallInterruptHandlers();
  ProcessLauncher launcher;
  // Before its own work: what earlier runs left when their sandprobe died. Said on stderr,
  // never fatal (`sandprobe sweep` is the command that reports failures in its exit code).
  for (const SweepSummary& swept : SweepDeadRuns(launcher, {})) {
    std::cerr << "sandprobe run: swept a " << DescribeSweep(swept, /*dry_run=*/false);
  }
  // With `--json -` (or /dev/stdout, or any other format's "-") stdout carries the report
  // alone; the console summary, the matrix and the closing line go to stderr.
  FILE* console = AnyOutputOnStdout(flags.outputs) ? stderr : stdout;
  SandboxMatrixOptions options{
      .run = {.policy_path = flags.policy,
              .suite_paths = flags.suites,
              .probe_dir = flags.probe_dir,
              .layout_probe_dir = flags.layout_probe_dir,
              .probe_builds = BuiltProbes(),
              .allow_missing_backend = flags.allow_missing_backend,
              .keep_run_dir = flags.keep_run_dir,
              .host = *host,
              .tool_version = SANDPROBE_VERSION,
              .cancel = &g_interrupted,
              .jobs = flags.jobs,
              .run_timeout = std::chrono::seconds(flags.timeout_seconds),
              .selection = flags.selection},
      .matrix_path = matrix_path,
      .publish = {.program = "sandprobe run", .waivers = waivers ? &*waivers : nullptr, .today = UtcToday(),
                  .fail_on = *fail_on,
                  .layout = {.color = UseColor(flags.no_color, console), .width = ConsoleWidth(console)},
                  .console = console},
      .on_stalled = AbandonStalledRun};
  ProgressPrinter printer;
  if (ShowProgress(flags)) {
    std::size_t width = TerminalWidth();
    options.run.on_progress = [&printer, width](std::size_t done, std::size_t total, const std::string& running) {
      printer.Show(RenderProgressLine(done, total, running, width - 1));
    };
    options.on_run_ended = [&printer] { printer.Clear(); };
  }
  const RunEnvironment env = RealRunEnvironment(launcher);
  return SandboxMatrixRun(std::move(*sandboxes), std::move(options), env).Run().exit_code;
}

}  // namespace

CliHandler SetupRun(CLI::App& run, const CliGlobals& globals) {
  auto flags = std::make_shared<RunFlags>();
  flags->layout_probe_dir = globals.probe_dir;
  run.add_option("--sandbox", flags->sandboxes,
                 "sandbox profile: a name (see list) or a JSON file; several (a,b,c) run one after "
                 "another, each writing its own reports with the sandbox's name before the "
                 "extension (out.json -> out.docker-hardened.json); --matrix lines them up")
      ->required();
  run.add_option("--policy", flags->policy, "policy to judge against: a name or a file (default: the profile's)");
  run.add_option("--suite", flags->suites,
                 "suites of checks: names or files, several as a,b (one plan, one report), all = "
                 "every suite in the data dir (default: default)");
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
  run.add_option("--probe-dir", flags->probe_dir,
                 "host directory holding the probe the profile names (sandprobe-probe for native, "
                 "sandprobe-probe.js for js; default: this build's or install's); it must be the probe "
                 "this build made (checked by its SHA-256, exit 2 when not)");
  run.add_flag("--allow-missing-backend", flags->allow_missing_backend,
               "a backend whose preflight fails (not installed, no permission, daemon down) makes its checks "
               "skips, not errors: for a matrix column that may be absent. A run that judged nothing is "
               "still exit 3, and a backend that went away mid-run is an error either way");
  run.add_flag("--require-backend", flags->require_backend,
               "accepted for compatibility: a backend whose preflight fails is an error (exit 3) by default")
      ->excludes("--allow-missing-backend");
  run.add_flag("--no-color", flags->no_color, "no ANSI colours (also NO_COLOR=1; FORCE_COLOR=1 colours a pipe)");
  run.add_flag("--keep-run-dir", flags->keep_run_dir, "keep /var/tmp/sandprobe-<run_id>");
  run.add_option("--host-root", flags->host_root,
                 "read the host's own files and mount table (what a sandbox's view is compared with) "
                 "under DIR, not the harness's root: /proc/1/root when sandprobe runs in a pod with "
                 "hostPID on the node it audits (docs/fleet.md)");
  run.add_option("-j,--jobs", flags->jobs, "shared launches at once (the CPU and wall-clock probes always run alone)")
      ->check(CLI::Range(1, 64));
  run.add_option("--timeout", flags->timeout_seconds,
                 "limit for the whole run in seconds (0: none); unfinished checks are errors")
      ->check(CLI::Range(0, 86400));
  run.add_flag("--no-progress", flags->no_progress, "no live progress line on a terminal");
  return [flags, &globals]() -> int {
    // Split here, not by CLI11's delimiter, which drops an empty item ("host,") without a word.
    for (auto [option, list] : {std::pair{"--sandbox", &flags->sandboxes}, std::pair{"--suite", &flags->suites}}) {
      StatusOr<std::vector<std::string>> items = SplitCommaList(option, *list);
      if (!items.ok()) return std::cerr << "sandprobe run: " << items.status().message() << "\n", kExitUsage;
      *list = std::move(*items);
    }
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

}  // namespace sandprobe
