// res.fds: how many files may the sandbox hold open? Opens /dev/null until open fails
// (EMFILE: RLIMIT_NOFILE; ENFILE: the system table) or the ceiling, then closes them all.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

long OpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 3;
  long count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;  // the directory's own descriptor
}

}  // namespace

std::string CheckResFdsArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.fds", args, {{"ceiling", kMaxFdsCeiling}}, false);
}

void RunResFds(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.fds", args, {{"ceiling", kMaxFdsCeiling}}, false);
  const long ceiling = parsed.Number("ceiling");
  nlohmann::json result = {{"family", "res.fds"}, {"kind", "result"}, {"ceiling", ceiling}};
  struct rlimit nofile {};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    result["rlimit_nofile"] = nofile.rlim_cur == RLIM_INFINITY ? -1 : static_cast<long>(nofile.rlim_cur);
  }
  const long before = OpenFds();
  result["open_before"] = before;
  std::vector<int> fds;
  int stop_errno = 0;
  while (before + static_cast<long>(fds.size()) < ceiling) {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      stop_errno = errno;
      break;
    }
    fds.push_back(fd);
  }
  result["opened"] = static_cast<long>(fds.size());
  result["open_total"] = before + static_cast<long>(fds.size());
  for (int fd : fds) ::close(fd);
  result["stopped_by"] = stop_errno != 0 ? ErrnoName(stop_errno) : "ceiling";
  ctx.out.Emit(result);
}

}  // namespace sandprobe
