// The fixed cost every `sandprobe run` pays before its first launch: starting the process, and
// loading the profile, policy and suites. A bwrap launch takes ~7 ms, so each part matters.
//  - ProcessStart: spawn and reap `CLI --version` (main() does nothing else) beside `/bin/true`,
//    the floor of any process start. CLI is the build's sandprobe, or $SANDPROBE_BENCH_CLI (e.g.
//    an older build, to compare).
//  - LoadRunInputs: bwrap-strict, its policy and the default suite, loaded once. `sandprobe run`
//    paid this twice (PreloadRunInputs, then the run) until the run took the preloaded inputs.
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "families/plan.h"
#include "launch/launcher.h"
#include "load/run_inputs.h"

namespace sandprobe {
namespace {

const std::string kData = SANDPROBE_SOURCE_DIR;

void BM_ProcessStart(benchmark::State& state, std::vector<std::string> argv) {
  if (argv[0] == "cli") {
    const char* other = std::getenv("SANDPROBE_BENCH_CLI");
    argv[0] = other != nullptr ? other : SANDPROBE_BINARY_DIR "/sandprobe";
  }
  ProcessLauncher launcher;
  LaunchSpec spec;
  spec.argv = argv;
  for (auto _ : state) {
    StatusOr<LaunchResult> r = launcher.Launch(spec);
    if (!r.ok() || r->exit_code != 0) {
      state.SkipWithError((argv[0] + ": did not start and exit 0").c_str());
      break;
    }
  }
  state.SetLabel(argv[0]);
}
BENCHMARK_CAPTURE(BM_ProcessStart, true, std::vector<std::string>{"/bin/true"})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ProcessStart, cli, std::vector<std::string>{"cli", "--version"})->Unit(benchmark::kMillisecond);

void BM_LoadRunInputs(benchmark::State& state) {
  for (auto _ : state) {
    StatusOr<RunInputs> inputs = LoadRunInputs(kData + "/sandboxes/bwrap-strict.json", "",
                                               {kData + "/suites/default.json"}, KnownFamilies());
    if (!inputs.ok()) {
      state.SkipWithError(inputs.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(inputs);
  }
}
BENCHMARK(BM_LoadRunInputs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sandprobe
