#include "probes/read_path.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "probes/errno_name.h"
#include "probes/families.h"
#include "probes/sha256.h"

namespace sandprobe {
namespace {

void SetFailure(nlohmann::json& fact, const char* step, int err) {
  fact["ok"] = false;
  fact["step"] = step;
  fact["errno"] = ErrnoName(err);
}

// Lists up to kMaxDirEntries names; `fd` is consumed (closedir closes it). The hash is over the
// sorted names so it does not depend on the filesystem's readdir order.
void ListDirectory(int fd, nlohmann::json& fact) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    SetFailure(fact, "readdir", errno);
    ::close(fd);
    return;
  }
  std::vector<std::string> names;
  bool truncated = false;
  int read_errno = 0;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      read_errno = errno;
      break;
    }
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    if (names.size() == kMaxDirEntries) {
      truncated = true;  // one name past the cap proves there are more
      break;
    }
    names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  if (read_errno != 0) {
    SetFailure(fact, "readdir", read_errno);
    return;
  }
  std::sort(names.begin(), names.end());
  std::string joined;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += '\n';
    joined += names[i];
  }
  fact["ok"] = true;
  fact["kind"] = "dir";
  fact["entries"] = names.size();
  fact["truncated"] = truncated;
  fact["sha256"] = Sha256Hex(joined);
}

// Reads up to kMaxReadBytes, plus one byte to learn whether there was more. The extra byte is
// never hashed or counted, so "bytes" and "sha256" describe exactly the first 4 KiB.
void ReadContent(int fd, const struct stat& st, nlohmann::json& fact) {
  std::string buf(kMaxReadBytes + 1, '\0');
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      SetFailure(fact, "read", errno);
      ::close(fd);
      return;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  const bool truncated = got > kMaxReadBytes;
  buf.resize(std::min(got, kMaxReadBytes));
  fact["ok"] = true;
  fact["kind"] = S_ISREG(st.st_mode) ? "file" : "other";
  fact["bytes"] = buf.size();
  fact["truncated"] = truncated;
  fact["sha256"] = Sha256Hex(buf);
}

}  // namespace

void ReadPathFacts(const std::string& path, nlohmann::json& fact) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    SetFailure(fact, "open", errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    SetFailure(fact, "fstat", errno);
    ::close(fd);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    ListDirectory(fd, fact);
  } else {
    ReadContent(fd, st, fact);
  }
}

}  // namespace sandprobe
