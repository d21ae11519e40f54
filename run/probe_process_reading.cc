#include "run/probe_process_reading.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "launch/proc_info.h"

namespace sandprobe {
namespace {

constexpr int kMaxLines = 4096;
constexpr int kMaxDepth = 64;
constexpr auto kPollEvery = std::chrono::milliseconds(10);
// v1's "no limit" is LLONG_MAX rounded down to a page; no real limit is this large.
constexpr long long kNoMemoryLimitFrom = 1LL << 60;

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(text);
  while (std::getline(in, field, sep)) out.push_back(field);
  return out;
}

bool HasToken(const std::string& list, const std::string& token) {
  for (const std::string& item : Split(list, ',')) {
    if (item == token) return true;
  }
  return false;
}

std::optional<long long> Integer(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(line.c_str(), &end, 10);
  if (errno != 0 || end == line.c_str() || *end != '\0') return std::nullopt;
  return n;
}

struct CgroupAt {
  std::string dir;         // "" when no mount shows the cgroup
  std::string mountpoint;  // where its hierarchy is mounted: the walk up stops there
  int version = 0;
};

// The directory of the process's cgroup (a path of /proc/<pid>/cgroup) in the hierarchy holding
// `controller`: the v1 one when there is one (hybrid hosts keep cpu and pids there), else the
// unified one.
CgroupAt FindCgroupAt(const std::string& mountinfo, const std::string& controller,
                      const std::optional<std::string>& v1_path, const std::optional<std::string>& v2_path) {
  CgroupAt v2_at;
  std::istringstream in(mountinfo);
  std::string line;
  for (int i = 0; i < kMaxLines && std::getline(in, line); ++i) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::vector<std::string> pre = Split(line.substr(0, dash), ' ');
    const std::vector<std::string> post = Split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    const bool v1 = post[0] == "cgroup" && HasToken(post[2], controller);
    const bool v2 = post[0] == "cgroup2";
    const std::optional<std::string>& own = v1 ? v1_path : v2_path;
    if ((!v1 && !v2) || !own) continue;
    const std::string& root = pre[3];
    if (root != "/" && own->rfind(root, 0) != 0) continue;  // the mount does not show it
    const std::string rest = root == "/" ? (*own == "/" ? "" : *own) : own->substr(root.size());
    CgroupAt at{pre[4] + rest, pre[4], v1 ? 1 : 2};
    if (v1) return at;
    if (v2_at.dir.empty()) v2_at = at;
  }
  return v2_at;
}

std::optional<std::string> OwnPath(const std::string& cgroup_text, bool v2, const std::string& controller) {
  std::istringstream in(cgroup_text);
  std::string line;
  for (int i = 0; i < kMaxLines && std::getline(in, line); ++i) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1);
    if (v2 ? (id == "0" && controllers.empty()) : HasToken(controllers, controller)) return line.substr(second + 1);
  }
  return std::nullopt;
}

// From the cgroup's directory up to its mount point (at most kMaxDepth levels): `limit(dir)`
// at each: a parent's limit binds its children too.
template <typename Limit>
void EachLevel(const CgroupAt& at, Limit limit) {
  std::string dir = at.dir;
  for (int i = 0; i < kMaxDepth && !dir.empty(); ++i) {
    limit(dir);
    if (dir.size() <= at.mountpoint.size()) break;
    dir = dir.substr(0, dir.rfind('/'));
  }
}

}  // namespace

CgroupLimits ReadCgroupLimits(const std::string& cgroup_text, const std::string& mountinfo,
                              const std::function<std::optional<std::string>(const std::string&)>& read) {
  CgroupLimits limits;
  const auto v2 = OwnPath(cgroup_text, true, "");
  const CgroupAt cpu = FindCgroupAt(mountinfo, "cpu", OwnPath(cgroup_text, false, "cpu"), v2);
  limits.cpu_dir = cpu.dir;
  if (!cpu.dir.empty()) {
    const bool is_v1 = cpu.version == 1;
    EachLevel(cpu, [&](const std::string& dir) {
      std::optional<long long> quota, period;
      if (is_v1) {
        const auto q = read(dir + "/cpu.cfs_quota_us"), p = read(dir + "/cpu.cfs_period_us");
        quota = q ? Integer(*q) : std::nullopt;
        period = p ? Integer(*p) : std::nullopt;
      } else if (const auto max = read(dir + "/cpu.max")) {
        const std::vector<std::string> f = Split(max->substr(0, max->find('\n')), ' ');
        if (f.size() == 2 && f[0] != "max") {
          quota = Integer(f[0]);
          period = Integer(f[1]);
        }
      }
      if (!quota || !period || *quota <= 0 || *period <= 0) return;
      const double cores = static_cast<double>(*quota) / static_cast<double>(*period);
      if (!limits.cpu_cores || cores < *limits.cpu_cores) limits.cpu_cores = cores;
    });
  }
  const CgroupAt pids = FindCgroupAt(mountinfo, "pids", OwnPath(cgroup_text, false, "pids"), v2);
  limits.pids_dir = pids.dir;
  if (!pids.dir.empty()) {
    EachLevel(pids, [&](const std::string& dir) {
      const auto text = read(dir + "/pids.max");
      const std::optional<long long> max = text ? Integer(*text) : std::nullopt;
      if (max && *max > 0 && (!limits.pids_max || *max < *limits.pids_max)) limits.pids_max = *max;
    });
  }
  const CgroupAt memory = FindCgroupAt(mountinfo, "memory", OwnPath(cgroup_text, false, "memory"), v2);
  limits.memory_dir = memory.dir;
  limits.memory_version = memory.version;
  if (!memory.dir.empty()) {
    EachLevel(memory, [&](const std::string& dir) {
      const auto text = read(dir + (memory.version == 1 ? "/memory.limit_in_bytes" : "/memory.max"));
      const std::optional<long long> max = text ? Integer(*text) : std::nullopt;  // v2 "max": none
      if (!max || *max <= 0 || *max >= kNoMemoryLimitFrom) return;
      if (!limits.memory_limit_bytes || *max < *limits.memory_limit_bytes) limits.memory_limit_bytes = *max;
    });
  }
  return limits;
}

