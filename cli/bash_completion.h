// The bash completion script of a CLI11 app, written from the app's own subcommands and
// options (the rows main.cc adds), so it lists exactly what the parser accepts and cannot go
// stale. `sandprobe completion bash` prints it; the .deb installs it as
// share/bash-completion/completions/sandprobe.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace sandprobe {

// A script that, sourced in bash, completes `program`: its subcommands after the program (and
// after `help`), each subcommand's long and short options after a '-', the top-level options
// before the subcommand, and file names for an option's value or a positional argument.
std::string BashCompletionScript(const CLI::App& app, const std::string& program);

}  // namespace sandprobe
