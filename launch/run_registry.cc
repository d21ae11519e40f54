#include "launch/run_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "model/errno_text.h"
#include "launch/launch_pids_cgroup.h"
#include "launch/proc_info.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMinTokenLength = 16;
constexpr std::size_t kMaxOwnerBytes = 1 << 20;  // a thousand tokens and sweeps fit many times

// RecordProcessToken is a read-modify-write; witnesses may call it from several threads.
std::mutex g_owner_file_mutex;

std::string OwnerPath(const std::string& run_root) { return run_root + "/owner.json"; }

std::string PidNamespace(const std::string& pid) {
  char link[128];
  ssize_t n = ::readlink(("/proc/" + pid + "/ns/pid").c_str(), link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : "";
}

Status WriteOwner(const std::string& run_root, const OwnerRecord& owner) {
  json planted = json::array();
  for (const PlantedFiles& p : owner.planted_files) planted.push_back({{"token", p.token}, {"dirs", p.dirs}});
  json sweeps = json::array();
  for (const RecordedSweep& sweep : owner.sweeps.value_or(std::vector<RecordedSweep>{})) {
    sweeps.push_back({{"list", sweep.list}, {"remove", sweep.remove}});
  }
  json doc = {{"pid", owner.pid},
              {"start_time_ticks", owner.start_ticks},
              {"pid_namespace", owner.pid_namespace},
              {"profile_path", owner.profile_path},
              {"sweep", sweeps},
              {"process_tokens", owner.process_tokens},
              {"planted_files", planted},
              {"planted_canaries", owner.planted_canaries},
              {"pids_cgroups", owner.pids_cgroups},
              {"kept", owner.kept}};
  // 0600: only the owner writes it (its run dir is its own, 0755); nobody else need read it.
  return WriteFileAtomically(OwnerPath(run_root), doc.dump(2) + "\n", {.mode = 0600});
}

// The recorded sweeps of owner.json; nullopt when one has an empty list, remove or element
// (a wrong type throws json::exception).
std::optional<std::vector<RecordedSweep>> ReadSweeps(const json& sweeps) {
  std::vector<RecordedSweep> out;
  for (const json& one : sweeps) {
    RecordedSweep sweep{one.at("list").get<std::vector<std::string>>(),
                        one.at("remove").get<std::vector<std::vector<std::string>>>()};
    bool whole = !sweep.list.empty() && !sweep.remove.empty() &&
                 std::all_of(sweep.remove.begin(), sweep.remove.end(),
                             [](const std::vector<std::string>& pieces) { return !pieces.empty(); });
    if (!whole) return std::nullopt;
    out.push_back(std::move(sweep));
  }
  return out;
}

// The whole of a small regular file, opened without following a link, when `owner` alone can
// have written it: its uid and no group or other write bit.
StatusOr<std::string> ReadOwnedFile(int dir_fd, const char* name, const std::string& path, uid_t owner) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status::Error(fmt::format("{}open({}): {}", err == ENOENT ? fmt::format("no {}: ", name) : "", path,
                                     ErrnoText(err)));
  }
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) problem = fmt::format("fstat: {}", ErrnoText(errno));
  else if (!S_ISREG(st.st_mode)) problem = "not a regular file";
  else if (st.st_uid != owner) problem = fmt::format("owned by uid {}, not {}", st.st_uid, owner);
  else if ((st.st_mode & 022) != 0) problem = fmt::format("mode {:o}: others can write it", st.st_mode & 07777);
  else if (static_cast<std::size_t>(st.st_size) > kMaxOwnerBytes) problem = fmt::format("{} bytes: too large", st.st_size);
  std::string text;
  if (problem.empty()) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (!problem.empty()) return Status::Error(fmt::format("{}: {}", path, problem));
  return text;
}

// Owned by us and not a symlink: /var/tmp is world-writable, and a root harness must not
// act on (run the sweep recorded in, remove) a directory someone else planted there.
bool OwnedByUs(const std::string& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  bool right_type = directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  return right_type && st.st_uid == ::geteuid();
}

// The owner's liveness: "" while it runs, else why it is dead.
std::string WhyOwnerIsDead(const OwnerRecord& owner) {
  if (owner.pid_namespace != PidNamespace("self")) return "";  // cannot tell: leave it
  std::optional<ProcStat> stat = ReadProcStat(owner.pid);
  if (!stat) return fmt::format("owner pid {} is gone", owner.pid);
  if (stat->start_ticks != owner.start_ticks) {
    return fmt::format("owner pid {} is another process now (started at tick {}, not {})",
                       owner.pid, stat->start_ticks, owner.start_ticks);
  }
  if (stat->dead()) return fmt::format("owner pid {} has exited", owner.pid);
  return "";
}

