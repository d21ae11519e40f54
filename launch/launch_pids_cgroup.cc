#include "launch/launch_pids_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "model/errno_text.h"
#include "launch/pinned_process.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

constexpr char kV1Parent[] = "/pids/sandprobe";
constexpr char kV2LaunchName[] = "sandprobe-launch-";
constexpr char kUnavailable[] = "pids cgroup unavailable: ";

int MakeDir(const CgroupFs& fs, const std::string& path) {
  return fs.mkdir ? fs.mkdir(path) : ::mkdir(path.c_str(), 0755);
}
int RemoveDir(const CgroupFs& fs, const std::string& path) {
  return fs.rmdir ? fs.rmdir(path) : ::rmdir(path.c_str());
}

// 0 or the errno. No O_CREAT: a cgroup's interface files exist or it is not a cgroup.
int WriteSmallFile(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  ::close(fd);
  return err;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool HasWord(const std::string& text, const std::string& word) {
  for (const std::string& w : Words(text))
    if (w == word) return true;
  return false;
}

std::vector<int> Pids(const std::string& procs_file) {
  std::vector<int> pids;
  for (const std::string& w : Words(ReadSmallFile(procs_file).value_or(""))) {
    char* end = nullptr;
    long pid = std::strtol(w.c_str(), &end, 10);
    if (*end == '\0' && pid > 0) pids.push_back(static_cast<int>(pid));
  }
  return pids;
}

unsigned long long OwnStartTicks() {
  static const unsigned long long ticks = [] {
    std::optional<ProcStat> self = ReadProcStat(::getpid());
    return self ? self->start_ticks : 0ULL;
  }();
  return ticks;
}

std::string NamePrefix(CgroupLayout layout, int pid, unsigned long long ticks) {
  switch (layout) {
    case CgroupLayout::kV1: return fmt::format("{}-{}-", pid, ticks);
    case CgroupLayout::kV2: return fmt::format("{}{}-{}-", kV2LaunchName, pid, ticks);
  }
  return "";
}

// The v2 path of this process's cgroup, from the "0::/path" line.
StatusOr<std::string> OwnV2Path(const CgroupFs& fs) {
  std::optional<std::string> text = ReadSmallFile(fs.self_cgroup);
  if (!text) return Status::Error(fmt::format("read {}: {}", fs.self_cgroup, ErrnoText(errno)));
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::/", 0) == 0) return line.substr(3);
  }
  return Status::Error(fmt::format("no \"0::/\" line in {}", fs.self_cgroup));
}

// <root><own>, with the harness leaf taken off: where the launch cgroups go on v2.
StatusOr<std::string> V2Base(const CgroupFs& fs, bool* in_leaf = nullptr) {
  StatusOr<std::string> own = OwnV2Path(fs);
  if (!own.ok()) return own.status();
  std::string path = *own;
  std::string leaf_suffix = std::string("/") + kHarnessLeaf;
  bool leaf = path.size() > leaf_suffix.size() - 1 &&
              path.compare(path.size() - leaf_suffix.size(), leaf_suffix.size(), leaf_suffix) == 0;
  if (leaf) path.erase(path.size() - leaf_suffix.size());
  if (in_leaf) *in_leaf = leaf;
  return fs.root + (path == "/" ? "" : path);
}

// True for this process and its descendants (by the parent chain).
bool OursOrBelow(int pid) {
  const int self = ::getpid();
  for (int hops = 0; pid > 1 && hops < 4096; ++hops) {
    if (pid == self) return true;
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (!stat) return false;
    pid = stat->ppid;
  }
  return false;
}

// Moves `pids` into the cgroup whose cgroup.procs is `procs`; the first failure, or "".
std::string MovePids(const std::vector<int>& pids, const std::string& procs) {
  for (int pid : pids) {
    int err = WriteSmallFile(procs, std::to_string(pid));
    if (err != 0 && err != ESRCH) return fmt::format("write {} to {}: {}", pid, procs, ErrnoText(err));
  }
  return "";
}

