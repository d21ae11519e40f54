// res.cpu's cgroup facts: the probe's own CPU cgroup (v1 "cpu" hierarchy or unified v2), its
// quota (cpu.cfs_quota_us + cpu.cfs_period_us, or cpu.max) and its cpu.stat counters, so the
// host can judge a quota by its own throttling evidence instead of by CPU time alone (CPU time
// is also what a busy host leaves over).
//
// The directory is resolved, not guessed: /proc/self/cgroup names the probe's cgroup in each
// hierarchy, /proc/self/mountinfo where that hierarchy is mounted and which of its directories
// the mount shows (a container's cgroup mount shows only its own cgroup). Reading the mount's
// top directory blindly would read the host's root cgroup in a sandbox without a cgroup
// namespace.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "probes/resource_families.h"

namespace sandprobe {
namespace {

constexpr int kMaxLines = 4096;   // mountinfo and /proc/self/cgroup lines read, at most
constexpr int kMaxStatKeys = 64;  // cpu.stat keys kept, at most
constexpr int kMaxAncestors = 32; // parent directories searched for a quota, at most

std::vector<std::string> Fields(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  return out;
}

bool HasToken(const std::string& list, const std::string& token) {
  for (const std::string& item : Fields(list, ',')) {
    if (item == token) return true;
  }
  return false;
}

std::optional<long long> Integer(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return n;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::string text, line;
  for (int i = 0; i < kMaxStatKeys && std::getline(in, line); ++i) text += line + "\n";
  return text;
}

// The probe's cgroup path in the v1 hierarchy holding `controller` (or the v2 one), from
// /proc/self/cgroup.
std::optional<std::string> OwnPath(bool v2, const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  for (int i = 0; i < kMaxLines && std::getline(in, line); ++i) {
    std::vector<std::string> f = Fields(line, ':');
    if (f.size() < 3) continue;
    std::string path = line.substr(f[0].size() + f[1].size() + 2);
    if (v2 ? (f[0] == "0" && f[1].empty()) : HasToken(f[1], controller)) return path;
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json ParseCgroupKeyValues(const std::string& text) {
  nlohmann::json out = nlohmann::json::object();
  std::istringstream in(text);
  std::string line;
  for (int i = 0; i < kMaxStatKeys && std::getline(in, line); ++i) {
    std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    if (std::optional<long long> n = Integer(line.substr(space + 1))) out[line.substr(0, space)] = *n;
  }
  return out;
}

nlohmann::json ParseCpuMax(const std::string& text) {
  std::vector<std::string> f = Fields(text.substr(0, text.find('\n')), ' ');
  if (f.size() != 2) return nullptr;
  std::optional<long long> period = Integer(f[1]);
  std::optional<long long> quota = f[0] == "max" ? std::optional<long long>(-1) : Integer(f[0]);
  if (!quota || !period) return nullptr;
  return {{"quota_us", *quota}, {"period_us", *period}};
}

std::optional<CpuCgroupDir> ResolveCgroup(const std::string& mountinfo, const std::string& controller,
                                          const std::optional<std::string>& v1_path,
                                          const std::optional<std::string>& v2_path) {
  std::optional<CpuCgroupDir> v2;
  std::istringstream in(mountinfo);
  std::string line;
  for (int i = 0; i < kMaxLines && std::getline(in, line); ++i) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::vector<std::string> pre = Fields(line.substr(0, dash), ' ');
    std::vector<std::string> post = Fields(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    bool is_v1 = post[0] == "cgroup" && HasToken(post[2], controller);
    bool is_v2 = post[0] == "cgroup2";
    const std::optional<std::string>& own = is_v1 ? v1_path : v2_path;
    if ((!is_v1 && !is_v2) || !own) continue;
    const std::string& root = pre[3];
    const std::string& mountpoint = pre[4];
    CpuCgroupDir dir{is_v1 ? 1 : 2, mountpoint, *own, mountpoint, true};
    if (root == "/") {
      dir.dir = mountpoint + (*own == "/" ? "" : *own);
    } else if (own->rfind(root, 0) == 0) {
      dir.dir = mountpoint + own->substr(root.size());
    } else if (*own != "/") {
      dir.resolved = false;  // the mount does not show our cgroup: its top is the best guess
    }
    if (is_v1) return dir;  // a v1 hierarchy holds its controller even on hybrid hosts
    if (!v2) v2 = dir;
  }
  return v2;
}

// One directory's quota as {"quota_us", "period_us"} (quota -1: none); null when unreadable.
nlohmann::json ReadCpuQuota(const CpuCgroupDir& at, const std::string& dir) {
  if (at.version == 2) return ParseCpuMax(ReadWhole(dir + "/cpu.max"));
  std::optional<std::string> quota = ReadSmallFile(dir + "/cpu.cfs_quota_us");
  std::optional<std::string> period = ReadSmallFile(dir + "/cpu.cfs_period_us");
  std::optional<long long> q = quota ? Integer(*quota) : std::nullopt;
  std::optional<long long> p = period ? Integer(*period) : std::nullopt;
  if (!q || !p) return nullptr;
  return {{"quota_us", *q}, {"period_us", *p}};
}

std::optional<CpuCgroupDir> ResolveCpuCgroup(const std::string& mountinfo,
                                             const std::optional<std::string>& v1_path,
                                             const std::optional<std::string>& v2_path) {
  return ResolveCgroup(mountinfo, "cpu", v1_path, v2_path);
}

std::optional<CpuCgroupDir> FindCgroup(const std::string& controller) {
  std::ifstream in("/proc/self/mountinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return ResolveCgroup(text.str(), controller, OwnPath(false, controller), OwnPath(true, controller));
}

std::optional<CpuCgroupDir> FindCpuCgroup() { return FindCgroup("cpu"); }

nlohmann::json DescribeCpuCgroup(const CpuCgroupDir& at) {
  nlohmann::json out = {{"version", at.version}, {"dir", at.dir}, {"cgroup_path", at.cgroup_path},
                        {"resolved", at.resolved}};
  out["quota"] = ReadCpuQuota(at, at.dir);
  // A parent's quota binds too: the tightest one the mount shows (a container sees none).
  double tightest = -1;
  std::string dir = at.dir;
  for (int i = 0; i < kMaxAncestors && dir.size() > at.mountpoint.size(); ++i) {
    dir = dir.substr(0, dir.rfind('/'));
    nlohmann::json quota = ReadCpuQuota(at, dir);
    if (!quota.is_object() || quota["quota_us"].get<long long>() <= 0 ||
        quota["period_us"].get<long long>() <= 0) {
      continue;
    }
    double cores = quota["quota_us"].get<double>() / quota["period_us"].get<double>();
    if (tightest < 0 || cores < tightest) {
      tightest = cores;
      out["ancestor_quota"] = quota;
      out["ancestor_quota"]["dir"] = dir;
    }
  }
  // Throttling is counted where the binding quota sits: the tightest one, ours on a tie.
  const nlohmann::json& own = out["quota"];
  bool own_binds = own.is_object() && own["quota_us"].get<long long>() > 0 &&
                   own["period_us"].get<long long>() > 0 &&
                   (tightest < 0 || own["quota_us"].get<double>() / own["period_us"].get<double>() <= tightest);
  out["stat_dir"] = tightest < 0 || own_binds ? at.dir : out["ancestor_quota"]["dir"].get<std::string>();
  return out;
}

nlohmann::json ReadCpuStat(const std::string& dir) {
  std::string text = ReadWhole(dir + "/cpu.stat");
  if (text.empty()) return nullptr;
  return ParseCgroupKeyValues(text);
}

}  // namespace sandprobe
