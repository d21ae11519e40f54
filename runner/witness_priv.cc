// The privilege witnesses. (None yet.)
#include "runner/witness.h"

namespace sandprobe {

std::vector<WitnessRow> PrivilegeWitnesses() { return {}; }

}  // namespace sandprobe
