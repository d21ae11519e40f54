// The subcommands that work from a recorded JSON report, launching nothing: `report` (re-judge
// and re-render a run, recorded/rejudge.h) and `infer` (the policy the run's sandbox enforces,
// recorded/infer.h). Rows of kCommands[] in main.cc.
#pragma once

#include "cli/cli_command.h"

namespace sandprobe {

CliHandler SetupReport(CLI::App& command, const CliGlobals& globals);
CliHandler SetupInfer(CLI::App& command, const CliGlobals& globals);

}  // namespace sandprobe
