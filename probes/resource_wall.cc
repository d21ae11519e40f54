// res.wall: does the sandbox end a launch after its declared wall-clock limit? Sleeps the
// given seconds (the declared limit plus a margin, at most 20 s), one progress frame per
// second; reaching the end means nothing stopped it.
#include <time.h>

#include "probes/resource_families.h"

namespace sandprobe {

std::string CheckResWallArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.wall", args, {{"ceiling-seconds", kMaxWallSeconds}}, false);
}

void RunResWall(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.wall", args, {{"ceiling-seconds", kMaxWallSeconds}}, false);
  const long seconds = parsed.Number("ceiling-seconds");
  const long start = MonotonicMs();
  for (long s = 1; s <= seconds; ++s) {
    struct timespec next = {1, 0};
    while (nanosleep(&next, &next) != 0) {
    }
    ctx.out.Emit({{"family", "res.wall"}, {"kind", "progress"}, {"seconds", s}});
  }
  ctx.out.Emit({{"family", "res.wall"}, {"kind", "result"}, {"ceiling_seconds", seconds},
                {"elapsed_ms", MonotonicMs() - start}, {"stopped_by", "ceiling"}});
}

}  // namespace sandprobe
