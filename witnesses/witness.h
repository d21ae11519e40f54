// RunWitness: a host-side observer that lives for one run — a canary listener, a canary
// process, a cgroup reader. It may offer values to the planner (addresses the probes should
// try), and after the last launch it reports what it saw. Evaluate reads those observations
// from WitnessFacts::observed[name()]; the report keeps them under "witnesses".
//
// Adding a witness: a witness_*.cc file with a factory + a row in WitnessTable(). The canary
// file and env secret are not RunWitnesses: every run plants them (witnesses.h).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/deadline.h"
#include "launch/launcher.h"
#include "load/profile.h"
#include "model/status.h"
#include "witnesses/witness_host_view.h"

namespace sandprobe {

// GET a path of the docker daemon's Engine API: the body as JSON (witness_docker_engine.h).
using DockerEngine =
    std::function<StatusOr<nlohmann::json>(const std::string& target, std::chrono::milliseconds limit)>;

struct WitnessSetup {
  std::string run_id;
  std::string run_dir;      // host directory the run owns (removed at the end)
  const Profile& profile;
  Launcher& launcher;       // for host-side commands (e.g. `docker network inspect bridge`)
  // A random token for witnesses that must be recognised from inside the sandbox (the canary
  // process carries it in its argv). Unique per run; never the env secret's.
  std::string run_token;
  // The run's deadline (--timeout): a witness's own host commands get what is left of it
  // (HostCommandLimit). Null: no deadline.
  const Deadline* deadline = nullptr;
  // Asks docker's daemon directly where the docker CLI would ask it too (AskDockerEngine); a
  // witness asks the CLI when this is null or fails.
  DockerEngine docker_engine;
  // What the harness hands the sandbox: the host directory holding the probe ({probe_dir}) and
  // the run's workspace ({workspace}); "" when unknown (tests).
  std::string probe_dir;
  std::string workspace;
  // Where the host's own files and mount table are read (--host-root; default: the harness's).
  HostView host;
};

// The limit of a witness's own host command (`docker network inspect`, the backend's version):
// min(`own`, what is left of the run); an error when nothing is left, so it does not start.
inline StatusOr<std::chrono::milliseconds> HostCommandLimit(const WitnessSetup& setup,
                                                            std::chrono::milliseconds own) {
  if (setup.deadline == nullptr) return own;
  const Deadline::Bound bound = setup.deadline->For(own);
  if (bound.nothing_left()) return Status::Error("not started: the run's deadline had passed");
  return bound.limit;
}

// The spec of a witness's own host command (the backend's `version`, `docker network inspect
// bridge`), which runs beside the launches: kept to one CPU. Container CLIs (docker, podman,
// runsc) are Go programs, whose runtime otherwise runs a thread per core and takes CPU from the
// sandbox starting beside it. docker-hardened's privileges probe launch, medians of 25 runs on
// 2 vCPUs: 282 ms alone, 309 ms beside `docker version`, 289 ms beside it with GOMAXPROCS=1
// (nice 19 and SCHED_IDLE gained nothing measurable). Programs that are not Go ignore it.
inline LaunchSpec HostCommandSpec(std::vector<std::string> argv, std::chrono::milliseconds limit) {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = limit;
  spec.extra_env = {{"GOMAXPROCS", "1"}};
  return spec;
}

class RunWitness {
 public:
  virtual ~RunWitness() = default;
  // Key in WitnessFacts::observed, PlanContext::values prefixes and the report.
  virtual std::string name() const = 0;
  // Values the planner may pass to probes, e.g. {"tcp.loopback": "127.0.0.1:40123"}.
  virtual std::map<std::string, std::string> PlanValues() const { return {}; }
  // Right after each probe launch ended (its id: LaunchRecord::id), before the next one: a
  // witness that must look between launches (what a launch left behind) does it here.
  virtual void AfterLaunch(const std::string& launch_id) { (void)launch_id; }
  // After every probe launch of the run, before judgement: what it observed. The witness is
  // destroyed (listeners closed, processes killed) right after.
  virtual nlohmann::json Collect() = 0;
};

struct WitnessRow {
  const char* name;
  // Families that need this witness: it is started only when the suite names one of them.
  std::set<std::string> families;
  StatusOr<std::unique_ptr<RunWitness>> (*start)(const WitnessSetup& setup);
};

// Every witness kind, assembled from one function per group (witness_table.cc).
const std::vector<WitnessRow>& WitnessTable();
// The row named `name` ("net", "priv", ...), or nullptr.
const WitnessRow* FindWitness(std::string_view name);

}  // namespace sandprobe
