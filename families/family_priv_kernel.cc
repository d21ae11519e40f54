// Host kernel interfaces, host side: writable kernel knobs (/proc/sys/kernel/core_pattern runs a
// program as root on the host at the next crash), writable cgroupfs and release_agent, device
// nodes beyond the usual set, and /proc, /sys paths a container runtime normally masks.
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

// A finding that access(W_OK) made: a fail only when the write would land as the host's root;
// writable in the sandbox's own user namespace alone is inconclusive, with the reason. Under a
// user-space kernel the file is its sentry's, not Linux's.
void JudgeHostWrite(const JudgeInput& in, Verdict& v, bool writable, const WriteReading& reading) {
  if (!writable) {
    JudgeFinding(v, false);
    return;
  }
  if (std::optional<std::string> sentry = UserSpaceKernelOf(in, v)) {
    Inconclusive(v, fmt::format("inside a user-space kernel ({}): {}; this is {}'s own kernel interface, "
                                "not Linux's", *sentry, v.observed, *sentry));
    return;
  }
  switch (reading.kind) {
    case HostWrite::kHostRoot:
      v.observed += "; " + reading.why;
      JudgeFinding(v, true);
      return;
    case HostWrite::kOwnNamespace:
      Inconclusive(v, v.observed + "; but " + reading.why);
      return;
  }
}

Verdict JudgeKernelKnobs(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  v.remediation = RemedyFor(in, kProcRemedy);
  const json* f = PrivFactAt(in, v, "priv.kernel_knobs", in.check.target, in.check.variant);
  if (in.check.variant == "mount") {
    v.expected = "/proc/sys mounted read-only";
    if (f == nullptr || !f->value("ok", false)) {
      Inconclusive(v, "the probe found no mount covering /proc/sys");
      return v;
    }
    const bool ro = f->value("read_only", false);
    v.observed = fmt::format("/proc/sys is on the {} mount at {} ({})", ro ? "read-only" : "read-write",
                             f->value("mount_point", "?"), f->value("fstype", "?"));
    JudgeHostWrite(in, v, !ro, SysctlWrite(ReadUserns(in, f->value("userns", json()))));
    return v;
  }
  v.expected = in.check.target + " not writable as the host's root (access W_OK)";
  if (f == nullptr || !f->contains("exists") || !(*f)["exists"].is_boolean()) {
    Inconclusive(v, "the probe reported no access check");
    return v;
  }
  const bool writable = f->value("writable", false);
  v.observed = !f->value("exists", false) ? "absent: " + f->value("errno", std::string("?"))
               : writable                 ? "writable (access W_OK succeeded; nothing was written)"
                                          : "not writable: " + f->value("errno", std::string("?"));
  JudgeHostWrite(in, v, writable, SysctlWrite(ReadUserns(in, f->value("userns", json()))));
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
  std::vector<std::string> writable;
  int seen = 0;
  std::optional<WriteReading> reading;  // release_agent: the first writable one's, all share a namespace
  for (int index : in.facts.OfFamily("priv.cgroups")) {
    const json& f = in.facts.Fact(index);
    if (f.value("summary", false) || (f.value("variant", "") == "release_agent") != agent) continue;
    ++seen;
    if (!f.value("writable", false)) continue;
    v.evidence.frame_indexes.push_back(index);
    writable.push_back(f.value("path", "?"));
    if (agent && !reading) reading = ReleaseAgentWrite(ReadUserns(in, f.value("userns", json())), HostKernel(in));
  }
  v.observed = fmt::format("{} of {} {} writable{}{}", writable.size(), seen,
                           agent ? "release_agent files" : "cgroup mounts",
                           writable.empty() ? "" : ": ", writable.empty() ? "" : JoinLimited(writable, 4));
  if (agent) {
    if (!writable.empty()) v.observed += " (access W_OK; nothing was written)";
    JudgeHostWrite(in, v, !writable.empty(), reading.value_or(WriteReading{HostWrite::kHostRoot, ""}));
    return v;
  }
  JudgeFinding(v, !writable.empty());
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
