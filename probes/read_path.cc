#include "probes/read_path.h"

#include <sys/stat.h>

#include <string>

#include "contract/mountinfo.h"
#include "contract/errno_name.h"
#include "contract/path_content.h"
#include "contract/sha256.h"

namespace sandprobe {

void ReadPathFacts(const std::string& path, nlohmann::json& fact) {
  const PathContent c = ReadPathContent(path);
  if (c.stat_ok) {
    fact["dev"] = DeviceText(c.dev_major, c.dev_minor);
    fact["ino"] = c.ino;
  }
  if (!c.ok) {
    fact["ok"] = false;
    fact["step"] = c.step;
    fact["errno"] = ErrnoName(c.error);
    return;
  }
  fact["ok"] = true;
  fact["kind"] = PathKindName(c.kind);
  if (c.kind == PathContent::Kind::kDir) {
    fact["entries"] = c.entries;
  } else {
    fact["bytes"] = c.hashed.size();
  }
  fact["truncated"] = c.truncated;
  fact["sha256"] = Sha256Hex(c.hashed);
}

const char* FileKindName(mode_t mode) {
  if (S_ISDIR(mode)) return "dir";
  if (S_ISREG(mode)) return "file";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISCHR(mode)) return "char";
  if (S_ISBLK(mode)) return "block";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

}  // namespace sandprobe
