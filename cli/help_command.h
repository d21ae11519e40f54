// `sandprobe help [COMMAND]` and `sandprobe completion bash`: subcommands about the CLI itself,
// rows of kCommands like the others. Both read the parent app, so what they print is what the
// parser accepts.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli_command.h"
#include "model/status.h"

namespace sandprobe {

// `help`: the text of `--help` (no COMMAND) or of `COMMAND --help`; an unknown COMMAND is an
// error naming it and the commands (exit 2). `help --commands`: "NAME<TAB>DESCRIPTION" per
// subcommand, for scripts (the man pages are made from it).
CliHandler SetupHelp(CLI::App& help, const CliGlobals& globals);

// `completion bash`: the bash completion script (cli/bash_completion.h) on stdout.
CliHandler SetupCompletion(CLI::App& completion, const CliGlobals& globals);

// The help text of `app`'s subcommand `name` as `--help` prints it, or an error naming `name`
// and listing the subcommands.
StatusOr<std::string> SubcommandHelp(const CLI::App& app, const std::string& name);

}  // namespace sandprobe
