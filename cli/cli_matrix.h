// `sandprobe matrix REPORT.json...`: saved reports (one per sandbox and node, `run --json`)
// merged into the checks x sandboxes matrix a multi-sandbox `run` prints. A row of kCommands[]
// in main.cc.
#pragma once

#include "cli/cli_command.h"

namespace sandprobe {

CliHandler SetupMatrix(CLI::App& command, const CliGlobals& globals);

}  // namespace sandprobe
