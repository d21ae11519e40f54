// The resource families, host side. (None yet.)
#include "runner/family.h"

namespace sandprobe {

std::vector<FamilyRow> ResourceFamilies() { return {}; }

}  // namespace sandprobe
