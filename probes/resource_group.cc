// The resource families (resource_*.cc): each runs in its own exclusive launch.
#include "probes/resource_families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> ResourceProbeFamilies() {
  return {
      {"res.pids", "--ceiling N", CheckResPidsArgs, RunResPids},
      {"res.memory", "--ceiling-mib N [--every-mib K]", CheckResMemoryArgs, RunResMemory},
      {"res.cpu",
       "[--threads N] [--window-ms MS] [--min-periods K] [--stop-above-mc H] [--edge-ms E] [--min-window-ms W]",
       CheckResCpuArgs, RunResCpu},
      {"res.wall", "--ceiling-seconds N", CheckResWallArgs, RunResWall},
      {"res.disk", "--dir DIR --ceiling-mib N", CheckResDiskArgs, RunResDisk},
      {"res.fds", "--ceiling N", CheckResFdsArgs, RunResFds},
  };
}

}  // namespace sandprobe
