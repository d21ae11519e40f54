#include "reports/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "runner/errno_text.h"

namespace sandprobe {
namespace {

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

// Fills the open temp file; the caller closes, renames or removes it.
Status Fill(int fd, const std::string& temp, std::string_view contents) {
  if (::fchmod(fd, 0644) != 0) {
    const int err = errno;
    return ErrnoStatus(err, fmt::format("fchmod(\"{}\")", temp));
  }
  return WriteAll(fd, contents, fmt::format("\"{}\"", temp));
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const auto slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return Status::Error(fmt::format("write \"{}\": not a file name", path));
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

Status WriteToStdout(std::string_view contents) {
  if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() ||
      std::fflush(stdout) != 0) {
    const int err = errno;
    return ErrnoStatus(err, "write(stdout)");
  }
  return Status::Ok();
}

}  // namespace sandprobe
