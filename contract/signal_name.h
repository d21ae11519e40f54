// SignalName: the symbolic name of a signal, as probes report it in facts ("signal",
// res.memory's "stopped_by"): one spelling on every side, glibc's sigabbrev_np with "SIG" in
// front, so the host compares names as strings.
#pragma once

#include <string>

namespace sandprobe {

// "SIGKILL" for SIGKILL, "SIGSYS" for SIGSYS; "SIG<number>" (e.g. "SIG40") for a signal without
// a name (a real-time signal).
std::string SignalName(int sig);

}  // namespace sandprobe
