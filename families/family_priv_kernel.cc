// Host kernel interfaces, host side: writable kernel knobs (/proc/sys/kernel/core_pattern runs a
// program as root on the host at the next crash), writable cgroupfs and release_agent, device
// nodes beyond the usual set, and /proc, /sys paths a container runtime normally masks.
// Writability is what an open for write (closed unwritten) showed, read with the user namespace
// and the kernel it was tried in: every reading is a pass or a fail.
#include <fmt/format.h>

#include "families/family_priv.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const Remedy kProcRemedy = {
    "drop --privileged (docker then mounts /proc/sys, /sys and cgroupfs read-only and masks "
    "/proc/kcore & co.) and --cap-drop ALL",
    "bwrap --proc /proc --dev /dev with --unshare-all; never --bind /proc, /sys or /dev from the host",
    "run the workload in a sandbox with its own read-only /proc/sys, /sys and a minimal /dev"};

// ---- priv.kernel_knobs ----

struct KnobSpec {
  const char* path;
  Severity severity;
};
const std::vector<KnobSpec>& KnobSpecs() {
  static const std::vector<KnobSpec> kSpecs = {
      {"/proc/sys/kernel/core_pattern", Severity::kCritical},
      {"/proc/sys/kernel/modprobe", Severity::kCritical},
      {"/proc/sysrq-trigger", Severity::kHigh},
  };
  return kSpecs;
}