// The v2 setup described in the header: the harness into its leaf, +pids for <own>'s
// children. Returns <own> (the launch cgroups' parent) or why not.
StatusOr<std::string> PrepareV2Parent(const CgroupFs& fs) {
  bool in_leaf = false;
  StatusOr<std::string> base = V2Base(fs, &in_leaf);
  if (!base.ok()) return base.status();
  std::string controllers = ReadSmallFile(*base + "/cgroup.controllers").value_or("");
  if (!HasWord(controllers, "pids")) {
    return Status::Error(fmt::format(
        "the pids controller is not delegated to {} (cgroup.controllers: \"{}\")", *base,
        Words(controllers).empty() ? "" : controllers.substr(0, controllers.find_last_not_of("\n") + 1)));
  }
  const std::string subtree = *base + "/cgroup.subtree_control";
  if (HasWord(ReadSmallFile(subtree).value_or(""), "pids")) return *base;

  const std::string leaf = *base + "/" + kHarnessLeaf;
  bool made_leaf = false;
  std::vector<int> moved;
  auto undo = [&](const std::string& why) {
    (void)MovePids(moved, *base + "/cgroup.procs");
    if (made_leaf) (void)RemoveDir(fs, leaf);
    return Status::Error(why);
  };
  if (!in_leaf) {
    if (MakeDir(fs, leaf) == 0) made_leaf = true;
    else if (errno != EEXIST) return Status::Error(fmt::format("mkdir({}): {}", leaf, ErrnoText(errno)));
    // The harness and its own children still in <own> (a canary process started before the
    // first launch); a child forked meanwhile is caught by the next pass.
    for (int pass = 0; pass < 3; ++pass) {
      std::vector<int> ours;
      for (int pid : Pids(*base + "/cgroup.procs"))
        if (OursOrBelow(pid)) ours.push_back(pid);
      if (ours.empty()) break;
      if (std::string failed = MovePids(ours, leaf + "/cgroup.procs"); !failed.empty()) {
        return undo("move the harness into its leaf: " + failed);
      }
      moved.insert(moved.end(), ours.begin(), ours.end());
    }
  }
  // Ours still there (forked during the moves) make the kernel refuse below, with EBUSY.
  std::vector<int> others;
  for (int pid : Pids(*base + "/cgroup.procs"))
    if (!OursOrBelow(pid)) others.push_back(pid);
  if (!others.empty()) {
    std::string list;
    for (std::size_t i = 0; i < others.size() && i < 5; ++i) list += (i ? ", " : "") + std::to_string(others[i]);
    return undo(fmt::format("{} holds processes that are not the harness's (pids {}{}): cgroup v2 lets "
                            "no cgroup with processes of its own enable a controller for its children",
                            *base, list, others.size() > 5 ? ", ..." : ""));
  }
  if (int err = WriteSmallFile(subtree, "+pids"); err != 0) {
    return undo(fmt::format("write +pids to {}: {}", subtree, ErrnoText(err)));
  }
  return *base;
}

// PrepareV2Parent once per process (per fake tree, in tests): the harness moves only once.
StatusOr<std::string> V2Parent(const CgroupFs& fs) {
  static std::mutex mutex;
  static std::map<std::string, StatusOr<std::string>> done;
  std::lock_guard lock(mutex);
  std::string key = fs.root + "\n" + fs.self_cgroup;
  auto it = done.find(key);
  if (it == done.end()) it = done.emplace(key, PrepareV2Parent(fs)).first;
  return it->second;
}

// The members of `dir` killed through pidfds, each confirmed a member after its pin.
void KillMembers(const std::string& dir) {
  const std::string procs = dir + "/cgroup.procs";
  for (int pid : Pids(procs)) {
    (void)KillPinned(pid, [&](int pinned) {
      for (int member : Pids(procs))
        if (member == pinned) return true;
      return false;
    }, std::chrono::milliseconds(0));
  }
}

}  // namespace

CgroupLayout DetectCgroupLayout(const std::string& root) {
  struct stat st {};
  return ::stat((root + "/cgroup.controllers").c_str(), &st) == 0 ? CgroupLayout::kV2 : CgroupLayout::kV1;
}

StatusOr<std::string> LaunchCgroupPrefix(const CgroupFs& fs) {
  CgroupLayout layout = DetectCgroupLayout(fs.root);
  std::string name = NamePrefix(layout, ::getpid(), OwnStartTicks());
  switch (layout) {
    case CgroupLayout::kV1: return fs.root + kV1Parent + "/" + name;
    case CgroupLayout::kV2: {
      StatusOr<std::string> base = V2Base(fs);
      if (!base.ok()) return base.status();
      return *base + "/" + name;
    }
  }
  return Status::Error("unreachable CgroupLayout");
}

