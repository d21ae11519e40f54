#include "io/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "model/errno_text.h"
#include "io/sigpipe_block.h"

namespace sandprobe {
namespace {

constexpr int kMaxSymlinkHops = 40;  // as the kernel's MAXSYMLINKS

// Takes errno as saved right after the failing call: formatting the operation allocates,
// which may clobber errno.
Status ErrnoStatus(int err, const std::string& operation) {
  return Status::Error(fmt::format("{}: {}", operation, ErrnoText(err)));
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return ErrnoStatus(err, fmt::format("write({})", what));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The names of the harness's own stdout and stderr. Checked at every hop of a symlink chain,
// so `out/r.json -> /dev/stdout` is stdout too (its next hop, /proc/self/fd/1, is a magic
// link whose text is "pipe:[123]", not a path).
std::optional<int> StreamFd(const std::string& path) {
  static const std::map<std::string, int> kNames = {
      {"-", 1},          {"/dev/stdout", 1},     {"/dev/fd/1", 1}, {"/proc/self/fd/1", 1},
      {"/dev/stderr", 2}, {"/dev/fd/2", 2},      {"/proc/self/fd/2", 2}};
  auto it = kNames.find(path);
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

// /proc/<pid>/fd/N and /dev/fd/N are magic links: their text is not always a path.
bool IsFdLink(const std::string& path) {
  return path.rfind("/dev/fd/", 0) == 0 ||
         (path.rfind("/proc/", 0) == 0 && path.find("/fd/") != std::string::npos);
}

// What a non-link file type means for a report written there.
StatusOr<OutputTarget> ByFileType(const std::string& path, mode_t mode) {
  if (S_ISREG(mode)) return OutputTarget{.kind = OutputKind::kReplace, .path = path};
  if (S_ISCHR(mode)) return OutputTarget{.kind = OutputKind::kWriteThrough, .path = path};
  if (S_ISFIFO(mode)) {
    return OutputTarget{.kind = OutputKind::kWriteThrough, .path = path, .fifo = true};
  }
  if (S_ISDIR(mode)) return Status::Error(fmt::format("\"{}\": a directory, not a file", path));
  if (S_ISBLK(mode)) {
    return Status::Error(
        fmt::format("\"{}\": a block device: refusing to write a report over it", path));
  }
  if (S_ISSOCK(mode)) return Status::Error(fmt::format("\"{}\": a socket, not a file", path));
  return Status::Error(fmt::format("\"{}\": file type {:o}, not a file", path, mode & S_IFMT));
}

// Follows one symlink hop; refuses a link planted by another user.
StatusOr<std::string> NextHop(const std::string& link, const struct stat& st) {
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return Status::Error(fmt::format(
        "\"{}\": a symlink owned by uid {} (neither you nor root): refusing to follow it",
        link, st.st_uid));
  }
  std::array<char, PATH_MAX> buffer{};
  const ssize_t n = ::readlink(link.c_str(), buffer.data(), buffer.size() - 1);
  if (n < 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("readlink(\"{}\")", link));
  }
  const std::string target(buffer.data(), static_cast<std::size_t>(n));
  if (target.empty()) return Status::Error(fmt::format("readlink(\"{}\"): empty", link));
  return target[0] == '/' ? target : DirectoryOf(link) + "/" + target;
}

Status WriteStream(int fd, std::string_view contents) {
  FILE* stream = fd == 1 ? stdout : stderr;
  if (fd == 2) std::fflush(stdout);  // keeps the order of what both show on one terminal
  if (std::fwrite(contents.data(), 1, contents.size(), stream) != contents.size() ||
      std::fflush(stream) != 0) {
    const int err = errno;
    return ErrnoStatus(err, fd == 1 ? "write(stdout)" : "write(stderr)");
  }
  return Status::Ok();
}

// A device or FIFO: written, never replaced or truncated.
Status WriteThrough(const OutputTarget& target, std::string_view contents) {
  const std::string& path = target.path;
  // O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of blocking the open forever.
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO && target.fifo) {
      return Status::Error(fmt::format(
          "open(\"{}\"): ENXIO: a FIFO with no reader (start the reader before the run ends)",
          path));
    }
    return ErrnoStatus(err, fmt::format("open(\"{}\")", path));
  }
  struct stat st {};
  Status status = Status::Ok();
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("fstat(\"{}\")", path));
  } else if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    status = Status::Error(fmt::format(
        "\"{}\": no longer a device or FIFO (it changed during the run): not written", path));
  } else if (const int flags = ::fcntl(fd, F_GETFL);
             flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("fcntl(\"{}\", F_SETFL)", path));
  } else {
    ScopedSigpipeBlock sigpipe_block;  // a reader that quits: EPIPE, not a dead harness
    status = WriteAll(fd, contents, fmt::format("\"{}\"", path));
  }
  if (::close(fd) != 0 && status.ok()) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("close(\"{}\")", path));
  }
  return status;
}

