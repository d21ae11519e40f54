#include "run/run_watchdog.h"

#include <fmt/format.h>

namespace sandprobe {
namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
}  // namespace

RunWatchdog::RunWatchdog(Options options)
    : options_(std::move(options)), started_(Clock::now()) {
  thread_ = std::thread([this] { Watch(); });
}

RunWatchdog::~RunWatchdog() {
  {
    std::lock_guard lock(done_mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  thread_.join();
}

void RunWatchdog::Progress() {
  last_progress_ms_ =
      std::chrono::duration_cast<milliseconds>(Clock::now() - started_).count();
}

std::string RunWatchdog::why() const {
  std::lock_guard lock(why_mutex_);
  return why_;
}

void RunWatchdog::Stop(const std::string& why) {
  {
    std::lock_guard lock(why_mutex_);
    if (why_.empty()) why_ = why;
  }
  stop_ = true;
}

void RunWatchdog::Watch() {
  bool stalled = false;
  for (;;) {
    {
      std::unique_lock lock(done_mutex_);
      if (done_changed_.wait_for(lock, milliseconds(50), [this] { return done_; })) return;
    }
    auto now_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - started_).count();
    if (options_.interrupt && options_.interrupt->load()) Stop("interrupted");
    if (options_.run_timeout.count() > 0 &&
        now_ms >= std::chrono::duration_cast<milliseconds>(options_.run_timeout).count()) {
      Stop(fmt::format("run timeout after {} s (--timeout)", options_.run_timeout.count()));
    }
    if (options_.stall_after.count() <= 0) continue;
    auto quiet_ms = now_ms - last_progress_ms_.load();
    auto stall_ms = std::chrono::duration_cast<milliseconds>(options_.stall_after).count();
    if (!stalled && quiet_ms >= stall_ms) {
      stalled = true;
      Stop(fmt::format("watchdog: no launch started or ended for {} s; launches killed",
                       options_.stall_after.count()));
    }
    auto grace_ms = std::chrono::duration_cast<milliseconds>(options_.stall_grace).count();
    if (stalled && quiet_ms >= stall_ms + grace_ms && options_.on_stalled) {
      auto on_stalled = std::move(options_.on_stalled);
      options_.on_stalled = nullptr;
      on_stalled(why());
    }
  }
}

}  // namespace sandprobe
