// Any owner.json a run dir may hold (another sandprobe's, a torn write, a hostile one): the
// registry's parser returns a Status, never crashes, and what it accepts holds only what a sweep
// may act on (a positive pid, process tokens of the safe form, planted-file tokens of it too).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "launch/run_registry.h"

// The parser itself (ParseOwnerRecord), not LoadOwner: LoadOwner first refuses a file anyone but
// its owner could have written, which a fuzzer's scratch file may be, and the text is what an
// attacker controls.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto owner = sandprobe::ParseOwnerRecord(text, "owner.json");
  if (!owner.ok()) return 0;
  if (owner->pid <= 0) std::abort();
  for (const std::string& token : owner->process_tokens) {
    if (!sandprobe::IsProcessToken(token)) std::abort();
  }
  for (const sandprobe::PlantedFiles& planted : owner->planted_files) {
    if (!sandprobe::IsProcessToken(planted.token)) std::abort();
  }
  if (owner->sweeps) {
    // A recorded sweep is only run when both its argvs have something to run.
    for (const sandprobe::RecordedSweep& sweep : *owner->sweeps) {
      if (sweep.list.empty() || sweep.remove.empty()) std::abort();
      for (const std::vector<std::string>& pieces : sweep.remove) {
        if (pieces.empty()) std::abort();
      }
    }
  }
  return 0;
}
