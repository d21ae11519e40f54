// The privilege probe families. (None yet.)
#include "probes/families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> PrivilegeProbeFamilies() { return {}; }

}  // namespace sandprobe