// Seconds since the run dir (or its workspace, which probes write into) last changed.
std::chrono::seconds Untouched(const std::string& root) {
  std::error_code ec;
  auto newest = fs::last_write_time(root, ec);
  auto workspace = fs::last_write_time(root + "/workspace", ec);
  if (!ec) newest = std::max(newest, workspace);
  auto age = fs::file_time_type::clock::now() - newest;
  return std::chrono::duration_cast<std::chrono::seconds>(age);
}

}  // namespace

std::vector<std::string> RecordedSweep::RemoveArgv(const std::string& id) const {
  std::vector<std::string> argv;
  for (const std::vector<std::string>& pieces : remove) {
    std::string element;
    for (std::size_t i = 0; i < pieces.size(); ++i) element += (i == 0 ? "" : id) + pieces[i];
    argv.push_back(std::move(element));
  }
  return argv;
}

bool IsProcessToken(const std::string& token) {
  return token.size() >= kMinTokenLength &&
         std::all_of(token.begin(), token.end(), [](unsigned char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-';
         });
}

Status ClaimRunDir(const std::string& run_root, const std::string& profile_path) {
  std::optional<ProcStat> self = ReadProcStat(::getpid());
  if (!self) return Status::Error(fmt::format("claim {}: /proc/self/stat unreadable", run_root));
  std::error_code ec;
  fs::path profile = fs::absolute(profile_path, ec).lexically_normal();
  OwnerRecord owner{.pid = ::getpid(),
                    .start_ticks = self->start_ticks,
                    .pid_namespace = PidNamespace("self"),
                    .profile_path = ec ? profile_path : profile.string(),
                    .sweeps = std::vector<RecordedSweep>{},  // nothing launched yet
                    .process_tokens = {}};
  std::string name = fs::path(run_root).filename().string();
  if (IsProcessToken(name)) owner.process_tokens.push_back(name);
  // Made only for launches with a pids envelope; recorded always (a sweep finds none then).
  if (StatusOr<std::string> cgroups = LaunchCgroupPrefix(); cgroups.ok()) owner.pids_cgroups = *cgroups;
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  return WriteOwner(run_root, owner).WithContext("claim run dir");
}

Status RecordSweeps(const std::string& run_root, const std::vector<RecordedSweep>& sweeps) {
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  StatusOr<OwnerRecord> owner = LoadOwner(run_root);
  if (!owner.ok()) return owner.status().WithContext("record the sweep commands");
  if (owner->pid != ::getpid()) return Status::Error(fmt::format("record the sweep commands: {} is not this run's", run_root));
  owner->sweeps = sweeps;
  return WriteOwner(run_root, *owner).WithContext("record the sweep commands");
}

void MarkRunDirKept(const std::string& run_root) {
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  StatusOr<OwnerRecord> owner = LoadOwner(run_root);
  if (!owner.ok() || owner->pid != ::getpid()) return;
  owner->kept = true;
  (void)WriteOwner(run_root, *owner);
}

void RecordProcessToken(const std::string& run_root, const std::string& token) {
  if (!IsProcessToken(token)) return;
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  StatusOr<OwnerRecord> owner = LoadOwner(run_root);
  if (!owner.ok() || owner->pid != ::getpid()) return;
  auto& tokens = owner->process_tokens;
  if (std::find(tokens.begin(), tokens.end(), token) != tokens.end()) return;
  tokens.push_back(token);
  (void)WriteOwner(run_root, *owner);
}

void RecordPlantedCanary(const std::string& run_root, const std::string& path) {
  if (path.empty() || path[0] != '/') return;
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  StatusOr<OwnerRecord> owner = LoadOwner(run_root);
  if (!owner.ok() || owner->pid != ::getpid()) return;
  owner->planted_canaries.push_back(path);
  (void)WriteOwner(run_root, *owner);
}

bool IsPlantedCanary(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  const std::string prefix = "sandprobe-canary-", suffix = ".txt";
  bool named = name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
               std::all_of(name.begin() + prefix.size(), name.end() - suffix.size(), [](char c) {
                 return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
               });
  return !path.empty() && path[0] == '/' && named && OwnedByUs(path, /*directory=*/false);
}

void RecordPlantedFiles(const std::string& run_root, const std::string& token,
                        const std::vector<std::string>& dirs) {
  if (!IsProcessToken(token)) return;
  std::vector<std::string> absolute;
  for (const std::string& dir : dirs)
    if (!dir.empty() && dir[0] == '/') absolute.push_back(dir);
  std::lock_guard<std::mutex> lock(g_owner_file_mutex);
  StatusOr<OwnerRecord> owner = LoadOwner(run_root);
  if (!owner.ok() || owner->pid != ::getpid()) return;
  owner->planted_files.push_back({token, absolute});
  (void)WriteOwner(run_root, *owner);
}

