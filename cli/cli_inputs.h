// What the command line itself refuses, before any subcommand runs: values that would read as
// "not given" and change what sandprobe does without a word.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/status.h"

namespace sandprobe {

// Every option of `app` and its subcommands that takes a value refuses an empty one (exit 2,
// naming the option): `--json ""` would otherwise write no report and say nothing, `--policy ""`
// would judge against the profile's own policy.
void RefuseEmptyValues(CLI::App& app);

// A comma-separated option given once or several times (`--sandbox a,b --sandbox c`), split
// into its items. An empty item (`host,`, `a,,b`) is invalid input naming the option and the
// value: CLI11's own delimiter drops it silently.
StatusOr<std::vector<std::string>> SplitCommaList(const std::string& option, const std::vector<std::string>& given);

// The environment sandprobe reads, checked like its flags: SANDPROBE_RUN_ROOT, when set, must be
// an absolute path (anything else was silently replaced by /var/tmp, where the runs of another
// root would then sweep this one's).
Status CheckEnvironment();

}  // namespace sandprobe
