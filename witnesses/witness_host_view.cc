// See witness_host_view.h.
#include "witnesses/witness_host_view.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <regex>

#include <fmt/format.h>

#include "contract/mountinfo.h"
#include "model/errno_text.h"

namespace sandprobe {
namespace {

// The node's mount table, seen from its root: its init's (pid 1 of the procfs mounted there).
constexpr const char* kRootMountinfo = "/proc/1/mountinfo";

// "/proc/PID/root" (a trailing "/" allowed) -> "/proc/PID/mountinfo"; "" for any other root.
std::string ProcessMountinfo(const std::string& root) {
  static const std::regex kProcessRoot(R"(/proc/([0-9]+)/root/?)");
  std::smatch m;
  if (!std::regex_match(root, m, kProcessRoot)) return "";
  return "/proc/" + m[1].str() + "/mountinfo";
}

}  // namespace

StatusOr<HostView> HostView::Through(const std::string& root) {
  if (root.empty() || root.front() != '/') {
    return Status::Error(fmt::format("--host-root \"{}\": an absolute path is needed (/proc/1/root in a pod with hostPID)", root));
  }
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    return Status::Error(fmt::format("--host-root {}: {}", root, ErrnoText(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return Status::Error(fmt::format("--host-root {}: not a directory", root));
  const std::string process_table = ProcessMountinfo(root);
  HostView view = process_table.empty() ? HostView(root, kRootMountinfo, true) : HostView(root, process_table, false);
  int error = 0;
  if (view.MountinfoText(&error).empty()) {
    return Status::Error(fmt::format("--host-root {}: cannot read the host's mount table {}{} ({}): is the host's "
                                     "/proc visible there (hostPID, or a recursive hostPath of /)?",
                                     root, view.mountinfo_in_root_ ? root : "", view.mountinfo_path_,
                                     ErrnoText(error != 0 ? error : ENODATA)));
  }
  return view;
}

int HostView::OpenInRoot(const std::string& path, int flags) const {
  const int dir = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  open_how how{};
  how.flags = static_cast<unsigned long long>(flags);
  how.resolve = RESOLVE_IN_ROOT;
  const int fd = static_cast<int>(::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how));
  const int saved = errno;
  ::close(dir);
  errno = saved;
  return fd;
}

PathContent HostView::Read(const std::string& path) const {
  if (root_.empty()) return ReadPathContent(path);
  const int fd = OpenInRoot(path, kPathContentOpenFlags);
  if (fd < 0) {
    PathContent c;
    c.step = "open";
    c.error = errno;
    return c;
  }
  return ReadOpenedPathContent(fd);
}

std::string HostView::MountinfoText(int* error) const {
  if (root_.empty()) return ReadMountinfoText(error);
  if (!mountinfo_in_root_) return ReadMountinfoText(error, mountinfo_path_);
  const int fd = OpenInRoot(mountinfo_path_, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return "";
  }
  return ReadOpenedMountinfoText(fd, error);
}

}  // namespace sandprobe