Status ExpandKernelKnobs(const ExpandInput& in, BatchBuilder& batch) {
  for (const KnobSpec& k : KnobSpecs()) {
    batch.AddArg("priv.kernel_knobs", k.path);
    Check check = PrivCheck(in, "priv.kernel_knobs", std::string("priv.kernel_knob:") + k.path,
                            k.severity, Expectation::kDenied, "/privileges", k.path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  Check mount = PrivCheck(in, "priv.kernel_knobs", "priv.kernel_knob:/proc/sys[mount]", Severity::kHigh,
                          Expectation::kDenied, "/privileges", "/proc/sys");
  mount.variant = "mount";
  return batch.AddCheck(std::move(mount));
}

// What an open for write that succeeded means, read with the context: another kernel's knob is
// that kernel's; a write the kernel would still refuse (a sysctl to an euid that is not the
// host's root, a release_agent outside the initial user namespace since 5.17) is not the
// host's; otherwise it is the host's, a fail. Every reading is pass or fail: the open was the
// real attempt, and the host knows its kernel.
void JudgeHostWrite(const JudgeInput& in, Verdict& v, bool writable, const WriteReading& reading) {
  if (!writable) {
    JudgeFinding(v, false);
    return;
  }
  if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
    v.observed += fmt::format("; in {}: that kernel's own interface, not the host's", *other);
    JudgeFinding(v, false);
    return;
  }
  switch (reading.kind) {
    case HostWrite::kHostRoot:
      v.observed += "; " + reading.why;
      JudgeFinding(v, true);
      return;
    case HostWrite::kOwnNamespace:
      v.observed += "; but " + reading.why;
      JudgeFinding(v, false);
      return;
  }
}

// "writable (an open for write succeeded; closed unwritten)", "not writable: open for write:
// EACCES (access(W_OK) said writable: an LSM refused the open)", "absent: ENOENT". A fact from
// before the open was tried says access(W_OK).
std::string DescribeWriteAttempt(const json& f) {
  if (!f.value("exists", false)) return "absent: " + f.value("errno", std::string("?"));
  const bool opened = f.value("tried", "") == "open";
  const std::string where = f.contains("tried_path") ? " " + f.value("tried_path", "") : "";
  if (f.value("writable", false)) {
    return opened ? fmt::format("writable (an open for write of{} succeeded; closed unwritten)", where.empty() ? " it" : where)
                  : "writable (access W_OK succeeded; nothing was written)";
  }
  std::string text = fmt::format("not writable: {}{}", opened ? "open for write" + where + ": " : "",
                                 f.value("errno", std::string("?")));
  if (opened && f.value("access_writable", false)) text += " (access(W_OK) said writable: a security module refused the open)";
  return text;
}

bool WriteAttemptReported(const json* f) {
  return f != nullptr && f->contains("exists") && (*f)["exists"].is_boolean();
}

// /proc/sys on a read-write mount is a finding only when a sysctl under it opens for write as
// the host's: the knobs the same launch tried decide (the mount alone is not a write).
void JudgeSysctlMount(const JudgeInput& in, Verdict& v, const json& mount) {
  v.expected = "/proc/sys mounted read-only, or no sysctl under it opens for write as the host's";
  if (!mount.value("ok", false)) {
    v.observed = "no mount covers /proc/sys: no sysctl to write";
    JudgeFinding(v, false);
    return;
  }
  const bool ro = mount.value("read_only", false);
  v.observed = fmt::format("/proc/sys is on the {} mount at {} ({})", ro ? "read-only" : "read-write",
                           mount.value("mount_point", "?"), mount.value("fstype", "?"));
  if (ro) {
    JudgeFinding(v, false);
    return;
  }
  std::vector<std::string> writable, refused;
  bool tried = false;
  for (int index : in.facts.OfFamily("priv.kernel_knobs")) {
    const json& f = in.facts.Fact(index);
    const std::string path = f.value("path", "");
    if (f.contains("variant") || f.value("summary", false) || path.rfind("/proc/sys/", 0) != 0) continue;
    if (!f.value("exists", false)) continue;
    tried = tried || f.value("tried", "") == "open";
    v.evidence.frame_indexes.push_back(index);
    (f.value("writable", false) ? writable : refused).push_back(path + ": " + DescribeWriteAttempt(f));
  }
  if (!tried && writable.empty()) {
    // No open was tried under it (a probe from before): the mount and the namespace decide.
    JudgeHostWrite(in, v, true, SysctlWrite(ReadUserns(in, mount.value("userns", json()))));
    return;
  }
  if (writable.empty()) {
    v.observed += fmt::format("; but no sysctl under it opens for write ({})", JoinLimited(refused, 4));
    JudgeFinding(v, false);
    return;
  }
  v.observed += "; " + JoinLimited(writable, 4);
  JudgeHostWrite(in, v, true, SysctlWrite(ReadUserns(in, mount.value("userns", json()))));
}

Verdict JudgeKernelKnobs(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.remediation = RemedyFor(in, kProcRemedy);
  const json* f = PrivFactAt(in, v, "priv.kernel_knobs", in.check.target, in.check.variant);
  if (in.check.variant == "mount") {
    if (f == nullptr) {
      v.expected = "/proc/sys mounted read-only";
      Inconclusive(v, "the probe reported no mount scan");
      return v;
    }
    JudgeSysctlMount(in, v, *f);
    return v;
  }
  v.expected = in.check.target + " not writable as the host's root (an open for write, closed unwritten)";
  if (!WriteAttemptReported(f)) {
    Inconclusive(v, "the probe reported no write attempt");
    return v;
  }
  v.observed = DescribeWriteAttempt(*f);
  JudgeHostWrite(in, v, f->value("writable", false), SysctlWrite(ReadUserns(in, f->value("userns", json()))));
  return v;
}

// ---- priv.cgroups ----

Status ExpandCgroups(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.cgroups");
  if (Status s = batch.AddCheck(PrivCheck(in, "priv.cgroups", "priv.cgroup.writable", Severity::kHigh,
                                          Expectation::kDenied, "/privileges", "cgroupfs"));
      !s.ok()) {
    return s;
  }
  return batch.AddCheck(PrivCheck(in, "priv.cgroups", "priv.cgroup.release_agent", Severity::kCritical,
                                  Expectation::kDenied, "/privileges", "release_agent"));
}

Verdict JudgeCgroups(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  const bool agent = in.check.id == "priv.cgroup.release_agent";
  v.expected = agent ? "no writable cgroup v1 release_agent" : "cgroupfs mounts not writable";
  v.remediation = RemedyFor(in, kProcRemedy);
  const json* summary = PrivFact(in, v, "priv.cgroups", true);
  if (summary == nullptr || !summary->value("ok", false)) {
    Inconclusive(v, summary == nullptr ? "the probe reported no cgroup scan"
                                       : "/proc/self/mountinfo: " + summary->value("mountinfo_errno", std::string("?")));
    return v;
  }
  std::vector<std::string> writable, refused_by_open;
  int seen = 0;
  std::optional<WriteReading> reading;  // release_agent: the first writable one's, all share a namespace
  for (int index : in.facts.OfFamily("priv.cgroups")) {
    const json& f = in.facts.Fact(index);
    if (f.value("summary", false) || (f.value("variant", "") == "release_agent") != agent) continue;
    ++seen;
    if (!f.value("writable", false)) {
      // What access(2) would have called writable and the open did not: said, for the record.
      if (f.value("access_writable", false)) refused_by_open.push_back(f.value("path", "?") + ": " + f.value("errno", "?"));
      continue;
    }
    v.evidence.frame_indexes.push_back(index);
    writable.push_back(f.value("path", "?"));
    if (agent && !reading) reading = ReleaseAgentWrite(ReadUserns(in, f.value("userns", json())), HostKernel(in));
  }
  v.observed = fmt::format("{} of {} {} writable{}{}", writable.size(), seen,
                           agent ? "release_agent files" : "cgroup mounts",
                           writable.empty() ? "" : ": ", writable.empty() ? "" : JoinLimited(writable, 4));
  if (!refused_by_open.empty()) v.observed += "; refused at the open: " + JoinLimited(refused_by_open, 4);
  if (agent) {
    if (!writable.empty()) v.observed += " (an open for write; closed unwritten)";
    JudgeHostWrite(in, v, !writable.empty(), reading.value_or(WriteReading{HostWrite::kHostRoot, ""}));
    return v;
  }
  JudgeHostWrite(in, v, !writable.empty(), WriteReading{HostWrite::kHostRoot, "a cgroup of the host's kernel"});
  return v;
}

// ---- priv.devices ----

// The usual container /dev: name and device number must both match.
struct UsualDevice {
  const char* path;
  unsigned major, minor;
};
constexpr UsualDevice kUsualDevices[] = {
    {"/dev/null", 1, 3},   {"/dev/zero", 1, 5}, {"/dev/full", 1, 7}, {"/dev/random", 1, 8},
    {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},  {"/dev/ptmx", 5, 2},
};

Status ExpandDevices(const ExpandInput& in, BatchBuilder& batch) {
  batch.Invocation("priv.devices");
  return batch.AddCheck(PrivCheck(in, "priv.devices", "priv.devices", Severity::kHigh, Expectation::kDenied,
                                  "/privileges", "/dev"));
}

Verdict JudgeDevices(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = "only null, zero, full, random, urandom, tty, ptmx (and pts, shm)";
  v.remediation = RemedyFor(in, {"drop --privileged and --device; docker's default /dev is minimal",
                                 "bwrap --dev /dev, never --dev-bind /dev /dev",
                                 "give the workload a minimal /dev"});
  const json* summary = PrivFact(in, v, "priv.devices", true);
  if (summary == nullptr || !summary->value("ok", false)) {
    Inconclusive(v, summary == nullptr ? "the probe reported no /dev scan"
                                       : "/dev: " + summary->value("errno", std::string("?")));
    return v;
  }
  std::vector<std::string> extra;
  bool block = false;
  for (int index : in.facts.OfFamily("priv.devices")) {
    const json& f = in.facts.Fact(index);
    if (f.value("summary", false)) continue;
    const std::string path = f.value("path", "?");
    const unsigned major = f.value("major", 0u), minor = f.value("minor", 0u);
    bool usual = false;
    for (const UsualDevice& d : kUsualDevices) {
      usual = usual || (path == d.path && major == d.major && minor == d.minor && f.value("kind", "") == "char");
    }
    if (usual) continue;
    v.evidence.frame_indexes.push_back(index);
    block = block || f.value("kind", "") == "block";
    extra.push_back(fmt::format("{} ({} {}:{})", path, f.value("kind", "?"), major, minor));
  }
  v.observed = extra.empty() ? fmt::format("{} device nodes, all usual", summary->value("nodes", 0))
                             : fmt::format("{} device node(s) beyond the usual set{}: {}", extra.size(),
                                           block ? ", block devices among them" : "", JoinLimited(extra));
  if (summary->value("truncated", false)) v.observed += " (listing truncated)";
  if (!extra.empty()) {
    // Device nodes of another kernel (gVisor's sentry implements its own /dev/net/tun and
    // /dev/fuse; a VM's guest has its own drivers) reach no driver of the host's kernel.
    if (std::optional<std::string> other = AnotherKernelOf(in, v)) {
      v.observed += fmt::format("; in {}: that kernel's own devices, not the host's drivers", *other);
      JudgeFinding(v, false);
      return v;
    }
  }
  JudgeFinding(v, !extra.empty());
  return v;
}

// ---- priv.masked ----

struct MaskedSpec {
  const char* path;
  Severity severity;
};
const std::vector<MaskedSpec>& MaskedSpecs() {
  static const std::vector<MaskedSpec> kSpecs = {
      {"/proc/kcore", Severity::kHigh},
      {"/proc/keys", Severity::kMedium},
      {"/proc/timer_list", Severity::kMedium},
      {"/sys/firmware", Severity::kLow},
  };
  return kSpecs;
}

Status ExpandMasked(const ExpandInput& in, BatchBuilder& batch) {
  for (const MaskedSpec& m : MaskedSpecs()) {
    batch.AddArg("priv.masked", m.path);
    Check check = PrivCheck(in, "priv.masked", std::string("priv.masked:") + m.path, m.severity,
                            Expectation::kDenied, "/privileges", m.path);
    if (Status s = batch.AddCheck(std::move(check)); !s.ok()) return s;
  }
  return Status::Ok();
}

Verdict JudgeMasked(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.expected = in.check.target + " masked (unreadable or empty)";
  v.remediation = RemedyFor(in, kProcRemedy);
  const json* f = PrivFactAt(in, v, "priv.masked", in.check.target);
  if (f == nullptr || !(*f)["ok"].is_boolean()) {
    Inconclusive(v, "the probe reported no read");
    return v;
  }
  bool exposed = false;
  if (!f->value("ok", false)) {
    v.observed = fmt::format("masked: {}: {}", f->value("step", "open"), f->value("errno", "?"));
  } else if (f->value("kind", "") == "dir") {
    exposed = f->value("entries", 0L) > 0;
    v.observed = fmt::format("directory with {} entries", f->value("entries", 0L));
  } else {
    exposed = f->value("bytes", 0L) > 0;
    v.observed = exposed ? "readable: the first byte came back" : "masked: reads return nothing";
  }
  JudgeFinding(v, exposed);
  return v;
}

}  // namespace

std::vector<FamilyRow> PrivilegeKernelFamilies() {
  return {
      {"priv.kernel_knobs", ExpandKernelKnobs, JudgeKernelKnobs},
      {"priv.cgroups", ExpandCgroups, JudgeCgroups},
      {"priv.devices", ExpandDevices, JudgeDevices},
      {"priv.masked", ExpandMasked, JudgeMasked},
  };
}

}  // namespace sandprobe
