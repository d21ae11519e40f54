#include "contract/signal_name.h"

#include <string.h>

namespace sandprobe {

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);  // glibc 2.32+: "KILL"; null for real-time signals
  return std::string("SIG") + (abbrev != nullptr ? abbrev : std::to_string(sig));
}

}  // namespace sandprobe
