#include "witnesses/witness_host_paths.h"

#include "contract/mountinfo.h"
#include "contract/path_content.h"
#include "model/errno_text.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

using nlohmann::json;

json PathFacts(const HostView& host, const std::string& path) {
  const PathContent c = host.Read(path);
  json fact = json::object();
  if (c.stat_ok) {
    fact["dev"] = DeviceText(c.dev_major, c.dev_minor);
    fact["ino"] = c.ino;
  }
  if (!c.ok) {
    fact["ok"] = false;
    fact["step"] = c.step;
    fact["errno"] = ErrnoText(c.error);
    return fact;
  }
  fact["ok"] = true;
  fact["kind"] = PathKindName(c.kind);
  fact[c.kind == PathContent::Kind::kDir ? "entries" : "bytes"] =
      c.kind == PathContent::Kind::kDir ? c.entries : c.hashed.size();
  fact["truncated"] = c.truncated;
  fact["sha256"] = Sha256Hex(c.hashed);
  return fact;
}

json SourcedMountJson(const MountEntry& m) {
  return {{"dev", DeviceText(m.major, m.minor)}, {"root", m.root}, {"mount_point", m.mount_point},
          {"source", m.source}};
}

}  // namespace

std::set<std::string> DeniedHostPaths(const Plan& plan) {
  std::set<std::string> paths;
  for (const Check& check : plan.checks) {
    bool read_family = check.family == "fs.read" || check.family == "fs.alias";
    bool canary = check.target == "{host_canary}" || check.target.rfind("{mounted_canary:", 0) == 0;
    if (read_family && check.expect == Expectation::kDenied && !canary) {
      paths.insert(check.resolved_target);
    }
  }
  return paths;
}

json HostPathFacts(const std::set<std::string>& paths, const HostView& host) {
  json out = {{"paths", json::object()}, {"block_mounts", json::array()}};
  if (!host.root().empty()) out["host_root"] = host.root();
  for (const std::string& path : paths) out["paths"][path] = PathFacts(host, path);
  int error = 0;
  std::string text = host.MountinfoText(&error);
  if (error != 0) out["mountinfo_error"] = ErrnoText(error);
  std::vector<MountEntry> mounts = ParseMountinfo(text);
  // The root mount: the last "/" (a later mount over "/" hides the earlier one).
  if (const MountEntry* root = MountHolding(mounts, "/"); root != nullptr) out["root"] = SourcedMountJson(*root);
  for (const MountEntry& m : mounts) {
    if (m.source.rfind("/dev/", 0) == 0) out["block_mounts"].push_back(SourcedMountJson(m));
  }
  return out;
}

}  // namespace sandprobe
