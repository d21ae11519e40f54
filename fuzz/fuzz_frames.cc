// Whatever a sandbox prints, ParseFrames must not crash, hang or call garbage complete.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "contract/frame_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool truncated : {false, true}) {
    sandprobe::ProbeFrames frames = sandprobe::ParseFrames(text, "n0nce", truncated);
    // Invariants: complete means one done frame and no protocol error; a cut stream never is.
    if (sandprobe::FramesComplete(frames) && (!frames.done || !frames.protocol_errors.empty())) std::abort();
    if (truncated && sandprobe::FramesComplete(frames)) std::abort();
    for (const auto& fact : frames.facts) {
      if (!fact.is_object() || !fact.contains("family")) std::abort();
    }
    (void)sandprobe::DescribeFrameProblems(frames);
  }
  return 0;
}
