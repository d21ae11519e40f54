// res.wall: does the sandbox end a launch after its declared wall-clock limit? Sleeps the
// given seconds (the declared limit plus a margin, at most 20 s) with a progress frame every
// 250 ms carrying the milliseconds slept so far: when the sandbox kills the probe, the last
// frame is its measurement (to 250 ms). Reaching the end means nothing stopped it.
//
// The probe's own deadline (probe_main.cc, 30 s by default) lies beyond every ceiling this
// family accepts, so an end before the result frame is never the probe's own doing (unless a
// shorter --deadline-ms was asked for, or earlier steps used up the time).
#include <time.h>

#include "probes/resource_families.h"

namespace sandprobe {

namespace {
constexpr long kProgressMs = 250;
}  // namespace

std::string CheckResWallArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.wall", args, {{"ceiling-seconds", kMaxWallSeconds}}, false);
}

void RunResWall(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.wall", args, {{"ceiling-seconds", kMaxWallSeconds}}, false);
  const long seconds = parsed.Number("ceiling-seconds");
  const long start = MonotonicMs();
  // Steps are counted from the start, not slept back to back, so the frames do not drift.
  for (long step = 1; step * kProgressMs <= seconds * 1000; ++step) {
    long wait_ms = start + step * kProgressMs - MonotonicMs();
    struct timespec next = {wait_ms / 1000, (wait_ms % 1000) * 1'000'000};
    while (wait_ms > 0 && nanosleep(&next, &next) != 0) {
    }
    StopIfPastDeadline();  // WASI's deadline, checked every step (natively SIGALRM ends the sleep)
    ctx.out.Emit({{"family", "res.wall"}, {"kind", "progress"},
                  {"elapsed_ms", MonotonicMs() - start}});
  }
  ctx.out.Emit({{"family", "res.wall"}, {"kind", "result"}, {"ceiling_seconds", seconds},
                {"elapsed_ms", MonotonicMs() - start}, {"stopped_by", "ceiling"}});
}

}  // namespace sandprobe
