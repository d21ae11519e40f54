// The privilege and escape-exposure families (priv_status.cc, priv_syscalls.cc, priv_host.cc,
// priv_kernel.cc). Names match the host-side families in families/family_priv*.cc.
#include "probes/families.h"
#include "probes/priv_families.h"

namespace sandprobe {

std::vector<ProbeFamilyRow> PrivilegeProbeFamilies() {
  return {
      {"priv.identity", "", CheckNoArgs, RunPrivIdentity},
      {"priv.caps", "", CheckNoArgs, RunPrivCaps},
      {"priv.seccomp", "", CheckNoArgs, RunPrivSeccomp},
      {"priv.syscalls", "SYSCALL...", CheckSyscallArgs, RunPrivSyscalls},
      {"priv.userns", "", CheckNoArgs, RunPrivUserns},
      {"priv.tiocsti", "", CheckNoArgs, RunPrivTiocsti},
      {"priv.namespaces", "NS...", CheckPrivPathArgs, RunPrivNamespaces},
      {"priv.host_pid", "SHA256 [--canary-pid PID] [--canary-file PATH]", CheckHostPidArgs, RunPrivHostPid},
      {"priv.runtime_sockets", "[--walk-devs MAJOR:MINOR,...] PATH...", CheckRuntimeSocketsArgs, RunPrivRuntimeSockets},
      {"priv.fds", "", CheckNoArgs, RunPrivFds},
      {"priv.cwd", "", CheckNoArgs, RunPrivCwd},
      {"priv.kernel_knobs", "PATH...", CheckPrivPathArgs, RunPrivKernelKnobs},
      {"priv.cgroups", "", CheckNoArgs, RunPrivCgroups},
      {"priv.devices", "", CheckNoArgs, RunPrivDevices},
      {"priv.masked", "PATH...", CheckPrivPathArgs, RunPrivMasked},
  };
}

}  // namespace sandprobe
