// The subcommands of the `sandprobe` CLI as rows: a name, its help, and a setup that adds the
// subcommand's options to its CLI11 app and returns what runs it once the command line is
// parsed. main.cc only walks the table, so a new subcommand is one function (in its own file
// if it is big) and one row.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace sandprobe {

// Options every subcommand may read (set before any handler runs).
struct CliGlobals {
  std::string data_dir;   // --data-dir: where suites/, policies/ and sandboxes/ live
  std::string probe_dir;  // the data layout's native probe directory (the others beside it)
};

// Runs the parsed subcommand; returns the process exit code (contract/exit_code.h).
using CliHandler = std::function<int()>;

struct CliCommand {
  const char* name;
  const char* help;
  // Adds options to `command` (their storage lives in the returned handler's captures);
  // `globals` is filled when the handler runs, not yet when setup does.
  CliHandler (*setup)(CLI::App& command, const CliGlobals& globals);
};

}  // namespace sandprobe
