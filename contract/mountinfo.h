// Parsing /proc/<pid>/mountinfo (proc(5)): shared by the probe (fs.mounts, fs.alias mount_root,
// fs.write's mount flags) and the runner (the host's own mounts). Header-only, no dependencies.
//
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)    (10)         (11)
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace sandprobe {

// Bounds: a mount table larger than this is reported as truncated, never read whole.
inline constexpr std::size_t kMaxMountinfoBytes = 1 << 20;
inline constexpr std::size_t kMaxMounts = 512;

struct MountEntry {
  int mount_id = 0;
  int parent_id = 0;
  unsigned major = 0, minor = 0;  // st_dev of the filesystem (kernel-wide, not namespaced)
  std::string root;               // the path inside the filesystem that is mounted here
  std::string mount_point;        // relative to the reader's root
  std::string mount_options;      // per-mount: "ro,nosuid,..."
  std::string fstype;
  std::string source;             // "/dev/vda", "tmpfs", "overlay" (what the mounter said)
  std::string super_options;      // per-superblock: "rw,errors=continue"
};

// A device number as every fact and witness writes it: "MAJOR:MINOR" (st_dev; mountinfo's
// third field).
inline std::string DeviceText(unsigned major, unsigned minor) {
  return std::to_string(major) + ":" + std::to_string(minor);
}

// proc(5) escapes space, tab, newline and backslash in paths as \ooo.
inline std::string UnescapeMountField(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() &&
        field[i + 1] >= '0' && field[i + 1] <= '3' && field[i + 2] >= '0' && field[i + 2] <= '7' &&
        field[i + 3] >= '0' && field[i + 3] <= '7') {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// Whether comma-separated `options` holds `flag` ("ro").
inline bool HasMountOption(const std::string& options, const std::string& flag) {
  std::size_t start = 0;
  while (start <= options.size()) {
    std::size_t end = options.find(',', start);
    if (end == std::string::npos) end = options.size();
    if (options.compare(start, end - start, flag) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Lines that do not parse are skipped; at most kMaxMounts entries (`truncated` says so).
inline std::vector<MountEntry> ParseMountinfo(const std::string& text, bool* truncated = nullptr) {
  std::vector<MountEntry> mounts;
  if (truncated != nullptr) *truncated = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (mounts.size() == kMaxMounts) {
      if (truncated != nullptr) *truncated = true;
      break;
    }
    std::istringstream fields(line);
    MountEntry m;
    std::string dev, root, point, field;
    if (!(fields >> m.mount_id >> m.parent_id >> dev >> root >> point >> m.mount_options)) continue;
    bool separator = false;
    while (fields >> field) {  // optional fields up to "-"
      if (field == "-") {
        separator = true;
        break;
      }
    }
    std::string source;
    if (!separator || !(fields >> m.fstype >> source)) continue;
    fields >> m.super_options;
    std::size_t colon = dev.find(':');
    if (colon == std::string::npos) continue;
    // from_chars, not stoul: no exceptions (the wasm32-wasi probe is built without them).
    const char* dev_end = dev.data() + dev.size();
    const auto got_major = std::from_chars(dev.data(), dev.data() + colon, m.major);
    const auto got_minor = std::from_chars(dev.data() + colon + 1, dev_end, m.minor);
    if (got_major.ec != std::errc() || got_major.ptr != dev.data() + colon ||
        got_minor.ec != std::errc() || got_minor.ptr != dev_end) {
      continue;
    }
    m.root = UnescapeMountField(root);
    m.mount_point = UnescapeMountField(point);
    m.source = UnescapeMountField(source);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

// Reads a mount table through `fd` (opened by the caller; closed here), at most
// kMaxMountinfoBytes. `error` set on a failed read (the text read until then is returned).
inline std::string ReadOpenedMountinfoText(int fd, int* error) {
  *error = 0;
  std::string text;
  char buf[8192];
  while (text.size() < kMaxMountinfoBytes) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = errno;
      break;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// Reads `path` (default: this process's mount table), at most kMaxMountinfoBytes. Empty text
// and `error` set on failure.
inline std::string ReadMountinfoText(int* error, const std::string& path = "/proc/self/mountinfo") {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return "";
  }
  return ReadOpenedMountinfoText(fd, error);
}

// The mount that holds absolute, normalised `path`: the last entry (mounts stack in order)
// whose mount point is `path` or a parent directory of it; nullptr when none.
inline const MountEntry* MountHolding(const std::vector<MountEntry>& mounts, const std::string& path) {
  const MountEntry* best = nullptr;
  for (const MountEntry& m : mounts) {
    const std::string& p = m.mount_point;
    bool holds = p == "/" || path == p ||
                 (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '/');
    if (holds && (best == nullptr || p.size() >= best->mount_point.size())) best = &m;
  }
  return best;
}

}  // namespace sandprobe
