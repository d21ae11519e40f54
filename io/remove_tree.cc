#include "io/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "model/errno_text.h"

namespace sandprobe {
namespace {

constexpr int kMaxDepth = 256;  // deeper than any workspace a probe makes; bounds the fds held

class TreeRemover {
 public:
  explicit TreeRemover(dev_t device) : device_(device) {}
  Status first_error() const { return error_.empty() ? Status::Ok() : Status::HarnessError(error_); }

  // Removes `name` in the directory `parent_fd` (shown as `path`).
  void Remove(int parent_fd, const std::string& name, const std::string& path, int depth) {
    struct stat st {};
    if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) Fail(errno, "lstat", path);
      return;
    }
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != device_) return Fail(EXDEV, "enter", path);  // a mount: not ours to empty
      if (depth >= kMaxDepth) return Fail(ELOOP, "enter", path);
      int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        // Swapped for a link or a file since the lstat: removed as what it is now.
        if (errno == ENOTDIR || errno == ELOOP) return Unlink(parent_fd, name, path, 0);
        if (errno != ENOENT) Fail(errno, "open", path);
        return;
      }
      Empty(fd, path, depth);
      ::close(fd);
      return Unlink(parent_fd, name, path, AT_REMOVEDIR);
    }
    Unlink(parent_fd, name, path, 0);
  }

 private:
  void Empty(int dir_fd, const std::string& path, int depth) {
    int list_fd = ::dup(dir_fd);
    DIR* dir = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
    if (dir == nullptr) {
      const int err = errno;
      if (list_fd >= 0) ::close(list_fd);
      return Fail(err, "opendir", path);
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(dir);
    for (const std::string& name : names) Remove(dir_fd, name, path + "/" + name, depth + 1);
  }

  void Unlink(int parent_fd, const std::string& name, const std::string& path, int flags) {
    if (::unlinkat(parent_fd, name.c_str(), flags) != 0 && errno != ENOENT) {
      Fail(errno, flags == AT_REMOVEDIR ? "rmdir" : "unlink", path);
    }
  }

  void Fail(int err, const char* call, const std::string& path) {
    if (error_.empty()) error_ = fmt::format("{}(\"{}\"): {}", call, path, ErrnoText(err));
  }

  dev_t device_;
  std::string error_;
};

}  // namespace

Status RemoveTree(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  std::size_t slash = trimmed.rfind('/');
  std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
  std::string name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return Status::Error(fmt::format("remove \"{}\": not a removable name", path));
  }
  int parent_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::HarnessError(fmt::format("open(\"{}\"): {}", parent, ErrnoText(errno)));
  }
  struct stat st {};
  Status status = Status::Ok();
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    TreeRemover remover(st.st_dev);
    remover.Remove(parent_fd, name, trimmed, 0);
    status = remover.first_error();
  } else if (errno != ENOENT) {
    status = Status::HarnessError(fmt::format("lstat(\"{}\"): {}", trimmed, ErrnoText(errno)));
  }
  ::close(parent_fd);
  return status;
}

}  // namespace sandprobe
