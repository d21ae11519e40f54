// The resource probe families. (None yet.)
#include "probes/families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> ResourceProbeFamilies() { return {}; }

}  // namespace sandprobe
