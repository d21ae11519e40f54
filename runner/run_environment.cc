#include "runner/run_environment.h"

#include <ctime>

#include "runner/run_registry.h"
#include "runner/witnesses.h"

namespace sandprobe {
namespace {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace

RunEnvironment RealRunEnvironment(Launcher& launcher) {
  return RunEnvironment{.launcher = launcher,
                        .run_dir_parent = RunDirParent(),
                        .clock = [] { return std::chrono::steady_clock::now(); },
                        .utc_now = UtcNow,
                        .random_hex = RandomHex,
                        .witness_table = WitnessTable()};
}

}  // namespace sandprobe
