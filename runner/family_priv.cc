// The privilege families, host side. (None yet.)
#include "runner/family.h"

namespace sandprobe {

std::vector<FamilyRow> PrivilegeFamilies() { return {}; }

}  // namespace sandprobe
