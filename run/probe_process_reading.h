// Host readings of a probe launch taken from the probe process itself, as the host sees it: the
// cgroup limits that bind it, read in the host's own cgroupfs. A sandbox whose processes the
// host can see (bwrap, firejail, runc's containers) so gets a host reading without an `inspect`
// of its own, and one from the kernel that enforces it: bwrap-strict's CPU quota was "not
// readable" (no /sys inside, no inspect) and its verdict inconclusive; the host reads that its
// cgroup has none. A sandbox whose workload the host cannot see as a process (gVisor's sentry,
// a VM's guest) gets no reading here.
//
// The process is found by identity, never by name: its /proc/<pid>/exe is the probe binary
// (device and inode of the file the harness handed the sandbox: a bind mount shows the same
// inode) and this launch's nonce is one of its argv elements, so another run's probe or the
// sandbox's own wrapper (whose argv holds the nonce too) is never taken for it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace sandprobe {

// The tightest limit along a cgroup's directory chain, from the mount's top down to it.
struct CgroupLimits {
  std::string cpu_dir;               // the probe's cpu cgroup directory ("" when not found)
  std::optional<double> cpu_cores;   // the tightest quota / period; nullopt: none anywhere
  std::string pids_dir;              // the probe's pids cgroup directory
  std::optional<long long> pids_max; // the tightest pids.max; nullopt: "max" everywhere
  std::string memory_dir;            // the probe's memory cgroup directory
  // The tightest memory limit (v1 memory.limit_in_bytes, v2 memory.max); nullopt: none (v1
  // writes a page-rounded LLONG_MAX for none: anything from 2^60 up counts as none).
  std::optional<long long> memory_limit_bytes;
  int memory_version = 0;            // 1 or 2: which file holds the peak (MemoryPeakFile)
};

// The file of `dir` holding the memory cgroup's high-water mark: v1 memory.max_usage_in_bytes,
// v2 memory.peak (kernel 5.19+).
std::string MemoryPeakFile(const std::string& dir, int version);

// Reads the limits of the process whose /proc/<pid>/cgroup text is `cgroup_text`, through the
// cgroup mounts in `mountinfo` (the harness's /proc/self/mountinfo), with `read` for files.
CgroupLimits ReadCgroupLimits(const std::string& cgroup_text, const std::string& mountinfo,
                              const std::function<std::optional<std::string>(const std::string&)>& read);

// The readings one launch adds to its host readings (launch id -> {name: value}):
//   probe_host_pid, host_cgroup_cpu_dir, host_cgroup_cpu_quota_cores (-1: no quota),
//   host_cgroup_pids_dir, host_cgroup_pids_max (-1: no limit),
//   host_cgroup_memory_dir, host_cgroup_memory_limit_bytes (-1: no limit), and, added by the
//   watch while the probe runs, host_cgroup_memory_peak_bytes (the last high-water mark read).
// The watch adds probe_host_session (field 6 of the probe's /proc/<pid>/stat, in the host's
// pid namespace) and harness_session (getsid(0): the launcher keeps its children in it, so a
// sandbox that makes no session of its own, bwrap without --new-session, shares it).
nlohmann::json LimitsAsReadings(pid_t pid, const CgroupLimits& limits);

// The session id in a /proc/<pid>/stat text (its 6th field, counted after the ")" that ends the
// command name, which may hold spaces and parentheses); nullopt when the text is not one.
std::optional<long long> SessionOfStat(const std::string& stat_text);

// Watches /proc for the probe process of one launch (every 10 ms, from construction until
// Stop) and reads its limits once found.
class ProbeProcessWatch {
 public:
  ProbeProcessWatch(const std::string& probe_binary, std::string nonce);
  ~ProbeProcessWatch();
  ProbeProcessWatch(const ProbeProcessWatch&) = delete;
  ProbeProcessWatch& operator=(const ProbeProcessWatch&) = delete;
  // Stops watching; the readings (an empty object when the probe was not seen).
  nlohmann::json Stop();

 private:
  void Watch();
  void FollowMemoryPeak(const std::string& peak_file);
  // Waits one poll interval; false when Stop() came first (it wakes the wait at once, so the
  // end of a launch never waits out a poll interval).
  bool Pause();
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool known_ = false;
  std::string nonce_;
  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_wake_;
  nlohmann::json readings_ = nlohmann::json::object();
  std::thread thread_;
};

}  // namespace sandprobe
