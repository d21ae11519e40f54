// The network probe families. (None yet.)
#include "probes/families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> NetworkProbeFamilies() { return {}; }

}  // namespace sandprobe
