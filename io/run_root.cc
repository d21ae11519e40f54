#include "io/run_root.h"

#include <cstdlib>

namespace sandprobe {

std::string RunDirParent() {
  const char* root = std::getenv(kRunRootEnv);
  return root != nullptr && root[0] == '/' ? std::string(root) : std::string(kRunDirParent);
}

}  // namespace sandprobe
