// `sandprobe mutate`: the row of kCommands[] (main.cc) that audits one-variable mutants of a
// profile beside the profile itself (mutate/mutate.h) and reports the ones no verdict told
// apart. Its flags, outputs and exit code live in cli_mutate.cc.
#pragma once

#include "cli/cli_command.h"

namespace sandprobe {

CliHandler SetupMutate(CLI::App& command, const CliGlobals& globals);

}  // namespace sandprobe
