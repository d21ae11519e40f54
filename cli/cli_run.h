// `sandprobe run`: the row of kCommands[] (main.cc) that launches sandboxes. Its flags, the
// matrix over several sandboxes, the reports and the exit code live in cli_run.cc.
#pragma once

#include "cli/cli_command.h"

namespace sandprobe {

CliHandler SetupRun(CLI::App& command, const CliGlobals& globals);

}  // namespace sandprobe