Status PidsCgroup::Make(std::int64_t pids_max) {
  static std::atomic<int> counter{0};
  CgroupLayout layout = DetectCgroupLayout(fs_.root);
  std::string parent;
  switch (layout) {
    case CgroupLayout::kV1:
      parent = fs_.root + kV1Parent;
      if (MakeDir(fs_, parent) != 0 && errno != EEXIST) {
        return Status::Error(fmt::format("{}mkdir({}): {}", kUnavailable, parent, ErrnoText(errno)));
      }
      break;
    case CgroupLayout::kV2: {
      StatusOr<std::string> ready = V2Parent(fs_);
      if (!ready.ok()) return Status::Error(kUnavailable + ready.status().message());
      parent = *ready;
      break;
    }
  }
  std::string dir = fmt::format("{}/{}{}", parent, NamePrefix(layout, ::getpid(), OwnStartTicks()), ++counter);
  if (MakeDir(fs_, dir) != 0) {
    return Status::Error(fmt::format("{}mkdir({}): {}", kUnavailable, dir, ErrnoText(errno)));
  }
  dir_ = dir;
  procs_ = dir + "/cgroup.procs";
  if (int err = WriteSmallFile(dir + "/pids.max", std::to_string(pids_max)); err != 0) {
    Status note = Status::Error(fmt::format("{}write {}/pids.max: {}", kUnavailable, dir, ErrnoText(err)));
    Remove();
    return note;
  }
  return Status::Ok();
}

std::string PidsCgroup::Release() {
  std::string dir = std::move(dir_);
  dir_.clear();
  procs_.clear();
  return dir;
}

void PidsCgroup::Remove() {
  if (dir_.empty()) return;
  (void)RemoveCgroupDir(dir_, fs_);
  dir_.clear();
  procs_.clear();
}

std::string RemoveCgroupDir(const std::string& dir, const CgroupFs& fs) {
  // Child cgroups first (a root probe may make its own): cgroupfs has only directories and
  // interface files, no symlinks.
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> children;
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (e->d_type == DT_DIR && name != "." && name != "..") children.push_back(dir + "/" + name);
    }
    ::closedir(d);
    for (const std::string& child : children) {
      if (std::string failed = RemoveCgroupDir(child, fs); !failed.empty()) return failed;
    }
  }
  // v2 (Linux >= 5.14): the kernel kills every member at once, forks in flight included.
  struct stat st {};
  if (::stat((dir + "/cgroup.kill").c_str(), &st) == 0) (void)WriteSmallFile(dir + "/cgroup.kill", "1");
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (RemoveDir(fs, dir) == 0 || errno == ENOENT) return "";
    if (errno != EBUSY) return fmt::format("rmdir({}): {}", dir, ErrnoText(errno));
    KillMembers(dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fmt::format("rmdir({}): EBUSY (its processes did not die)", dir);
}

LeftCgroups RemoveLeftLaunchCgroups(const std::string& recorded_prefix, int pid,
                                    unsigned long long start_ticks, bool dry_run,
                                    const CgroupFs& fs) {
  LeftCgroups out;
  std::size_t slash = recorded_prefix.rfind('/');
  std::string dir = slash == std::string::npos ? "" : recorded_prefix.substr(0, slash);
  std::string name = slash == std::string::npos ? "" : recorded_prefix.substr(slash + 1);
  bool named_for_it = name == NamePrefix(CgroupLayout::kV1, pid, start_ticks) ||
                      name == NamePrefix(CgroupLayout::kV2, pid, start_ticks);
  bool inside = dir.rfind(fs.root + "/", 0) == 0 && dir.find("/../") == std::string::npos &&
                dir.find("/./") == std::string::npos && !dir.ends_with("/..");
  if (!named_for_it || !inside) {
    out.errors.push_back(fmt::format("refused to sweep pids cgroups \"{}*\": not a launch cgroup of "
                                     "pid {} (start {}) under {}", recorded_prefix, pid, start_ticks, fs.root));
    return out;
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;  // the parent is gone (or never made): nothing left
  std::vector<std::string> found;
  while (const dirent* e = ::readdir(d)) {
    std::string entry = e->d_name;
    if (e->d_type != DT_DIR || entry.rfind(name, 0) != 0 || entry.size() == name.size()) continue;
    if (entry.find_first_not_of("0123456789", name.size()) != std::string::npos) continue;
    found.push_back(dir + "/" + entry);
  }
  ::closedir(d);
  std::sort(found.begin(), found.end());
  for (const std::string& cgroup : found) {
    std::string failed = dry_run ? "" : RemoveCgroupDir(cgroup, fs);
    if (failed.empty()) out.removed.push_back(cgroup);
    else out.errors.push_back(failed);
  }
  return out;
}

}  // namespace sandprobe
