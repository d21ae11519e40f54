#include "launch/deadline.h"

#include <algorithm>

#include <fmt/format.h>

namespace sandprobe {

using std::chrono::milliseconds;

Deadline::Deadline(milliseconds limit, Clock clock) : clock_(std::move(clock)) {
  if (limit.count() > 0) at_ = clock_() + limit;
}

milliseconds Deadline::Remaining() const { return Until(at_, milliseconds::max()).limit; }

Deadline::Bound Deadline::Until(std::optional<std::chrono::steady_clock::time_point> at,
                                milliseconds own) const {
  if (!at) return Bound{own, false};
  auto left = std::max(std::chrono::duration_cast<milliseconds>(*at - clock_()), milliseconds(0));
  if (left < own) return Bound{left, true};
  return Bound{own, false};
}

Deadline::Bound Deadline::For(milliseconds own) const { return Until(at_, own); }

Deadline::Bound Deadline::ForRemoval(milliseconds own) const {
  if (!at_) return Bound{own, false};
  using TimePoint = std::chrono::steady_clock::time_point;
  std::chrono::steady_clock::rep expected = 0;
  TimePoint opens = std::max(*at_, clock_());
  // The first removal fixes the window for all: later ones share what is left of it.
  removals_open_->compare_exchange_strong(expected, opens.time_since_epoch().count());
  TimePoint opened{TimePoint::duration(removals_open_->load())};
  return Until(opened + kRemovalWindow, own);
}

std::string DescribeCut(const Deadline::Bound& bound, milliseconds own) {
  if (!bound.cut) return "";
  if (bound.nothing_left()) return "not started: the run's deadline had passed";
  return fmt::format("timeout cut from {} ms to {} ms by the run's deadline", own.count(),
                     bound.limit.count());
}

}  // namespace sandprobe