std::string MemoryPeakFile(const std::string& dir, int version) {
  return dir + (version == 1 ? "/memory.max_usage_in_bytes" : "/memory.peak");
}

nlohmann::json LimitsAsReadings(pid_t pid, const CgroupLimits& limits) {
  nlohmann::json readings = {{"probe_host_pid", pid}};
  if (!limits.cpu_dir.empty()) {
    readings["host_cgroup_cpu_dir"] = limits.cpu_dir;
    readings["host_cgroup_cpu_quota_cores"] = limits.cpu_cores.value_or(-1);
  }
  if (!limits.pids_dir.empty()) {
    readings["host_cgroup_pids_dir"] = limits.pids_dir;
    readings["host_cgroup_pids_max"] = limits.pids_max.value_or(-1);
  }
  if (!limits.memory_dir.empty()) {
    readings["host_cgroup_memory_dir"] = limits.memory_dir;
    readings["host_cgroup_memory_limit_bytes"] = limits.memory_limit_bytes.value_or(-1);
  }
  return readings;
}

std::optional<long long> SessionOfStat(const std::string& stat_text) {
  const std::size_t close = stat_text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  // After ") ": state ppid pgrp session.
  std::istringstream in(stat_text.substr(close + 1));
  std::string state, ppid, pgrp, session;
  if (!(in >> state >> ppid >> pgrp >> session)) return std::nullopt;
  return Integer(session);
}

ProbeProcessWatch::ProbeProcessWatch(const std::string& probe_binary, std::string nonce) : nonce_(std::move(nonce)) {
  struct stat st {};
  if (::stat(probe_binary.c_str(), &st) != 0 || nonce_.empty()) return;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  known_ = true;
  thread_ = std::thread([this] { Watch(); });
}

ProbeProcessWatch::~ProbeProcessWatch() { Stop(); }

nlohmann::json ProbeProcessWatch::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  return readings_;
}

void ProbeProcessWatch::Watch() {
  auto read = [](const std::string& path) -> std::optional<std::string> {
    std::ifstream in(path);
    std::string text;
    if (!in || !std::getline(in, text)) return std::nullopt;
    return text;
  };
  while (!stop_) {
    for (int pid : ListPids()) {
      struct stat st {};
      const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
      if (::stat(exe.c_str(), &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) continue;
      if (!CmdlineHasArg(ReadProcFile(pid, "cmdline"), nonce_)) continue;
      const std::string cgroup = ReadProcFile(pid, "cgroup");
      std::ifstream in("/proc/self/mountinfo");
      std::ostringstream mountinfo;
      mountinfo << in.rdbuf();
      if (cgroup.empty()) continue;  // gone already: look for it again
      const CgroupLimits limits = ReadCgroupLimits(cgroup, mountinfo.str(), read);
      readings_ = LimitsAsReadings(pid, limits);
      if (std::optional<long long> session = SessionOfStat(ReadProcFile(pid, "stat"))) {
        readings_["probe_host_session"] = *session;
        readings_["harness_session"] = static_cast<long long>(::getsid(0));
      }
      if (!limits.memory_dir.empty()) FollowMemoryPeak(MemoryPeakFile(limits.memory_dir, limits.memory_version));
      return;
    }
    if (!Pause()) return;
  }
}

bool ProbeProcessWatch::Pause() {
  std::unique_lock lock(stop_mu_);
  return !stop_wake_.wait_for(lock, kPollEvery, [this] { return stop_.load(); });
}

// The high-water mark while the probe runs: the cgroup (a container's) may be gone by the time
// the launch has ended, so the last value read before then is the reading. A failed read after
// a good one keeps the good one.
void ProbeProcessWatch::FollowMemoryPeak(const std::string& peak_file) {
  while (!stop_) {
    std::ifstream in(peak_file);
    std::string text;
    if (!in || !std::getline(in, text)) return;
    if (const std::optional<long long> peak = Integer(text)) readings_["host_cgroup_memory_peak_bytes"] = *peak;
    if (!Pause()) return;
  }
}

}  // namespace sandprobe
