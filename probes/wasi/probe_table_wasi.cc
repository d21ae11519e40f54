// The wasm32-wasi probe's family table, in place of probes/probe_table.cc: the families WASI
// (snapshot preview1) can express, the same code as the native probe's except res.memory and
// res.cpu (resource_wasi.cc). The rest (fs.mounts, net.*, priv.*, res.pids/disk/fds) need a
// mount table, sockets, processes or /proc, which WASI does not have: they are not in the
// hello's families, and the harness plans them as skip "not expressible in wasi".
#include "probes/families.h"
#include "probes/resource_families.h"

namespace sandprobe {

// persist.cc's two families (its PersistenceProbeFamilies() rows), named here so this table is
// the one list of what the wasi probe implements (probes/wasi/CMakeLists.txt reads it).
std::string CheckPersistPlantArgs(const FamilyArgs& args);
std::string CheckPersistCheckArgs(const FamilyArgs& args);
void RunPersistPlant(const ProbeContext& ctx, const FamilyArgs& args);
void RunPersistCheck(const ProbeContext& ctx, const FamilyArgs& args);

const std::vector<ProbeFamilyRow>& ProbeFamilyTable() {
  static const std::vector<ProbeFamilyRow> kTable = {
      {"fs.read", "PATH...", CheckFsReadArgs, RunFsRead},
      {"fs.write", "DIR...", CheckFsWriteArgs, RunFsWrite},
      {"fs.alias", "--scratch DIR PATH...", CheckFsAliasArgs, RunFsAlias},
      {"env.secret", "PREFIX", CheckEnvSecretArgs, RunEnvSecret},
      {"res.memory", "--ceiling-mib N [--every-mib K]", CheckResMemoryArgs, RunResMemory},
      {"res.cpu", "[--threads N] [--window-ms MS] [--stop-above-mc H] [--edge-ms E] [--min-window-ms W]",
       CheckResCpuArgs, RunResCpu},
      {"res.wall", "--ceiling-seconds N", CheckResWallArgs, RunResWall},
      {"persist.plant", "--token T [--background-seconds N] DIR...", CheckPersistPlantArgs, RunPersistPlant},
      {"persist.check", "--token T [--keep] DIR...", CheckPersistCheckArgs, RunPersistCheck},
  };
  return kTable;
}

}  // namespace sandprobe
