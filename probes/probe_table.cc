#include "probes/families.h"

namespace sandprobe {

const std::vector<ProbeFamilyRow>& ProbeFamilyTable() {
  static const std::vector<ProbeFamilyRow> kTable = [] {
    std::vector<ProbeFamilyRow> rows;
    for (auto group : {FilesystemProbeFamilies, NetworkProbeFamilies, PrivilegeProbeFamilies,
                       ResourceProbeFamilies, PersistenceProbeFamilies}) {
      for (const ProbeFamilyRow& row : group()) rows.push_back(row);
    }
    return rows;
  }();
  return kTable;
}

}  // namespace sandprobe
