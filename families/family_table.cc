// The family table: every probe family the host side can plan and judge. A family group adds
// its rows here (and its probe in probes/probe_main.cc).
#include "families/family.h"

namespace sandprobe {

// Defined in family_*.cc, one file per family group.
std::vector<FamilyRow> FilesystemFamilies();
std::vector<FamilyRow> EnvFamilies();
std::vector<FamilyRow> NetworkFamilies();
std::vector<FamilyRow> PrivilegeFamilies();
std::vector<FamilyRow> ResourceFamilies();
std::vector<FamilyRow> PersistenceFamilies();
std::vector<FamilyRow> LanguageFamilies();

const std::vector<FamilyRow>& FamilyTable() {
  static const std::vector<FamilyRow> kTable = [] {
    std::vector<FamilyRow> rows;
    for (auto group : {FilesystemFamilies, EnvFamilies, NetworkFamilies, PrivilegeFamilies,
                       ResourceFamilies, PersistenceFamilies, LanguageFamilies}) {
      for (FamilyRow& row : group()) rows.push_back(row);
    }
    return rows;
  }();
  return kTable;
}

}  // namespace sandprobe
