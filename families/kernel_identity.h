// Which kernel answered the probe: the harness's own, or another (a VM's guest, a user-space
// kernel such as gVisor's sentry). Decided from several independent signals, never one:
//
//   build      uname release + version ("6.1.0-26-amd64", "#1 SMP PREEMPT_DYNAMIC Debian ..."):
//              answered by the kernel itself; a VM may run the host's very build, though.
//   boot_id    /proc/sys/kernel/random/boot_id: a runtime can mount a file of its own there
//              (the false "another kernel" this module exists to stop).
//   boot_time  CLOCK_REALTIME - CLOCK_BOOTTIME: the moment the kernel booted; a time namespace
//              shifts it, and it differs by more than kBootTimeSlackMs only in another kernel
//              or such a namespace.
//   nsfs_dev   the device of /proc/self/ns/*: one internal mount per kernel. One way only: a
//              different device is another kernel, an equal one proves nothing (every kernel
//              tends to number it alike).
//
// "Another kernel" needs at least two signals saying so and more signals saying so than
// saying "the same": a mounted boot_id alone (build and boot time equal) is the harness's
// kernel; gVisor (build, boot time, nsfs device differ) and a VM's guest (build, boot_id, boot
// time) are another. The harness reads its own side (the "kernel" witness, HostKernelIdentity).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families/family.h"

namespace sandprobe {

inline constexpr long long kBootTimeSlackMs = 5000;

struct KernelSignal {
  std::string name;  // "build", "boot_id", "boot_time", "nsfs_dev"
  bool differs = false;
  std::string text;  // "build 4.4.0 #1 ... (the harness's 6.18.44 ...)"
};

struct KernelComparison {
  bool another = false;  // decided: not the harness's kernel
  bool known = false;    // some signal could be compared at all
  std::vector<KernelSignal> signals;
  // "another kernel: build ... differs, boot time ... differs" or "the harness's kernel: ...".
  std::string text;
};

// `probe`: a fact's "kernel" context (probes/priv_context.cc KernelContext); `host`: the
// harness's own, in the same keys (release, version, boot_id, boot_time_ms, nsfs_dev).
KernelComparison CompareKernels(const nlohmann::json& probe, const nlohmann::json& host);

// The harness's kernel as the judges see it: the "kernel" witness, or, for a report recorded
// before that witness existed, what the "priv" witness kept (release and boot_id). Null json
// when neither ran.
nlohmann::json HostKernelIdentity(const JudgeInput& in);

// The launch's kernel context: the first fact (of the families that attach one) carrying a
// "kernel" object, recorded as evidence; then compared with the harness's. `known` is false
// when either side is missing.
KernelComparison LaunchKernel(const JudgeInput& in, Verdict& v);

}  // namespace sandprobe
