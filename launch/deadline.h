// Deadline: what is left of a run's time (--timeout), shared by every step that can block —
// probe launches and housekeeping alike (start, inspect, stop, cleanup, teardown, sweep,
// requires). Each step gets min(its own limit, what is left); a step with nothing left does
// not start, and the report says so (LaunchRecord::cut_short). A run without --timeout has an
// unbounded deadline: every step keeps its own limit.
//
// Steps that remove what the run made (stop, cleanup, teardown, sweep) share one short window
// past the deadline, kRemovalWindow: a run cut by --timeout would otherwise always leave its
// containers behind for a later `sandprobe sweep`, though removing one takes well under a
// second. The window opens at the deadline, or when the first removal asks after it (a probe
// launch killed at the deadline takes the launcher's kill grace to end, and its cleanup comes
// after that). So a run ends within its timeout + the kill grace + kRemovalWindow.
//
// The clock is injected so run unit tests can advance time without waiting.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sandprobe {

class Deadline {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // No deadline: Bound() always returns the step's own limit.
  Deadline() = default;
  // `limit` from now (by `clock`); a zero limit means none.
  Deadline(std::chrono::milliseconds limit, Clock clock);

  bool bounded() const { return at_.has_value(); }
  // What is left (zero once passed); the maximum duration when unbounded.
  std::chrono::milliseconds Remaining() const;

  // The limit a step may use: min(own, Remaining()).
  struct Bound {
    std::chrono::milliseconds limit{0};
    bool cut = false;  // the run's deadline, not the step's own limit, set `limit`
    bool nothing_left() const { return limit.count() <= 0; }
  };
  Bound For(std::chrono::milliseconds own) const;
  // The same for a step that removes what the run made: its deadline is kRemovalWindow later.
  Bound ForRemoval(std::chrono::milliseconds own) const;
  static constexpr std::chrono::milliseconds kRemovalWindow{2000};

 private:
  Bound Until(std::optional<std::chrono::steady_clock::time_point> at,
              std::chrono::milliseconds own) const;
  Clock clock_;
  std::optional<std::chrono::steady_clock::time_point> at_;
  // When the removal window opened (steady ticks; 0: not yet). Shared by copies of this
  // Deadline (the run's and its sandbox's) and set once, from any launch thread.
  std::shared_ptr<std::atomic<std::chrono::steady_clock::rep>> removals_open_ =
      std::make_shared<std::atomic<std::chrono::steady_clock::rep>>(0);
};

// What a step's record says when the deadline bounded it: "not started: the run's deadline
// had passed", "timeout cut from 60000 ms to 1200 ms by the run's deadline", or "" when the
// step kept its own limit.
std::string DescribeCut(const Deadline::Bound& bound, std::chrono::milliseconds own);

}  // namespace sandprobe
