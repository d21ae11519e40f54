#include "run/run_environment.h"

#include "launch/run_registry.h"
#include "witnesses/witness_docker_engine.h"
#include "witnesses/witnesses.h"

namespace sandprobe {

RunEnvironment RealRunEnvironment(Launcher& launcher) {
  return RunEnvironment{.launcher = launcher,
                        .run_dir_parent = RunDirParent(),
                        .clock = [] { return std::chrono::steady_clock::now(); },
                        .utc_now = UtcNow,
                        .random_hex = RandomHex,
                        .witness_table = WitnessTable(),
                        .docker_engine = AskDockerEngine};
}

}  // namespace sandprobe
