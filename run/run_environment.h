// RunEnvironment: what a run takes from the world outside its inputs — where run dirs go, the
// clock, the random source, the launcher and the witness kinds. The CLI uses
// RealRunEnvironment(); unit tests of the run (run/run_test.cc) inject a fake launcher, a
// fake clock, predictable randomness and fake witnesses.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "launch/deadline.h"
#include "launch/launcher.h"
#include "model/utc_time.h"
#include "witnesses/witness.h"

namespace sandprobe {

struct RunEnvironment {
  Launcher& launcher;
  std::string run_dir_parent;  // RunDirParent(): /var/tmp or SANDPROBE_RUN_ROOT
  Deadline::Clock clock;       // steady: durations and the run's deadline
  std::function<UtcTime()> utc_now;  // wall clock: the report's started_at/finished_at
  std::function<std::string(std::size_t bytes)> random_hex;  // run id, nonces, tokens
  const std::vector<WitnessRow>& witness_table;           // WitnessTable()
  DockerEngine docker_engine;  // AskDockerEngine; null: witnesses ask the docker CLI
};

RunEnvironment RealRunEnvironment(Launcher& launcher);

}  // namespace sandprobe
