// The wasm32-wasi probe's family table, in place of probes/probe_table.cc: the families WASI
// (snapshot preview1) can express, the same code as the native probe's except res.memory and
// res.cpu (resource_wasi.cc). The rest (fs.mounts, net.*, priv.*, res.pids/disk/fds) need a
// mount table, sockets, processes or /proc, which WASI does not have: they are not in the
// hello's families, and the harness plans them as skip "not expressible in wasi".
#include "probes/families.h"
#include "probes/resource_families.h"

namespace sandprobe {

const std::vector<ProbeFamilyRow>& ProbeFamilyTable() {
  static const std::vector<ProbeFamilyRow> kTable = [] {
    std::vector<ProbeFamilyRow> rows = {
        {"fs.read", "PATH...", CheckFsReadArgs, RunFsRead},
        {"fs.write", "DIR...", CheckFsWriteArgs, RunFsWrite},
        {"fs.alias", "--scratch DIR PATH...", CheckFsAliasArgs, RunFsAlias},
        {"env.secret", "PREFIX", CheckEnvSecretArgs, RunEnvSecret},
        {"res.memory", "--ceiling-mib N [--every-mib K]", CheckResMemoryArgs, RunResMemory},
        {"res.cpu", "[--threads N] [--window-ms MS] [--stop-above-mc H] [--edge-ms E] [--min-window-ms W]",
         CheckResCpuArgs, RunResCpu},
        {"res.wall", "--ceiling-seconds N", CheckResWallArgs, RunResWall},
    };
    for (const ProbeFamilyRow& row : PersistenceProbeFamilies()) rows.push_back(row);
    return rows;
  }();
  return kTable;
}

}  // namespace sandprobe
