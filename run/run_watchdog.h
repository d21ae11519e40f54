// RunWatchdog: one thread beside a run's launches that turns every reason to stop — an
// interrupt (SIGINT/SIGTERM), the run's own time limit (--timeout), a scheduler that stopped
// making progress — into the one flag the launches obey (their cancel flag), and says why.
//
// A stall is "no launch started or ended for `stall_after`": launches have their own
// timeouts, so that only happens when the harness itself is stuck. Then the flag is set (the
// running launches are killed); if the run still makes no progress for `stall_grace`,
// `on_stalled(why)` is called once — the CLI writes what it can and exits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sandprobe {

class RunWatchdog {
 public:
  struct Options {
    const std::atomic<bool>* interrupt = nullptr;
    std::chrono::seconds run_timeout{0};  // 0: none
    std::chrono::seconds stall_after{0};  // 0: no stall detection
    std::chrono::seconds stall_grace{30};
    std::function<void(const std::string& why)> on_stalled;
  };

  explicit RunWatchdog(Options options);
  ~RunWatchdog();  // ends the thread
  RunWatchdog(const RunWatchdog&) = delete;
  RunWatchdog& operator=(const RunWatchdog&) = delete;

  // A launch started or ended.
  void Progress();
  // The flag to hand to launches as their cancel flag.
  const std::atomic<bool>* stop_flag() const { return &stop_; }
  bool stopped() const { return stop_.load(); }
  // "" while running; "interrupted", "run timeout after 30 s" or "watchdog: ..." once stopped.
  std::string why() const;

 private:
  void Watch();
  void Stop(const std::string& why);

  Options options_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<std::int64_t> last_progress_ms_{0};  // since started_
  std::atomic<bool> stop_{false};
  std::mutex done_mutex_;
  std::condition_variable done_changed_;  // wakes the thread at once when the run ends
  bool done_ = false;
  mutable std::mutex why_mutex_;
  std::string why_;
  std::thread thread_;
};

}  // namespace sandprobe