// Fills the open temp file; the caller closes, renames or removes it.
Status Fill(int fd, const std::string& temp, std::string_view contents) {
  if (::fchmod(fd, 0644) != 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("fchmod(\"{}\")", temp));
  }
  return WriteAll(fd, contents, fmt::format("\"{}\"", temp));
}

// Only a regular file or a missing name may be renamed over.
Status CheckReplaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::Ok();
    return ErrnoStatus(err, fmt::format("lstat(\"{}\")", path));
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  if (S_ISDIR(st.st_mode)) return ErrnoStatus(EISDIR, fmt::format("\"{}\"", path));
  return Status::Error(fmt::format(
      "\"{}\": not a regular file (a link, device, FIFO or socket): refusing to replace it",
      path));
}

// Before the run: what `target` needs to be writable at the end.
Status CheckWritable(const OutputTarget& target) {
  switch (target.kind) {
    case OutputKind::kStream: {
      const int flags = ::fcntl(target.fd, F_GETFL);
      if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
        return Status::Error(fmt::format("fd {} is not open for writing", target.fd));
      }
      return Status::Ok();
    }
    case OutputKind::kWriteThrough:
      if (::access(target.path.c_str(), W_OK) != 0) {
        const int err = errno;
        return ErrnoStatus(err, fmt::format("access(\"{}\", W_OK)", target.path));
      }
      return Status::Ok();
    case OutputKind::kReplace: {
      const std::string base = BaseOf(target.path);
      if (base.empty() || base == "." || base == "..") {
        return Status::Error(fmt::format("\"{}\": not a file name", target.path));
      }
      const std::string dir = DirectoryOf(target.path);
      struct stat st {};
      if (::stat(dir.c_str(), &st) != 0) {
        const int err = errno;
        return ErrnoStatus(err, fmt::format("stat(\"{}\")", dir));
      }
      if (!S_ISDIR(st.st_mode)) return ErrnoStatus(ENOTDIR, fmt::format("\"{}\"", dir));
      if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        const int err = errno;
        return ErrnoStatus(err, fmt::format("access(\"{}\", W_OK)", dir));
      }
      return Status::Ok();
    }
  }
  return Status::Error("unknown output kind");
}

// Two outputs with the same key would overwrite or interleave each other. Character devices
// have none: `--json /dev/null --junit /dev/null` harms nobody.
std::string SameTargetKey(const OutputTarget& target) {
  switch (target.kind) {
    case OutputKind::kStream: return target.fd == 1 ? "stdout" : "stderr";
    case OutputKind::kReplace: {
      std::array<char, PATH_MAX> dir{};
      const std::string parent = DirectoryOf(target.path);
      const bool real = ::realpath(parent.c_str(), dir.data()) != nullptr;
      return fmt::format("file {}/{}", real ? std::string(dir.data()) : parent,
                         BaseOf(target.path));
    }
    case OutputKind::kWriteThrough: {
      struct stat st {};
      if (!target.fifo || ::stat(target.path.c_str(), &st) != 0) return "";
      return fmt::format("the FIFO {} (inode {}:{})", target.path, st.st_dev, st.st_ino);
    }
  }
  return "";
}

}  // namespace

