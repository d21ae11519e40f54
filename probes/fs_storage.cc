// fs.storage: where, outside the directories the policy declares writable, can the sandboxed
// process really write? A fixed list of paths (/, /etc, /usr) misses the writable places a
// root filesystem actually has: an image's 1777 /var/tmp or the user's own home, writable as
// soon as the runtime's root is not read-only.
//
// Per mount of /proc/self/mountinfo: try a real write (fs.write's exclusive create + unlink of a
// nonce file, never over anything) at the mount point; while that is refused for permission,
// walk the mount's directories breadth-first (never into another mount, never through a
// symlink, never below a declared-writable DIR) and try each, until one write succeeds, the
// mount answers EROFS (read-only: every directory of it would), or a ceiling is met. Facts
// only: whether a write that went through is the host's storage, the sandbox's own layer or a
// private memory filesystem is judged on the host side (families/family_fs_storage.cc).
//
// Never tried: the kernel's interface filesystems (proc, sysfs, cgroupfs, devtmpfs, ...) and
// mounts stacked on one (the tmpfs holding the cgroup mounts at /sys/fs/cgroup, a runtime's
// masks over /proc entries): the probe never creates anything in a kernel interface's tree,
// whatever its permissions say.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "contract/mountinfo.h"
#include "probes/families.h"

namespace sandprobe {
namespace {

// Ceilings: the walk of one mount, all mounts together, one directory's names, the depth.
constexpr int kMaxDirsPerMount = 256;
constexpr int kMaxDirsTotal = 2048;
constexpr int kMaxNamesPerDir = 4096;
constexpr int kMaxDepth = 8;

// Filesystems that are the kernel's interfaces, not storage: never written to (a file created in
// cgroupfs or sysfs is a kernel object, not data).
const std::set<std::string>& KernelInterfaceFilesystems() {
  static const std::set<std::string> kTypes = {
      "proc",     "sysfs",     "cgroup",    "cgroup2", "securityfs", "debugfs",  "tracefs",
      "bpf",      "configfs",  "pstore",    "efivarfs", "fusectl",   "binfmt_misc", "devpts",
      "mqueue",   "nsfs",      "selinuxfs", "rpc_pipefs", "nfsd",    "devtmpfs", "hugetlbfs",
      "autofs",
  };
  return kTypes;
}

// `inner` is `outer` or lies under it.
bool Within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return !inner.empty() && inner[0] == '/';
  return inner == outer ||
         (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/');
}

std::string Child(const std::string& dir, const char* name) { return dir == "/" ? "/" + std::string(name) : dir + "/" + name; }

struct Walk {
  const ProbeContext& ctx;
  const FamilyArgs& declared;            // never tried, never descended into
  const std::set<std::string>& points;   // every mount point: another mount's is not this one's
  int& budget;                           // directories left for all mounts
  int attempt = 0;                       // file name counter, unique across mounts
};

bool Declared(const Walk& w, const std::string& dir) {
  return std::any_of(w.declared.begin(), w.declared.end(), [&](const std::string& d) { return Within(dir, d); });
}

// The directories right below `dir` on device `dev`, not another mount's point, not declared.
void Subdirs(const Walk& w, const std::string& dir, dev_t dev, int depth, std::deque<std::pair<std::string, int>>& queue) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  int names = 0;
  while (const dirent* e = ::readdir(d)) {
    if (++names > kMaxNamesPerDir) break;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    const std::string path = Child(dir, e->d_name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != dev) continue;
    if (w.points.count(path) != 0 || Declared(w, path)) continue;
    queue.emplace_back(path, depth + 1);
  }
  ::closedir(d);
}

// Tries the mount at `point` (its root's device `dev`); fills tried/ok/at/errno/walk_truncated.
void TryMount(Walk& w, const std::string& point, dev_t dev, nlohmann::json& fact) {
  std::deque<std::pair<std::string, int>> queue = {{point, 0}};
  int tried = 0;
  fact["ok"] = false;
  fact["walk_truncated"] = false;
  while (!queue.empty()) {
    if (tried == kMaxDirsPerMount || w.budget == 0) {
      fact["walk_truncated"] = true;
      break;
    }
    auto [dir, depth] = queue.front();
    queue.pop_front();
    --w.budget;
    ++tried;
    nlohmann::json attempt;
    TryCreateAndRemove(Child(dir, (".sandprobe-" + w.ctx.nonce + "-s" + std::to_string(w.attempt++)).c_str()),
                       w.ctx.nonce, attempt);
    if (attempt.value("created", false)) {  // the file existed: the mount took a write
      fact["ok"] = true;
      SetBytesField(fact, "at", dir);
      if (!attempt.value("removed", false)) fact["unlink_errno"] = attempt.value("errno", "");
      break;
    }
    const std::string err = attempt.value("errno", "");
    if (depth == 0) fact["errno"] = err;  // the mount point's own answer
    if (err == "EROFS") break;            // the mount or its superblock is read-only
    if (depth < kMaxDepth) Subdirs(w, dir, dev, depth, queue);
  }
  fact["tried"] = tried;
}

}  // namespace

