#include "witnesses/witness.h"

namespace sandprobe {

// Defined in witness_*.cc, one file per group.
std::vector<WitnessRow> NetworkWitnesses();
std::vector<WitnessRow> PrivilegeWitnesses();
std::vector<WitnessRow> PersistenceWitnesses();
std::vector<WitnessRow> FilesystemWitnesses();
std::vector<WitnessRow> HostMountWitnesses();  // witness_host_mounts.cc

const std::vector<WitnessRow>& WitnessTable() {
  static const std::vector<WitnessRow> kTable = [] {
    std::vector<WitnessRow> rows;
    for (auto group : {NetworkWitnesses, PrivilegeWitnesses, PersistenceWitnesses,
                       FilesystemWitnesses, HostMountWitnesses}) {
      for (WitnessRow& row : group()) rows.push_back(std::move(row));
    }
    return rows;
  }();
  return kTable;
}

const WitnessRow* FindWitness(std::string_view name) {
  for (const WitnessRow& row : WitnessTable()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

}  // namespace sandprobe
