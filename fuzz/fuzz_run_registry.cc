// Any owner.json a run dir may hold (another sandprobe's, a torn write, a hostile one): the
// registry's reader returns a Status, never crashes, and what it accepts holds only what a sweep
// may act on (a positive pid, process tokens of the safe form, planted-file tokens of it too).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "launch/run_registry.h"

namespace {

// One scratch run dir for the whole fuzzing process, removed at exit (the path is never
// freed, so the exit handler can still read it).
const std::string& RunRoot() {
  static const std::string* root = [] {
    auto* dir = new std::string((std::filesystem::temp_directory_path() / "sp-fuzz-registry-XXXXXX").string());
    if (::mkdtemp(dir->data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(RunRoot(), ec);
    });
    return dir;
  }();
  return *root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(RunRoot() + "/owner.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto owner = sandprobe::LoadOwner(RunRoot());
  if (!owner.ok()) return 0;
  if (owner->pid <= 0) std::abort();
  for (const std::string& token : owner->process_tokens) {
    if (!sandprobe::IsProcessToken(token)) std::abort();
  }
  for (const sandprobe::PlantedFiles& planted : owner->planted_files) {
    if (!sandprobe::IsProcessToken(planted.token)) std::abort();
  }
  return 0;
}
