// The network witnesses. (None yet.)
#include "runner/witness.h"

namespace sandprobe {

std::vector<WitnessRow> NetworkWitnesses() { return {}; }

}  // namespace sandprobe
