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
#include "io/run_root.h"
#include "io/sigpipe_block.h"
#include "io/write_temp.h"

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

// Another uid's file at a report path: refused (see ReplaceableAt).
Status ForeignOwner(const std::string& path, uid_t owner) {
  return Status::Error(fmt::format(
      "\"{}\": owned by uid {}, not by this user (uid {}): refusing to replace another user's "
      "file (remove it, or write the report elsewhere)", path, owner, ::geteuid()));
}

// What an existing target is, seen from its directory: a regular file of this uid, or nothing
// (nullopt). Anything else is refused: a link, device, FIFO, socket or directory is never
// renamed over, and another uid's file is never replaced (its owner could not be kept, or, as
// root, a file the other user owns would be handed a new inode root made).
StatusOr<std::optional<struct stat>> ReplaceableAt(int dir_fd, const std::string& base,
                                                  const std::string& path) {
  struct stat st {};
  if (::fstatat(dir_fd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    if (err == ENOENT) return std::optional<struct stat>();
    return ErrnoStatus(err, fmt::format("lstat(\"{}\")", path));
  }
  if (S_ISDIR(st.st_mode)) return ErrnoStatus(EISDIR, fmt::format("\"{}\"", path));
  if (!S_ISREG(st.st_mode)) {
    return Status::Error(fmt::format(
        "\"{}\": not a regular file (a link, device, FIFO or socket): refusing to replace it", path));
  }
  if (st.st_uid != ::geteuid()) return ForeignOwner(path, st.st_uid);
  return std::optional<struct stat>(st);
}

// The temp file's mode and group: an existing target's (its owner is ours already, see
// ReplaceableAt); else `fixed` when given; else what open(0666) made of the umask. A group the
// file cannot be given (not ours) loses its permission bits instead: never wider than before.
Status MatchModeAndGroup(int fd, const std::string& temp, const std::optional<struct stat>& existing,
                         std::optional<mode_t> fixed) {
  if (fixed) {
    if (::fchmod(fd, *fixed) != 0) {
      const int err = errno;
      return ErrnoStatus(err, fmt::format("fchmod(\"{}\")", temp));
    }
    return Status::Ok();
  }
  if (!existing) return Status::Ok();
  mode_t mode = existing->st_mode & 0777;
  struct stat made {};
  if (::fstat(fd, &made) == 0 && made.st_gid != existing->st_gid && ::fchown(fd, -1, existing->st_gid) != 0) {
    mode &= ~static_cast<mode_t>(070);
  }
  if (::fchmod(fd, mode) != 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("fchmod(\"{}\")", temp));
  }
  return Status::Ok();
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
      // ResolveOutput found a regular file or nothing: only another uid's file is refused.
      if (::lstat(target.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid != ::geteuid()) {
        return ForeignOwner(target.path, st.st_uid);
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

// An absolute form of `dir` for the journal; "" when the working directory is unknown.
std::string AbsoluteDir(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  std::array<char, PATH_MAX> cwd{};
  if (::getcwd(cwd.data(), cwd.size()) == nullptr) return "";
  return dir == "." ? std::string(cwd.data()) : fmt::format("{}/{}", cwd.data(), dir);
}

// WriteFileAtomically in its opened directory: the temp file (created O_EXCL, never through a
// link), its mode and group, the contents, a last check of the target, the rename.
Status WriteInDirectory(int dir_fd, const std::string& dir, const std::string& base, const std::string& path,
                        std::string_view contents, const AtomicWriteOptions& options) {
  StatusOr<std::optional<struct stat>> existing = ReplaceableAt(dir_fd, base, path);
  if (!existing.ok()) return existing.status();
  RemoveDeadTemps(dir_fd, base);  // what a killed writer of this target left
  const std::string temp_name = NewTempName(base);
  const std::string temp = fmt::format("{}/{}", dir, temp_name);
  const std::string absolute = options.journal ? AbsoluteDir(dir) : "";
  WriteJournalEntry journal = absolute.empty()
      ? WriteJournalEntry()
      : WriteJournalEntry::Record(RunDirParent(), fmt::format("{}/{}", absolute, temp_name));
  // 0666: the kernel takes the umask off a new report (options.mode replaces it below).
  const int fd = ::openat(dir_fd, temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          options.mode.value_or(0666));
  if (fd < 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("open(\"{}\", O_CREAT|O_EXCL)", temp));
  }
  Status status = MatchModeAndGroup(fd, temp, *existing, options.mode);
  if (status.ok()) status = WriteAll(fd, contents, fmt::format("\"{}\"", temp));
  if (::close(fd) != 0 && status.ok()) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("close(\"{}\")", temp));
  }
  // Again just before the rename: the run may have taken minutes.
  if (status.ok()) status = ReplaceableAt(dir_fd, base, path).status();
  if (status.ok() && ::renameat(dir_fd, temp_name.c_str(), dir_fd, base.c_str()) != 0) {
    const int err = errno;
    status = ErrnoStatus(err, fmt::format("rename(\"{}\" -> \"{}\")", temp, path));
  }
  if (!status.ok()) ::unlinkat(dir_fd, temp_name.c_str(), 0);
  return status;
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
      Status written = WriteFileAtomically(target->path, contents, {.journal = true});
      if (target->path == path) return written;
      return written.WithContext(fmt::format("through symlink \"{}\"", path));
    }
    case OutputKind::kWriteThrough:
      return WriteThrough(*target, contents).WithContext(fmt::format("write \"{}\"", path));
  }
  return Status::Error("unknown output kind");
}

Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           const AtomicWriteOptions& options) {
  const std::string base = BaseOf(path);
  if (base.empty() || base == "." || base == "..") {
    return Status::Error(fmt::format("write \"{}\": not a file name", path));
  }
  const std::string dir = DirectoryOf(path);
  // Every step below is relative to this one directory: a directory swapped for a link while
  // the report is written cannot send the temp file or the rename elsewhere.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("open(\"{}\")", dir)).WithContext(fmt::format("write \"{}\"", path));
  }
  Status status = WriteInDirectory(dir_fd, dir, base, path, contents, options);
  ::close(dir_fd);
  return status.WithContext(fmt::format("write \"{}\"", path));
}

Status WriteToStdout(std::string_view contents) { return WriteStream(1, contents); }

std::string DirectoryOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace sandprobe
