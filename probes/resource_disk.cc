// res.disk: how much may the sandbox write to a directory (normally /tmp)? Writes zeros in 1 MiB
// steps until a write fails (ENOSPC: the filesystem is full; EDQUOT: a quota) or the ceiling,
// then deletes what it wrote. Progress every 8 MiB.
//
// A limit is its total: RLIMIT_FSIZE (EFBIG) bounds each file, not the directory, so at EFBIG
// the probe goes on in a new file (each named after the nonce), and only the total counts. A
// tmpfs of 100 MiB stops the total at 100; a per-file limit of 100 MiB lets 200 through as
// two files. Only a file that cannot take a single byte ends the climb with EFBIG.
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "contract/errno_name.h"
#include "probes/resource_families.h"

namespace sandprobe {
namespace {

constexpr long kMaxDiskFiles = 4096;  // files at a per-file limit, at most (each takes >= 1 byte)
const std::map<std::string, long> kDiskArgs = {{"ceiling-mib", kMaxDiskCeilingMib}};

// Writes all of `size` bytes; returns 0 or the errno (ENOSPC for a short write that stalls).
int WriteFully(int fd, const char* data, std::size_t size, std::size_t* written) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      *written += done;
      return errno;
    }
    if (n == 0) {
      *written += done;
      return ENOSPC;
    }
    done += static_cast<std::size_t>(n);
  }
  *written += done;
  return 0;
}

}  // namespace

std::string CheckResDiskArgs(const FamilyArgs& args) {
  ResourceArgs parsed;
  return parsed.Parse("res.disk", args, kDiskArgs, true);
}

void RunResDisk(const ProbeContext& ctx, const FamilyArgs& args) {
  ResourceArgs parsed;
  parsed.Parse("res.disk", args, kDiskArgs, true);
  const long ceiling = parsed.Number("ceiling-mib");
  nlohmann::json result = {{"family", "res.disk"}, {"kind", "result"}, {"dir", parsed.dir()},
                           {"ceiling_mib", ceiling}};
  struct statvfs vfs {};
  if (::statvfs(parsed.dir().c_str(), &vfs) == 0) {
    result["fs_size_mib"] = static_cast<long>(vfs.f_blocks * vfs.f_frsize / kMib);
    result["fs_free_mib"] = static_cast<long>(vfs.f_bavail * vfs.f_frsize / kMib);
  }
  // RLIMIT_FSIZE would kill with SIGXFSZ; ignored, the write fails with EFBIG instead.
  ::signal(SIGXFSZ, SIG_IGN);
  const std::string prefix = parsed.dir() + "/.sandprobe-" + ctx.nonce + "-disk";
  auto file_name = [&prefix](long index) { return index == 0 ? prefix : prefix + "-" + std::to_string(index); };
  std::vector<char> zeros(kMib, 0);
  const std::size_t total = static_cast<std::size_t>(ceiling) * kMib;
  std::size_t written = 0, in_file = 0, first_file_limit = 0;
  long files = 0, next_progress_mib = 8;
  int stop_errno = 0;
  {
    DeadlineHold hold;  // create .. unlink: never leave a file behind
    int fd = ::open(file_name(0).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      result["ok"] = false;
      result["step"] = "open";
      result["errno"] = ErrnoName(errno);
      ctx.out.Emit(result);
      return;
    }
    files = 1;
    while (written < total) {
      std::size_t step = 0;
      stop_errno = WriteFully(fd, zeros.data(), std::min(kMib, total - written), &step);
      written += step;
      in_file += step;
      if (stop_errno == EFBIG && in_file > 0 && files < kMaxDiskFiles) {
        // This file is at a per-file limit; the directory may still have room.
        if (first_file_limit == 0) first_file_limit = in_file;
        ::close(fd);
        fd = ::open(file_name(files).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
          stop_errno = errno;
          break;
        }
        ++files;
        in_file = 0;
        stop_errno = 0;
        continue;
      }
      if (stop_errno != 0) break;
      if (static_cast<long>(written / kMib) >= next_progress_mib) {
        ctx.out.Emit({{"family", "res.disk"}, {"kind", "progress"}, {"mib", next_progress_mib}});
        next_progress_mib += 8;
      }
    }
    if (fd >= 0) ::close(fd);
    bool removed = true;
    for (long i = 0; i < files; ++i) removed = ::unlink(file_name(i).c_str()) == 0 && removed;
    result["removed"] = removed;
  }
  result["files"] = files;
  if (first_file_limit > 0) result["file_limit_mib"] = static_cast<double>(first_file_limit) / kMib;
  result["ok"] = true;
  result["written_mib"] = static_cast<double>(written) / kMib;
  result["stopped_by"] = stop_errno != 0 ? ErrnoName(stop_errno) : "ceiling";
  ctx.out.Emit(result);
}

}  // namespace sandprobe
