// fs.read: can the sandboxed process read these paths? One fact per path.
#include <nlohmann/json.hpp>

#include "probes/families.h"
#include "probes/read_path.h"

namespace sandprobe {

std::string CheckPathList(const std::string& family, const FamilyArgs& paths) {
  if (paths.empty()) return family + ": no paths given";
  if (paths.size() > kMaxPathsPerFamily) {
    return family + ": " + std::to_string(paths.size()) + " paths, at most " +
           std::to_string(kMaxPathsPerFamily) + " per family";
  }
  for (const std::string& path : paths) {
    if (path.empty()) return family + ": empty path";
  }
  return "";
}

std::string CheckFsReadArgs(const FamilyArgs& args) { return CheckPathList("fs.read", args); }

void RunFsRead(const ProbeContext& ctx, const FamilyArgs& args) {
  for (const std::string& path : args) {
    nlohmann::json fact = {{"family", "fs.read"}};
    SetBytesField(fact, "path", path);
    ReadPathFacts(path, fact);
    ctx.out.Emit(fact);
  }
}

}  // namespace sandprobe
