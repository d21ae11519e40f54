// The network family group (see family_net.h).
#include "runner/family_net.h"

namespace sandprobe {

const nlohmann::json* NetObservations(const JudgeInput& in, Verdict& v) {
  auto it = in.witnesses.observed.find("net");
  if (it == in.witnesses.observed.end() || !it->second.is_object()) {
    v.outcome = Outcome::kError;
    v.observed = "the network canary witness reported nothing";
    return nullptr;
  }
  return &it->second;
}

std::vector<FamilyRow> NetworkFamilies() {
  std::vector<FamilyRow> rows = NetworkEgressFamilies();
  for (const FamilyRow& row : NetworkLocalFamilies()) rows.push_back(row);
  return rows;
}

}  // namespace sandprobe
