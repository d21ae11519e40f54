// The privilege and escape-exposure families (detection only, never exploitation): one row each
// in priv_group.cc. Every syscall they make either cannot change anything (reads, access(W_OK),
// readlink) or is given arguments that cannot succeed (bad pointer, fd -1, invalid flags), and
// the risky ones run in a forked child so a seccomp kill (SIGSYS) ends only that child.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/families.h"

namespace sandprobe {

// --- Pure helpers (unit-tested in priv_status_test.cc) ---

// "CAP_SYS_ADMIN" for bit 21; "CAP_<bit>" for a bit this table does not name.
std::string CapabilityName(int bit);
// The names of the bits set in `mask`, lowest bit first.
std::vector<std::string> CapabilityNames(std::uint64_t mask);
// A /proc/self/status field ("CapEff", "Seccomp", "Uid"): its value with surrounding blanks
// trimmed, or nullopt when the field is absent.
std::optional<std::string> StatusField(std::string_view status, std::string_view key);
// "000001ffffffffff" -> mask; nullopt unless 1-16 hex digits.
std::optional<std::uint64_t> ParseCapMask(std::string_view hex);


// Whole small file (up to `cap` bytes); nullopt with errno set when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t cap = 64 * 1024);

// The context a privilege fact depends on (priv_context.cc), attached to those facts:
// UsernsContext: {"euid", "egid", "link": "user:[...]", "uid_map", "cap_sys_admin"}: writability
//   seen by an open for write is the probe's own user namespace's answer, not the host root's.
// KernelContext: {"sysname", "release", "version", "machine", "proc_version", "boot_id",
//   "boot_time_ms", "nsfs_dev"}: which kernel answered. A user-space kernel (gVisor) or a VM's
//   guest answers syscalls itself; the host tells it from its own by several of these signals.
nlohmann::json UsernsContext();
nlohmann::json KernelContext();

// --- Real-argument attempts of priv.syscalls (priv_realargs.cc) ---

// A call with the argument a real workload would pass, for syscalls whose filters commonly look
// at arguments (clone, unshare, socket, ioctl): a filter may let the invalid argument through
// and refuse every real one, or the reverse, so only the real argument says whether the call
// is usable. Each runs in a throwaway child that exits right after: whatever it creates dies
// with it. `invoke` returns the call's result with errno set; a setup step of its own (a pty to
// call on) that fails writes "step: ERRNO" to `setup_fd` and exits with kSetupFailedExit, so
// the fact says the call was not tried rather than reporting the setup's errno as the call's.
struct RealAttempt {
  const char* call;
  long (*invoke)(int setup_fd);
};
constexpr int kSetupFailedExit = 254;

// clone(flags | SIGCHLD) whose child exits at once, reaped here: 0, or -1 with errno.
long CloneAndReap(long flags);
const std::vector<RealAttempt>& CloneRealAttempts();
long CloneInvalid();  // clone(CLONE_THREAD) alone: EINVAL once past a filter
// One priv.syscalls row per socket family: the filter is asked with an invalid type (EINVAL
// once past a filter that does not compare the family) and with real types and protocols.
struct SocketFamilyRow {
  const char* name;  // "socket(AF_VSOCK)": the row's (and check's) name
  int family;
  std::vector<RealAttempt> real;
};
const std::vector<SocketFamilyRow>& SocketFamilies();
long SocketInvalid(int family);
// TIOCSTI (plain and with bits above 32) and TIOCLINUX on a pty the probe opens for itself.
const std::vector<RealAttempt>& IoctlRealAttempts();

// The syscalls priv.syscalls knows how to call harmlessly.
const std::vector<std::string>& KnownProbeSyscalls();

// --- Families ---
std::string CheckNoArgs(const FamilyArgs& args);
std::string CheckSyscallArgs(const FamilyArgs& args);
std::string CheckHostPidArgs(const FamilyArgs& args);
std::string CheckPrivPathArgs(const FamilyArgs& args);
std::string CheckRuntimeSocketsArgs(const FamilyArgs& args);

void RunPrivIdentity(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivCaps(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivSeccomp(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivSyscalls(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivUserns(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivTiocsti(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivNamespaces(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivHostPid(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivRuntimeSockets(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivFds(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivCwd(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivKernelKnobs(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivCgroups(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivDevices(const ProbeContext& ctx, const FamilyArgs& args);
void RunPrivMasked(const ProbeContext& ctx, const FamilyArgs& args);

}  // namespace sandprobe