StatusOr<OutputTarget> ResolveOutput(const std::string& path) {
  if (path.empty()) return Status::Error("empty output path");
  std::string current = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    if (std::optional<int> fd = StreamFd(current)) {
      return OutputTarget{.kind = OutputKind::kStream, .fd = *fd};
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) return OutputTarget{.kind = OutputKind::kReplace, .path = current};
      return ErrnoStatus(err, fmt::format("lstat(\"{}\")", current));
    }
    if (!S_ISLNK(st.st_mode)) return ByFileType(current, st.st_mode);
    if (IsFdLink(current)) {
      // Another open file of ours: usable only when it is a pipe or a device.
      if (::stat(current.c_str(), &st) != 0) {
        const int err = errno;
        return ErrnoStatus(err, fmt::format("stat(\"{}\")", current));
      }
      if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return ByFileType(current, st.st_mode);
      return Status::Error(fmt::format(
          "\"{}\": a file descriptor link to something that is not a pipe or device: name the "
          "file itself", current));
    }
    StatusOr<std::string> next = NextHop(current, st);
    if (!next.ok()) return next.status();
    current = *next;
  }
  return ErrnoStatus(ELOOP, fmt::format("resolve \"{}\"", path));
}

bool WritesToStdout(const std::string& path) {
  if (path.empty()) return false;
  StatusOr<OutputTarget> target = ResolveOutput(path);
  return target.ok() && target->kind == OutputKind::kStream && target->fd == 1;
}

Status CheckReportOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::map<std::string, std::string> seen;  // SameTargetKey -> "--json r.json"
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    const std::string named = fmt::format("{} {}", flag, path);
    StatusOr<OutputTarget> target = ResolveOutput(path);
    if (!target.ok()) return target.status().WithContext(named);
    if (Status s = CheckWritable(*target); !s.ok()) return s.WithContext(named);
    const std::string key = SameTargetKey(*target);
    if (key.empty()) continue;
    if (auto [it, fresh] = seen.emplace(key, named); !fresh) {
      return Status::Error(fmt::format("{} and {} both write to {}: give each its own",
                                       it->second, named, key));
    }
  }
  return Status::Ok();
}

Status WriteReportOutput(const std::string& path, std::string_view contents) {
  StatusOr<OutputTarget> target = ResolveOutput(path);
  if (!target.ok()) return target.status().WithContext(fmt::format("write \"{}\"", path));
  switch (target->kind) {
    case OutputKind::kStream: return WriteStream(target->fd, contents);
    case OutputKind::kReplace: {
      Status written = WriteFileAtomically(target->path, contents);
      if (target->path == path) return written;
      return written.WithContext(fmt::format("through symlink \"{}\"", path));
    }
    case OutputKind::kWriteThrough:
      return WriteThrough(*target, contents).WithContext(fmt::format("write \"{}\"", path));
  }
  return Status::Error("unknown output kind");
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string base = BaseOf(path);
  if (base.empty()) return Status::Error(fmt::format("write \"{}\": not a file name", path));
  if (Status s = CheckReplaceable(path); !s.ok()) {
    return s.WithContext(fmt::format("write \"{}\"", path));
  }
  const std::string dir = DirectoryOf(path);
  std::string temp = fmt::format("{}/.{}.tmp.XXXXXX", dir, base);
  std::vector<char> buffer(temp.begin(), temp.end());
  buffer.push_back('\0');
  // O_CLOEXEC: the launcher may fork while a report is written.
  const int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("write \"{}\": mkostemp(\"{}\")", path, temp));
  }
  temp = buffer.data();

  Status status = Fill(fd, temp, contents);
  if (::close(fd) != 0 && status.ok()) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("close(\"{}\")", temp));
  }
  // Again just before the rename: the run may have taken minutes.
  if (status.ok()) status = CheckReplaceable(path);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("rename(\"{}\" -> \"{}\")", temp, path));
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status.WithContext(fmt::format("write \"{}\"", path));
  }
  return Status::Ok();
}

Status WriteToStdout(std::string_view contents) { return WriteStream(1, contents); }

}  // namespace sandprobe
