// priv.identity, priv.caps, priv.seccomp: what /proc/self/status (and the uid/gid maps) say
// about who the sandboxed process is and what the kernel lets it do. Plus the small parsers the
// other privilege families share (status fields, capability masks, mountinfo).
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/priv_families.h"

namespace sandprobe {
namespace {

// linux/capability.h, bits 0..40 (CAP_LAST_CAP on 5.9+).
constexpr std::array<const char*, 41> kCapNames = {
    "CAP_CHOWN",           "CAP_DAC_OVERRIDE",   "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
    "CAP_FSETID",          "CAP_KILL",           "CAP_SETGID",          "CAP_SETUID",
    "CAP_SETPCAP",         "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",       "CAP_NET_RAW",        "CAP_IPC_LOCK",        "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",      "CAP_SYS_RAWIO",      "CAP_SYS_CHROOT",      "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",       "CAP_SYS_ADMIN",      "CAP_SYS_BOOT",        "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",    "CAP_SYS_TIME",       "CAP_SYS_TTY_CONFIG",  "CAP_MKNOD",
    "CAP_LEASE",           "CAP_AUDIT_WRITE",    "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",    "CAP_MAC_ADMIN",      "CAP_SYSLOG",          "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",   "CAP_AUDIT_READ",     "CAP_PERFMON",         "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE"};

constexpr std::array<const char*, 5> kCapFields = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
constexpr std::array<const char*, 5> kCapKeys = {"inheritable", "permitted", "effective",
                                                 "bounding", "ambient"};

std::optional<long> ParseLong(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  long value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end == text->data()) return std::nullopt;
  return value;
}

// Adds the status text (or the error reading it) to `fact`; returns the text when readable.
std::optional<std::string> ReadStatus(nlohmann::json& fact) {
  std::optional<std::string> status = ReadSmallFile("/proc/self/status");
  fact["path"] = "/proc/self/status";
  fact["ok"] = status.has_value();
  if (!status) fact["errno"] = ErrnoName(errno);
  return status;
}

}  // namespace

std::string CapabilityName(int bit) {
  if (bit >= 0 && static_cast<std::size_t>(bit) < kCapNames.size()) return kCapNames[bit];
  return "CAP_" + std::to_string(bit);
}

std::vector<std::string> CapabilityNames(std::uint64_t mask) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    if (mask & (std::uint64_t{1} << bit)) names.push_back(CapabilityName(bit));
  }
  return names;
}

std::optional<std::string> StatusField(std::string_view status, std::string_view key) {
  std::size_t pos = 0;
  while (pos < status.size()) {
    std::size_t end = status.find('\n', pos);
    if (end == std::string_view::npos) end = status.size();
    std::string_view line = status.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') continue;
    std::string_view value = line.substr(key.size() + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    return std::string(value);
  }
  return std::nullopt;
}

std::optional<std::uint64_t> ParseCapMask(std::string_view hex) {
  if (hex.empty() || hex.size() > 16) return std::nullopt;
  std::uint64_t mask = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  return mask;
}

std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t cap) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out(cap, '\0');
  std::size_t got = 0;
  int err = 0;
  while (got < cap) {
    ssize_t n = ::read(fd, out.data() + got, cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (err != 0) {
    errno = err;
    return std::nullopt;
  }
  out.resize(got);
  return out;
}

std::string CheckNoArgs(const FamilyArgs& args) {
  return args.empty() ? "" : "this family takes no arguments";
}

void RunPrivIdentity(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json fact = {{"family", "priv.identity"},
                         {"uid", ::getuid()}, {"euid", ::geteuid()},
                         {"gid", ::getgid()}, {"egid", ::getegid()}};
  gid_t groups[256];
  int n = ::getgroups(256, groups);
  fact["groups"] = nlohmann::json::array();
  for (int i = 0; i < n; ++i) fact["groups"].push_back(groups[i]);
  for (const char* map : {"uid_map", "gid_map", "setgroups"}) {
    std::optional<std::string> text = ReadSmallFile(std::string("/proc/self/") + map, 4096);
    if (text) {
      SetBytesField(fact, map, *text);
    } else {
      fact[std::string(map) + "_errno"] = ErrnoName(errno);
    }
  }
  ctx.out.Emit(fact);
}

void RunPrivCaps(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json fact = {{"family", "priv.caps"}, {"kernel", KernelContext()}};
  std::optional<std::string> status = ReadStatus(fact);
  if (status) {
    for (std::size_t i = 0; i < kCapFields.size(); ++i) {
      std::optional<std::string> hex = StatusField(*status, kCapFields[i]);
      std::optional<std::uint64_t> mask = hex ? ParseCapMask(*hex) : std::nullopt;
      if (!mask) continue;  // absent (old kernel: no CapAmb): the host sees the key missing
      fact[kCapFields[i]] = *hex;
      fact[kCapKeys[i]] = CapabilityNames(*mask);
    }
  }
  ctx.out.Emit(fact);
}

void RunPrivSeccomp(const ProbeContext& ctx, const FamilyArgs&) {
  nlohmann::json fact = {{"family", "priv.seccomp"}, {"kernel", KernelContext()}};
  // Where /proc/self/status has no NoNewPrivs (gVisor's, kernels before 4.10), prctl still answers.
  const int nnp = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (nnp >= 0) {
    fact["no_new_privs_prctl"] = nnp;
  } else {
    fact["no_new_privs_prctl_errno"] = ErrnoName(errno);
  }
  std::optional<std::string> status = ReadStatus(fact);
  if (status) {
    // Seccomp: 0 disabled, 1 strict, 2 filter.
    if (auto v = ParseLong(StatusField(*status, "Seccomp"))) fact["seccomp"] = *v;
    if (auto v = ParseLong(StatusField(*status, "Seccomp_filters"))) fact["seccomp_filters"] = *v;
    if (auto v = ParseLong(StatusField(*status, "NoNewPrivs"))) fact["no_new_privs"] = *v;
  }
  ctx.out.Emit(fact);
}

}  // namespace sandprobe
