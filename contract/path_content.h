// ReadPathContent: the one definition of "what reading a path shows", shared by the probe (which
// reports the sha256 of it from inside the sandbox) and the runner (which hashes the host's own
// copy of every denied path the same way, so a decoy can be told apart from the host's data).
//
// Header-only and free of the probe's and the runner's libraries (each side hashes with its own
// Sha256Hex): a file is its first kMaxReadBytes bytes; a directory is its entry names without
// "." and "..", at most kMaxDirEntries of them (in readdir order), sorted and joined by "\n".
//
// Opens with O_NONBLOCK|O_NOCTTY|O_CLOEXEC so a FIFO or a tty cannot hang the reader or become
// its controlling terminal; symlinks are followed (the fs.alias symlink variant relies on it).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#if !defined(__wasi__)
#include <sys/sysmacros.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace sandprobe {

inline constexpr std::size_t kMaxReadBytes = 4096;
inline constexpr std::size_t kMaxDirEntries = 1024;

struct PathContent {
  enum class Kind { kFile, kDir, kOther };
  bool ok = false;
  const char* step = "";  // on failure: "open" | "fstat" | "read" | "readdir"
  int error = 0;          // on failure: the errno
  Kind kind = Kind::kOther;
  std::string hashed;     // what is hashed: the bytes read, or the sorted names joined by "\n"
  std::size_t entries = 0;  // directories: names listed
  bool truncated = false;   // more bytes or names than the caps
  // The opened object's identity (fstat): the same device and inode as the host's copy means
  // the host's object itself, whatever its content.
  bool stat_ok = false;  // fstat succeeded: dev and ino are set
  unsigned dev_major = 0, dev_minor = 0;
  unsigned long long ino = 0;
};

inline const char* PathKindName(PathContent::Kind kind) {
  switch (kind) {
    case PathContent::Kind::kFile: return "file";
    case PathContent::Kind::kDir: return "dir";
    case PathContent::Kind::kOther: return "other";
  }
  return "other";
}

namespace path_content_detail {

inline void Fail(PathContent& c, const char* step, int err) {
  c.ok = false;
  c.step = step;
  c.error = err;
}

// Lists up to kMaxDirEntries names; `fd` is consumed. The names are sorted so the hash does not
// depend on the filesystem's readdir order.
inline void ListDirectory(int fd, PathContent& c) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    Fail(c, "readdir", errno);
    ::close(fd);
    return;
  }
  std::vector<std::string> names;
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
      c.truncated = true;  // one name past the cap proves there are more
      break;
    }
    names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  if (read_errno != 0) return Fail(c, "readdir", read_errno);
  std::sort(names.begin(), names.end());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) c.hashed += '\n';
    c.hashed += names[i];
  }
  c.ok = true;
  c.kind = PathContent::Kind::kDir;
  c.entries = names.size();
}

// Reads up to kMaxReadBytes, plus one byte to learn whether there was more; the extra byte is
// never hashed or counted.
inline void ReadContent(int fd, const struct stat& st, PathContent& c) {
  std::string buf(kMaxReadBytes + 1, '\0');
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Fail(c, "read", errno);
      ::close(fd);
      return;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  c.truncated = got > kMaxReadBytes;
  buf.resize(std::min(got, kMaxReadBytes));
  c.ok = true;
  c.kind = S_ISREG(st.st_mode) ? PathContent::Kind::kFile : PathContent::Kind::kOther;
  c.hashed = std::move(buf);
}

}  // namespace path_content_detail

// What reading shows through `fd`, a descriptor the caller opened with kPathContentOpenFlags (the
// harness opens inside another root: witnesses/witness_host_view.h). Closes `fd`.
inline constexpr int kPathContentOpenFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
inline PathContent ReadOpenedPathContent(int fd) {
  PathContent c;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    path_content_detail::Fail(c, "fstat", errno);
    ::close(fd);
    return c;
  }
  c.stat_ok = true;
#if defined(__wasi__)
  // WASI has no major()/minor(): its st_dev is the host's dev_t as the runtime passes it on
  // (Node's uvwasi: stat(2)'s own number), split the way glibc's sysmacros split it.
  const unsigned long long dev = st.st_dev;
  c.dev_major = static_cast<unsigned>(((dev >> 8) & 0xfffu) | ((dev >> 32) & ~0xfffull));
  c.dev_minor = static_cast<unsigned>((dev & 0xffu) | ((dev >> 12) & ~0xffull));
#else
  c.dev_major = major(st.st_dev);
  c.dev_minor = minor(st.st_dev);
#endif
  c.ino = st.st_ino;
  if (S_ISDIR(st.st_mode)) {
    path_content_detail::ListDirectory(fd, c);
  } else {
    path_content_detail::ReadContent(fd, st, c);
  }
  return c;
}

inline PathContent ReadPathContent(const std::string& path) {
  const int fd = ::open(path.c_str(), kPathContentOpenFlags);
  if (fd < 0) {
    PathContent c;
    path_content_detail::Fail(c, "open", errno);
    return c;
  }
  return ReadOpenedPathContent(fd);
}

}  // namespace sandprobe