std::string CheckFsStorageArgs(const FamilyArgs& args) {
  for (const std::string& dir : args) {
    if (dir.empty() || dir[0] != '/') return "fs.storage: not an absolute directory: " + dir;
  }
  return args.size() > kMaxPathsPerFamily ? "fs.storage: more than 4096 paths" : "";
}

void RunFsStorage(const ProbeContext& ctx, const FamilyArgs& args) {
  int error = 0;
  const std::string text = ReadMountinfoText(&error);
  bool truncated = false;
  const std::vector<MountEntry> mounts = ParseMountinfo(text, &truncated);
  std::set<std::string> points;
  for (const MountEntry& m : mounts) points.insert(m.mount_point);
  int budget = kMaxDirsTotal;
  Walk walk{ctx, args, points, budget};
  int tried = 0;
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    const MountEntry& m = mounts[i];
    nlohmann::json fact = {{"family", "fs.storage"},
                           {"variant", "id:" + std::to_string(m.mount_id)},
                           {"mount_id", m.mount_id},
                           {"dev", DeviceText(m.major, m.minor)},
                           {"mountinfo_ro", HasMountOption(m.mount_options, "ro") || HasMountOption(m.super_options, "ro")}};
    SetBytesField(fact, "path", m.mount_point);
    SetBytesField(fact, "root", m.root);
    SetBytesField(fact, "fstype", m.fstype);
    bool covered = false;  // a later mount on the same point hides this one
    for (std::size_t j = i + 1; j < mounts.size(); ++j) covered = covered || mounts[j].mount_point == m.mount_point;
    bool on_interface = false;  // mounted on a kernel interface: part of its tree (/sys/fs/cgroup)
    for (const MountEntry& parent : mounts) {
      on_interface = on_interface || (parent.mount_id == m.parent_id && parent.mount_id != m.mount_id &&
                                      KernelInterfaceFilesystems().count(parent.fstype) != 0);
    }
    struct stat st {};
    if (KernelInterfaceFilesystems().count(m.fstype) != 0) {
      fact["skipped"] = "kernel-interface";
    } else if (on_interface) {
      fact["skipped"] = "on-kernel-interface";
    } else if (covered) {
      fact["skipped"] = "covered";
    } else if (Declared(walk, m.mount_point)) {
      fact["skipped"] = "declared-writable";
    } else if (::lstat(m.mount_point.c_str(), &st) != 0) {
      fact["skipped"] = "stat-failed";
      fact["errno"] = ErrnoName(errno);
    } else if (!S_ISDIR(st.st_mode)) {
      fact["skipped"] = "not-a-directory";
    } else {
      TryMount(walk, m.mount_point, st.st_dev, fact);
      tried += fact.value("tried", 0);
    }
    ctx.out.Emit(fact);
  }
  nlohmann::json summary = {{"family", "fs.storage"},
                            {"variant", "summary"},
                            {"path", ""},
                            {"ok", error == 0 && !text.empty()},
                            {"mounts", mounts.size()},
                            {"tried", tried},
                            {"truncated", truncated || text.size() >= kMaxMountinfoBytes || budget == 0}};
  if (error != 0) summary["errno"] = ErrnoName(error);
  struct stat exe {};
  if (::stat("/proc/self/exe", &exe) == 0) {
    summary["exe_dev"] = DeviceText(major(exe.st_dev), minor(exe.st_dev));
    summary["exe_ino"] = static_cast<unsigned long long>(exe.st_ino);
  }
  ctx.out.Emit(summary);
}

}  // namespace sandprobe
