// The fixed costs a witness adds to every run of its suite, with the real launcher:
//  - priv: start the canary process and wait until the harness sees it, then end it. It used
//    to poll /proc every 20 ms for the start and the launcher's cancel every 50 ms for the
//    end; it now waits on the launcher's on_started event and ends through a cancel eventfd.
//  - net (a bwrap profile): find the bridge canary's address and bind the listeners. It used
//    to ask `docker network inspect bridge`; it now reads docker0 from the host's interface
//    table (a docker sandbox asks docker too, beside the launches: its Engine API where the
//    docker CLI would use the default socket, else the CLI).
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "launch/launcher.h"
#include "load/profile.h"
#include "launch/run_registry.h"
#include "witnesses/witness.h"
#include "witnesses/witness_docker_engine.h"

namespace sandprobe {
namespace {

// Starts `witness`; on failure marks the benchmark skipped (with why) and returns null.
std::unique_ptr<RunWitness> StartOrSkip(benchmark::State& state, const char* witness, const WitnessSetup& setup) {
  const WitnessRow* row = FindWitness(witness);
  if (row == nullptr) std::abort();
  StatusOr<std::unique_ptr<RunWitness>> started = row->start(setup);
  if (!started.ok()) {
    state.SkipWithError(started.status().message().c_str());
    return nullptr;
  }
  return std::move(*started);
}

std::string ClaimedRunDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sandprobe-wbench-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  if (!ClaimRunDir(dir, "/bench/profile.json").ok()) std::abort();
  return dir;
}

// How the net witness asks docker (witness_docker_engine.h).
enum class AskDocker { kCli, kEngineApi };

void BM_WitnessStartStop(benchmark::State& state, const char* witness, const char* backend,
                         AskDocker ask = AskDocker::kCli) {
  std::string run_dir = ClaimedRunDir();
  Profile profile;
  profile.name = "bench";
  profile.backend = ValueOf<Backend>(backend).value_or(Backend::kOther);  // no `version`: the priv witness runs no version command
  ProcessLauncher launcher;
  for (auto _ : state) {
    WitnessSetup setup{"r", run_dir, profile, launcher, "benchtoken"};
    if (ask == AskDocker::kEngineApi) setup.docker_engine = AskDockerEngine;
    std::unique_ptr<RunWitness> started = StartOrSkip(state, witness, setup);
    if (!started) break;
    benchmark::DoNotOptimize(started->PlanValues());
    benchmark::DoNotOptimize(started->Collect());
  }  // destroyed here: the canary process ended, the listeners closed
  std::filesystem::remove_all(run_dir);
}
BENCHMARK_CAPTURE(BM_WitnessStartStop, priv, "priv", "bwrap")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WitnessStartStop, net_bwrap, "net", "bwrap")->Unit(benchmark::kMillisecond);
// The same witness for a sandbox docker runs: docker is asked too, beside the launches, and
// waited for at Collect(): through its CLI, or (what a run does where the CLI uses the default
// socket) its Engine API.
BENCHMARK_CAPTURE(BM_WitnessStartStop, net_docker_cli, "net", "docker")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WitnessStartStop, net_docker_api, "net", "docker", AskDocker::kEngineApi)
    ->Unit(benchmark::kMillisecond);

// What a witness costs before the first launch can start (the run's critical path): its start
// alone; Collect and the end are outside the timing. For a docker sandbox, `docker version`
// (priv) and `docker network inspect bridge` (net) used to run here; they now run beside the
// launches, so these measure the start without them.
void BM_WitnessStartOnly(benchmark::State& state, const char* witness) {
  std::string run_dir = ClaimedRunDir();
  Profile profile;
  profile.name = "bench";
  profile.backend = Backend::kDocker;
  profile.version = {"docker", "version", "--format", "{{.Server.Version}}"};
  ProcessLauncher launcher;
  for (auto _ : state) {
    std::unique_ptr<RunWitness> started = StartOrSkip(state, witness, {"r", run_dir, profile, launcher, "benchtoken"});
    if (!started) break;
    state.PauseTiming();
    benchmark::DoNotOptimize(started->Collect());
    started.reset();
    state.ResumeTiming();
  }
  std::filesystem::remove_all(run_dir);
}
BENCHMARK_CAPTURE(BM_WitnessStartOnly, priv_docker, "priv")->Unit(benchmark::kMillisecond)->Iterations(30);
BENCHMARK_CAPTURE(BM_WitnessStartOnly, net_docker, "net")->Unit(benchmark::kMillisecond)->Iterations(30);

}  // namespace
}  // namespace sandprobe
