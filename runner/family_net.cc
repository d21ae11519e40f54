// The network families, host side. (None yet.)
#include "runner/family.h"

namespace sandprobe {

std::vector<FamilyRow> NetworkFamilies() { return {}; }

}  // namespace sandprobe