StatusOr<OwnerRecord> ParseOwnerRecord(std::string_view text, const std::string& path) {
  try {
    json doc = json::parse(text);
    OwnerRecord owner;
    // A pid is a whole number that fits pid_t: a float or a 30-digit number in a hostile file
    // would be undefined (or wrapped) by get<int>(), and a wrapped pid could name someone else.
    const json& pid = doc.at("pid");
    bool fits = pid.is_number_unsigned() ? pid.get<std::uint64_t>() <= INT32_MAX
                                         : pid.is_number_integer() && pid.get<std::int64_t>() > 0 &&
                                               pid.get<std::int64_t>() <= INT32_MAX;
    if (!fits || pid.get<std::int64_t>() <= 0) {
      return Status::Error(fmt::format("{}: /pid: not a positive whole pid: {}", path, pid.dump()));
    }
    owner.pid = static_cast<int>(pid.get<std::int64_t>());
    const json& ticks = doc.at("start_time_ticks");
    if (!ticks.is_number_unsigned()) {
      return Status::Error(fmt::format("{}: /start_time_ticks: not a whole number: {}", path, ticks.dump()));
    }
    owner.start_ticks = ticks.get<unsigned long long>();
    owner.pid_namespace = doc.at("pid_namespace").get<std::string>();
    owner.profile_path = doc.at("profile_path").get<std::string>();
    if (doc.contains("sweep")) {
      owner.sweeps = ReadSweeps(doc.at("sweep"));
      if (!owner.sweeps) return Status::Error(fmt::format("{}: /sweep: a sweep with an empty list or remove", path));
    }
    for (const std::string& token : doc.at("process_tokens").get<std::vector<std::string>>()) {
      if (IsProcessToken(token)) owner.process_tokens.push_back(token);
    }
    // Older owner.json files have neither.
    for (const json& planted : doc.value("planted_files", json::array())) {
      PlantedFiles p{planted.at("token").get<std::string>(), planted.at("dirs").get<std::vector<std::string>>()};
      if (IsProcessToken(p.token)) owner.planted_files.push_back(std::move(p));
    }
    owner.pids_cgroups = doc.value("pids_cgroups", "");
    owner.kept = doc.value("kept", false);
    if (doc.contains("planted_canaries")) {
      owner.planted_canaries = doc.at("planted_canaries").get<std::vector<std::string>>();
    }
    if (owner.pid <= 0) return Status::Error(fmt::format("{}: pid {}", path, owner.pid));
    return owner;
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: {}", path, e.what()));
  }
}

StatusOr<OwnerRecord> LoadOwnerOf(const std::string& run_root, uid_t owner) {
  int dir = ::open(run_root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return Status::Error(fmt::format("open({}): {}", run_root, ErrnoText(errno)));
  struct stat st {};
  std::string problem;
  if (::fstat(dir, &st) != 0) problem = fmt::format("fstat: {}", ErrnoText(errno));
  else if (st.st_uid != owner) problem = fmt::format("owned by uid {}, not {}", st.st_uid, owner);
  else if ((st.st_mode & 022) != 0) problem = fmt::format("mode {:o}: others can write in it", st.st_mode & 07777);
  StatusOr<std::string> text = problem.empty() ? ReadOwnedFile(dir, "owner.json", OwnerPath(run_root), owner)
                                               : StatusOr<std::string>(Status::Error(run_root + ": " + problem));
  ::close(dir);
  if (!text.ok()) return text.status();
  return ParseOwnerRecord(*text, OwnerPath(run_root));
}

StatusOr<OwnerRecord> LoadOwner(const std::string& run_root) { return LoadOwnerOf(run_root, ::geteuid()); }

std::vector<DeadRun> FindDeadRuns(const std::string& parent, std::chrono::seconds unowned_age,
                                  bool include_foreign) {
  std::vector<DeadRun> dead;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().filename().string();
    if (name.rfind(kRunDirPrefix, 0) != 0 || name.size() == std::string(kRunDirPrefix).size()) {
      continue;
    }
    std::string root = entry.path().string();
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    DeadRun run{.run_id = name.substr(std::string(kRunDirPrefix).size()), .root = root};
    if (st.st_uid != ::geteuid()) {
      // Another uid's: listed when dead, never swept here.
      if (!include_foreign) continue;
      StatusOr<OwnerRecord> owner = LoadOwnerOf(root, st.st_uid);
      if (!owner.ok() || owner->kept) continue;
      run.why = WhyOwnerIsDead(*owner);
      run.owner = std::move(*owner);
      run.foreign_uid = st.st_uid;
      if (!run.why.empty()) dead.push_back(std::move(run));
      continue;
    }
    StatusOr<OwnerRecord> owner = LoadOwner(root);
    if (owner.ok()) {
      if (owner->kept) continue;
      run.why = WhyOwnerIsDead(*owner);
      run.owner = std::move(*owner);
    } else {
      std::chrono::seconds age = Untouched(root);
      if (age >= unowned_age) {
        run.why = fmt::format("{}; untouched for {} min", owner.status().message(), age.count() / 60);
      }
    }
    if (!run.why.empty()) dead.push_back(std::move(run));
  }
  std::sort(dead.begin(), dead.end(),
            [](const DeadRun& a, const DeadRun& b) { return a.run_id < b.run_id; });
  return dead;
}

}  // namespace sandprobe
