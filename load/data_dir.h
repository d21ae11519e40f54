// Built-in data by name: `--sandbox docker-hardened`, `--policy tier-low`, `--suite network`
// name files in the data directory (<data-dir>/sandboxes, policies, suites), the names
// `sandprobe list` prints. A path still works as before.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "contract/probe_runtime.h"
#include "model/status.h"

namespace sandprobe {

// Where a sandprobe binary finds its data and its probe, relative to itself (no checkout path
// is compiled in). Rows in order; the first whose data directory holds suites/ wins, data and
// probe together (an install's data never pairs with a build tree's probe):
//   installed   <bin>/../share/sandprobe   <bin>/../lib/sandprobe   (/usr/bin/sandprobe, the .deb)
//   build tree  <bin>/sandprobe-data       <bin>/probe              (build/sandprobe; CMake links
//                                                                     build/sandprobe-data to the
//                                                                     checkout it was configured from)
struct DataLayout {
  std::string_view name;
  std::string_view data;   // relative to the binary's directory
  std::string_view probe;  // likewise
};
std::span<const DataLayout> DataLayouts();

struct DataPaths {
  std::string data_dir;   // canonical: messages name /usr/share/sandprobe, not .../bin/../share
  std::string probe_dir;  // the native probe's; the other runtimes' beside it (ProbeDirFor)
};

// The directory of `runtime`'s probe in the layout whose native probe directory is
// `native_probe_dir`: that directory for native, else beside it with the runtime's suffix
// (contract/probe_runtime.h): build/probe-js, /usr/lib/sandprobe-js. Each holds its probe and
// nothing else, since sandboxes bind the whole directory.
std::string ProbeDirFor(const std::string& native_probe_dir, ProbeRuntime runtime);
// The layout that fits the binary at `executable`; with none, the installed row's paths (a
// missing file is then reported at the path an install would have).
DataPaths DiscoverDataPaths(const std::string& executable);
// The running binary (/proc/self/exe, symlinks resolved); "" when it cannot be read.
std::string SelfExecutable();

// Which data directory a name is looked up in.
enum class DataKind { kSandbox, kPolicy, kSuite };
std::string_view DataKindName(DataKind kind);    // "sandbox", "policy", "suite"
std::string_view DataKindSubdir(DataKind kind);  // "sandboxes", "policies", "suites"

// The built-in names of one kind: the stems of <data_dir>/<subdir>/*.json, sorted.
std::vector<std::string> DataNames(DataKind kind, const std::string& data_dir);

// What `arg` means as a --sandbox / --policy / --suite value. A path (it has a '/' or ends in
// ".json") is returned unchanged, so the loader's own error names it. A bare name is
// <data_dir>/<subdir>/<name>.json when that exists, else a file of that name in the current
// directory; neither is invalid input that lists the names there and, when one is close,
// says "did you mean docker-hardened?".
StatusOr<std::string> ResolveDataFile(DataKind kind, const std::string& arg,
                                      const std::string& data_dir);

// The `run` hook: resolves --sandbox, --policy and --suite in place (an empty policy or suite
// stays empty: the profile's policy, the default suite). The first unknown name is the error.
Status ResolveRunInputs(const std::string& data_dir, std::string& sandbox, std::string& policy,
                        std::string& suite);

// `--suite` values (each may be a comma-separated list) as suite files, in the order given,
// each file once. "all" is every suite in <data_dir>/suites (DataNames), so a suite file
// named all.json there is not reachable by name. The first unknown name is the error.
inline constexpr const char* kAllSuites = "all";
StatusOr<std::vector<std::string>> ResolveSuites(const std::vector<std::string>& args,
                                                 const std::string& data_dir);

// For `validate NAME`: every built-in file NAME names (codex is a sandbox and a policy), or
// `arg` itself when it is a path. Unknown: the error lists the names of every kind.
StatusOr<std::vector<std::string>> ResolveAnyDataFile(const std::string& arg,
                                                      const std::string& data_dir);

// `validate`'s arguments with each built-in name replaced by its files (ResolveAnyDataFile);
// paths and unknown names stay as given, so the loader's error names them.
std::vector<std::string> ResolveValidateArgs(const std::vector<std::string>& args,
                                             const std::string& data_dir);

// Edit distance (insertions, deletions, substitutions) for "did you mean".
std::size_t EditDistance(std::string_view a, std::string_view b);
// The nearest of `candidates` to `name` when it is close (distance at most a third of the
// name, at least 1), else "".
std::string NearestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace sandprobe
