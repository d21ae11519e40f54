// The network family group (see family_net.h).
#include "families/family_net.h"

#include "contract/protocol.h"

namespace sandprobe {

// The runtime sockets the probe tries by default (contract/protocol.h, one list for both sides).
const std::vector<std::string>& RuntimeSocketPaths() {
  static const std::vector<std::string> kPaths(kRuntimeSocketPaths.begin(), kRuntimeSocketPaths.end());
  return kPaths;
}

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
  for (const FamilyRow& row : NetworkLabFamilies()) rows.push_back(row);
  for (const FamilyRow& row : NetworkBypassFamilies()) rows.push_back(row);
  return rows;
}

}  // namespace sandprobe
