// Host processes by argv: how witnesses (and the sweep) find processes a run is responsible
// for — a canary, a probe's background process — by a token in their command line.
#pragma once

#include <string>
#include <vector>

namespace sandprobe {

struct HostProcess {
  long pid = 0;
  std::string argv;  // the command line, NULs shown as spaces
  // In the same pid namespace as the harness (the host's, when the harness runs on the host);
  // false for a process inside a container's or bwrap's own pid namespace.
  bool host_pid_namespace = false;
};

// Every process (but the caller) with `arg` as one whole argv element.
std::vector<HostProcess> FindProcessesWithArg(const std::string& arg);

}  // namespace sandprobe
