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
#include <fstream>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "launch/launcher.h"
#include "load/profile.h"
#include "launch/run_registry.h"
#include "witnesses/witness.h"
#include "contract/launch_control.h"
#include "contract/frame_reader.h"
#include "witnesses/witness_canary_watch.h"
#include "witnesses/witness_docker_engine.h"
#include "witnesses/witness_launch_challenge.h"
#include "witnesses/witnesses.h"

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

// Issue 25's budget: what the host's own evidence adds to each launch, under 1 ms.
//  - canary_watch: after a launch, the run's canary watch reads its inotify queue and
//    re-verifies the canary (lstat, pread and SHA-256 through the descriptor opened first).
//  - launch_control: the launch's fresh positive control: plant the file, start its watch,
//    judge the hello's answer against the watch, remove the file (the probe's read is the
//    sandbox's time, not counted: the answer is computed here as the probe would).
void BM_CanaryWatchPerLaunch(benchmark::State& state) {
  std::string dir = ClaimedRunDir();
  StatusOr<CanaryFile> canary = CanaryFile::Plant(dir);
  if (!canary.ok()) {
    state.SkipWithError(canary.status().message().c_str());
    return;
  }
  std::unique_ptr<CanaryWatch> watch = CanaryWatch::Start(canary->path(), canary->sha256());
  for (auto _ : state) watch->AfterLaunch("L1");
  watch->Stop();
  nlohmann::json seen = watch->Collect();
  if (!seen.value("watched", false) || !seen["changes"].empty()) state.SkipWithError(seen.dump().c_str());
  watch.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CanaryWatchPerLaunch)->Unit(benchmark::kMicrosecond);

void BM_LaunchControlPerLaunch(benchmark::State& state) {
  std::string dir = ClaimedRunDir();
  const ChallengeSite site{dir, "/workspace"};
  const std::string nonce = "0123456789abcdef";
  int launch = 0;
  for (auto _ : state) {
    const std::string content(64, 'a' + (launch % 6));
    StatusOr<LaunchChallenge> control =
        LaunchChallenge::Plant(site, ".sandprobe-control-bench" + std::to_string(launch++), content);
    if (!control.ok()) {
      state.SkipWithError(control.status().message().c_str());
      break;
    }
    std::ifstream(control->host_path()).get();  // the probe's open, which the watch must see
    ProbeFrames frames;
    frames.facts.push_back({{"family", "hello"}, {std::string(kControlAnswerKey), ControlAnswer(nonce, content)}});
    nlohmann::json judged = control->Judge(frames, nonce);
    if (judged.contains("failed")) {
      state.SkipWithError(judged.dump().c_str());
      break;
    }
  }  // each control's file and watch go with it
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LaunchControlPerLaunch)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sandprobe
