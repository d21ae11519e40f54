// sandprobe: the command line, one row per subcommand (kCommands); `run` lives in cli_run.cc,
// `report` and `infer` in cli_recorded.cc. Only cli/ prints a Status and picks an exit code.
//
// Exit codes: 0 all pass (skips allowed) · 1 a fail at or above --fail-on · 2 usage or invalid
// input · 3 harness error or inconclusive checks (and no fail).
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cli_command.h"
#include "cli/cli_inputs.h"
#include "cli/cli_matrix.h"
#include "cli/cli_mutate.h"
#include "cli/cli_recorded.h"
#include "cli/cli_run.h"
#include "cli/help_command.h"
#include "cli/validate_report.h"
#include "contract/exit_code.h"
#include "families/plan.h"
#include "launch/launcher.h"
#include "load/data_dir.h"
#include "load/data_lint.h"
#include "load/profile.h"
#include "load/suite.h"
#include "mutate/mutation_operators.h"
#include "reports/diff.h"
#include "reports/json_report_read.h"
#include "run/probe_builds.h"
#include "run/run_sweep.h"
#include "sandprobe_build_info.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

struct SweepFlags {
  bool dry_run = false, json = false, forget_unrecorded = false;
  std::string run_id;
};

// Exit: 0 every dead run swept (or none found), 3 something could not be removed.
int Sweep(const SweepFlags& flags) {
  ProcessLauncher launcher;
  std::vector<SweepSummary> summaries =
      SweepDeadRuns(launcher, {.dry_run = flags.dry_run, .only_run_id = flags.run_id, .include_foreign = true,
                               .forget_unrecorded = flags.forget_unrecorded});
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
  if (flags.old_report == "-" && flags.new_report == "-") {
    return std::cerr << "sandprobe diff: OLD and NEW are both stdin (-): name a file for one\n", kExitUsage;
  }
  // What `report` reads: the same reader, size limit and schema check.
  StatusOr<nlohmann::json> before = LoadJsonReport(flags.old_report);
  if (!before.ok()) return std::cerr << "sandprobe diff: " << before.status().message() << "\n", kExitUsage;
  StatusOr<nlohmann::json> after = LoadJsonReport(flags.new_report);
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

// A mutation operator file ("operators" at its top, sandboxes/mutations/) is checked by its own
// loader (and not linted: the lint knows profiles, policies and suites).
std::optional<JsonDocument> MutationOperatorDocument(const std::string& file) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(file);
  if (!doc.ok() || !doc->root().is_object() || !doc->root().contains("operators")) return std::nullopt;
  return std::move(*doc);
}

int Validate(const std::vector<std::string>& files, const std::string& data_dir) {
  int failures = 0;
  for (const std::string& file : files) {
    if (std::optional<StatusOr<std::string>> report = ValidateReportFile(file)) {
      if (report->ok()) {
        std::cout << **report << "\n";
      } else {
        std::cerr << report->status().message() << "\n";
        ++failures;
      }
      continue;
    }
    if (std::optional<JsonDocument> doc = MutationOperatorDocument(file)) {
      StatusOr<MutationOperatorFile> operators = ParseMutationOperators(*doc);
      if (!operators.ok()) {
        std::cerr << operators.status().message() << "\n";
        ++failures;
      } else {
        std::cout << fmt::format("{}: ok (mutation operators {}, {} of them)\n", file, operators->name,
                                 operators->operators.size());
      }
      continue;
    }
    std::vector<std::string> contradictions;
    StatusOr<std::string> kind = ValidateFile(file, KnownFamilies(), &contradictions);
    if (kind.ok()) {
      std::cout << file << ": ok (" << *kind << ")\n";
      for (const std::string& c : contradictions) std::cerr << c << "\n";
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
  // What this build's probes are and express (a profile's "probe"; run/probe_builds.h): the
  // families a runtime lacks are skipped as not expressible in it.
  std::cout << "probes:\n";
  for (const ProbeBuild& build : BuiltProbes()) {
    std::cout << fmt::format("  {:<8} {}  sha256 {}  {} families: {}\n", ProbeRuntimeName(build.runtime),
                             build.build_id, build.sha256, build.families.size(), fmt::join(build.families, " "));
  }
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
  diff.add_option("old", flags->old_report, "the earlier JSON report (- for stdin)")->required();
  diff.add_option("new", flags->new_report, "the later JSON report (- for stdin)")->required();
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
  CLI::Option* run_id = sweep.add_option("--run-id", flags->run_id, "sweep only this run (when it is dead)");
  sweep.add_flag("--forget-unrecorded", flags->forget_unrecorded,
                 "with --run-id: a run an older sandprobe left without recorded sweep commands is swept "
                 "as far as it can be and forgotten (remove its labelled sandboxes by hand first)")
      ->needs(run_id);
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
    {"matrix", "merge saved JSON reports (one per sandbox and node) into one checks x sandboxes matrix",
     SetupMatrix},
    {"mutate", "audit one-variable weakenings of a sandbox beside it; list those no check tells apart",
     SetupMutate},
    // About the CLI itself (cli/help_command.h).
    {"help", "this text, or a command's (help COMMAND): as --help prints it", SetupHelp},
    {"completion", "print the bash completion script (completion bash)", SetupCompletion},
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
                 "the binary's bin/, or the checkout of a build tree)")
      ->check(CLI::ExistingDirectory);
  std::vector<std::pair<CLI::App*, CliHandler>> handlers;
  for (const CliCommand& command : kCommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    handlers.emplace_back(sub, command.setup(*sub, globals));
  }
  RefuseEmptyValues(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (Status s = CheckEnvironment(); !s.ok()) {
    std::cerr << "sandprobe: " << s.message() << "\n";
    return kExitUsage;
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
