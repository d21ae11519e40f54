#include "runner/run_environment.h"

#include "runner/run_registry.h"
#include "runner/witnesses.h"

namespace sandprobe {

RunEnvironment RealRunEnvironment(Launcher& launcher) {
  return RunEnvironment{.launcher = launcher,
                        .run_dir_parent = RunDirParent(),
                        .clock = [] { return std::chrono::steady_clock::now(); },
                        .utc_now = UtcNow,
                        .random_hex = RandomHex,
                        .witness_table = WitnessTable()};
}

}  // namespace sandprobe
