// See witness_host_mounts.h.
#include "witnesses/witness_host_mounts.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <set>

#include "contract/mountinfo.h"
#include "contract/path_content.h"
#include "families/family_fs.h"
#include "model/errno_text.h"
#include "witnesses/witness.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxProbeDirFiles = 16;

json MountJson(const MountEntry& m) {
  return {{"id", m.mount_id}, {"dev", DeviceText(m.major, m.minor)}, {"root", m.root},
          {"mount_point", m.mount_point}, {"fstype", m.fstype}};
}

// What reading `path` shows, as the probe reads it (contract/path_content.h), with its identity.
json Identity(const HostView& host, const std::string& path) {
  const PathContent c = host.Read(path);
  json fact = {{"ok", c.ok}};
  if (c.stat_ok) {
    fact["dev"] = DeviceText(c.dev_major, c.dev_minor);
    fact["ino"] = c.ino;
  }
  if (!c.ok) {
    fact["errno"] = ErrnoText(c.error);
    return fact;
  }
  fact["kind"] = PathKindName(c.kind);
  if (c.kind == PathContent::Kind::kDir) {
    fact["entries"] = c.entries;
    fact["truncated"] = c.truncated;
    fact["sha256"] = Sha256Hex(c.hashed);
  }
  return fact;
}

// lstat-free identity of something handed in (a directory is not listed: only who it is).
json HandedIn(const std::string& what, const std::string& path) {
  json fact = {{"what", what}, {"path", path}};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    fact["errno"] = ErrnoText(errno);
    return fact;
  }
  fact["kind"] = S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : "other";
  fact["dev"] = DeviceText(major(st.st_dev), minor(st.st_dev));
  fact["ino"] = static_cast<unsigned long long>(st.st_ino);
  return fact;
}

// Filesystems that cannot hold a socket file a runtime binds: kernel views and pseudo
// filesystems. Everything else (disks, tmpfs, overlay, 9p, fuse, ...) may.
bool CanHoldSockets(const std::string& fstype) {
  static const std::set<std::string> kNoSockets = {
      "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "nsfs", "securityfs", "debugfs",
      "tracefs", "bpf", "pstore", "configfs", "fusectl", "hugetlbfs", "binfmt_misc", "efivarfs",
      "autofs", "rpc_pipefs", "selinuxfs"};
  return kNoSockets.count(fstype) == 0;
}

class HostMountsWitness final : public RunWitness {
 public:
  HostMountsWitness(json facts, HostView host)
      : facts_(std::move(facts)), host_(std::move(host)),
        walk_devs_(SocketWalkDevices(facts_.value("mounts", json::array()))) {}

  std::string name() const override { return "host_mounts"; }

  std::map<std::string, std::string> PlanValues() const override { return {{"walk_devs", walk_devs_}}; }

  json Collect() override {
    int error = 0;
    const std::string text = host_.MountinfoText(&error);
    if (error != 0 && !facts_.contains("mountinfo_error")) facts_["mountinfo_error"] = ErrnoText(error);
    KeepStableMounts(facts_, ParseMountinfo(text));
    return facts_;
  }

 private:
  json facts_;
  HostView host_;
  std::string walk_devs_;
};

StatusOr<std::unique_ptr<RunWitness>> StartHostMountsWitness(const WitnessSetup& setup) {
  HostMountsInput input;
  for (const CriticalHostDir& dir : CriticalHostDirs()) input.critical_dirs.push_back(dir.path);
  input.workspace = setup.workspace;
  input.probe_dir = setup.probe_dir;
  input.host = setup.host;
  return std::unique_ptr<RunWitness>(new HostMountsWitness(ReadHostMounts(input), input.host));
}

}  // namespace

json ReadHostMounts(const HostMountsInput& input) {
  json out = {{"mounts", json::array()}, {"unstable", 0}, {"critical", json::object()},
              {"handed_in", json::array()}};
  int error = 0;
  const std::string text = input.host.MountinfoText(&error);
  if (error != 0) out["mountinfo_error"] = ErrnoText(error);
  if (!input.host.root().empty()) out["host_root"] = input.host.root();
  for (const MountEntry& m : ParseMountinfo(text)) out["mounts"].push_back(MountJson(m));
  for (const std::string& dir : input.critical_dirs) out["critical"][dir] = Identity(input.host, dir);
  if (!input.workspace.empty()) out["handed_in"].push_back(HandedIn("workspace", input.workspace));
  if (!input.probe_dir.empty()) {
    out["handed_in"].push_back(HandedIn("probe_dir", input.probe_dir));
    std::vector<std::string> files;
    if (DIR* d = ::opendir(input.probe_dir.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.' && files.size() < kMaxProbeDirFiles) files.push_back(input.probe_dir + "/" + e->d_name);
      }
      ::closedir(d);
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) out["handed_in"].push_back(HandedIn("probe", file));
  }
  return out;
}

void KeepStableMounts(json& facts, const std::vector<MountEntry>& later) {
  std::set<std::string> now;
  for (const MountEntry& m : later) now.insert(MountJson(m).dump());
  json kept = json::array();
  int unstable = facts.value("unstable", 0);
  for (const json& m : facts.value("mounts", json::array())) {
    if (now.count(m.dump())) {
      kept.push_back(m);
    } else {
      ++unstable;
    }
  }
  facts["mounts"] = std::move(kept);
  facts["unstable"] = unstable;
}

std::string SocketWalkDevices(const json& mounts) {
  std::vector<std::string> devs;
  for (const json& m : mounts) {
    const std::string dev = m.value("dev", "");
    if (dev.empty() || !CanHoldSockets(m.value("fstype", ""))) continue;
    if (std::find(devs.begin(), devs.end(), dev) == devs.end()) devs.push_back(dev);
  }
  std::string out;
  for (const std::string& dev : devs) out += (out.empty() ? "" : ",") + dev;
  return out;
}

// The fs.mounts and fs.storage judges read it; net.unix and priv.runtime_sockets need its walk devices.
std::vector<WitnessRow> HostMountWitnesses() {
  return {{"host_mounts", {"fs.mounts", "fs.storage", "fs.read", "fs.alias", "net.unix", "priv.runtime_sockets"},
           StartHostMountsWitness}};
}

}  // namespace sandprobe
