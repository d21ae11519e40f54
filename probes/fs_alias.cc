// fs.alias: does a denial hold when the same file is named another way?
//
// Path-based sandboxes (seccomp path filters, LSM rules on strings, FUSE layers) can block
// "/etc/shadow" and still allow "/tmp/../etc/shadow", "/proc/self/root/etc/shadow" or a symlink
// the process planted itself. For each path this family reads it through each alias and
// reports the same facts as fs.read, plus which alias ("variant") and the exact name ("via").
//
// mount_root looks for the path under every other mount of the sandbox (/proc/self/mountinfo):
// a bind of a host directory holds the host's files under its mount point, e.g. `-v /:/host`
// puts /etc/shadow at /host/etc/shadow and `-v /var/tmp:/data` puts /var/tmp/x at /data/x (the
// mount's root, /var/tmp, taken off the path). It reports one fact per path: how many names it
// tried and the readable ones ("hits", each with fs.read's facts), never a judgement.
#include <unistd.h>

#include <cerrno>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/errno_name.h"
#include "probes/families.h"
#include "contract/mountinfo.h"
#include "probes/read_path.h"

namespace sandprobe {
namespace {

// Every alias is reported, so the host can tell "all three denied" from "one slipped through".
enum class AliasVariant { kDotDot, kProcRoot, kSymlink, kMountRoot };

const char* VariantName(AliasVariant variant) {
  switch (variant) {
    case AliasVariant::kDotDot: return "dotdot";
    case AliasVariant::kProcRoot: return "proc_root";
    case AliasVariant::kSymlink: return "symlink";
    case AliasVariant::kMountRoot: return "mount_root";
  }
  return "?";
}

nlohmann::json AliasFact(const std::string& path, AliasVariant variant, const std::string& via) {
  nlohmann::json fact = {{"family", "fs.alias"}, {"variant", VariantName(variant)}};
  SetBytesField(fact, "path", path);
  SetBytesField(fact, "via", via);
  return fact;
}

// Plants symlink -> path in the scratch dir, reads through it and removes it again; a failed
// symlink() is itself a fact (step "symlink"), e.g. EROFS on a read-only scratch dir.
void ReadThroughSymlink(const std::string& path, const std::string& link, nlohmann::json& fact) {
  DeadlineHold hold;  // the link must not outlive the probe
  if (::symlink(path.c_str(), link.c_str()) != 0) {
    fact["ok"] = false;
    fact["step"] = "symlink";
    fact["errno"] = ErrnoName(errno);
    return;
  }
  ReadPathFacts(link, fact);
  if (::unlink(link.c_str()) != 0) fact["link_unlink_errno"] = ErrnoName(errno);
  fact["link_removed"] = !fact.contains("link_unlink_errno");
}

// Bounds of mount_root: mounts looked at, readable names listed per path, and names tried over
// the whole family (so 4096 paths under 256 mounts stay a few seconds of failed opens).
constexpr std::size_t kMaxMountRoots = 256;
constexpr std::size_t kMaxHitsListed = 16;
constexpr std::size_t kMaxMountRootTries = 200000;

// Mount points and roots other than "/" itself, first kMaxMountRoots.
std::vector<MountEntry> OtherMounts(std::size_t* total) {
  int error = 0;
  std::vector<MountEntry> all = ParseMountinfo(ReadMountinfoText(&error));
  *total = all.size();
  std::vector<MountEntry> out;
  for (MountEntry& m : all) {
    if (m.mount_point == "/" || m.mount_point.empty() || m.mount_point[0] != '/') continue;
    if (out.size() == kMaxMountRoots) break;
    out.push_back(std::move(m));
  }
  return out;
}

// The names `path` may have under mount `m`: M + P, and M + (P - R) when P lies under the
// mount's root R, or M itself when P is R (the host's /root bound at /data is /data).
std::vector<std::string> NamesUnder(const MountEntry& m, const std::string& path) {
  std::vector<std::string> names = {m.mount_point + path};
  const std::string& root = m.root;
  if (root != "/" && path == root) {
    names.push_back(m.mount_point);
  } else if (root != "/" && path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
             path[root.size()] == '/') {
    names.push_back(m.mount_point + path.substr(root.size()));
  }
  return names;
}

nlohmann::json MountRootFact(const std::string& path, const std::vector<MountEntry>& mounts,
                             std::size_t total_mounts, std::size_t& budget) {
  nlohmann::json fact = {{"family", "fs.alias"}, {"variant", VariantName(AliasVariant::kMountRoot)}};
  SetBytesField(fact, "path", path);
  nlohmann::json hits = nlohmann::json::array();
  std::set<std::string> tried;
  std::size_t readable = 0;
  for (const MountEntry& m : mounts) {
    for (const std::string& via : NamesUnder(m, path)) {
      if (via == path || budget == 0 || !tried.insert(via).second) continue;
      --budget;
      nlohmann::json hit = nlohmann::json::object();
      ReadPathFacts(via, hit);
      if (!hit.value("ok", false)) continue;
      ++readable;
      if (hits.size() == kMaxHitsListed) continue;
      SetBytesField(hit, "via", via);
      hits.push_back(std::move(hit));
    }
  }
  fact["ok"] = readable > 0;
  fact["mounts"] = mounts.size();
  fact["mounts_total"] = total_mounts;
  fact["tried"] = tried.size();
  fact["readable"] = readable;
  fact["hits"] = std::move(hits);
  fact["hits_truncated"] = readable > kMaxHitsListed;
  fact["budget_exhausted"] = budget == 0;
  return fact;
}

}  // namespace

std::string DotDotAlias(const std::string& scratch, const std::string& path) {
  // Climb one ".." per non-empty component of scratch. Counting "." or ".." components as
  // depth too only over-climbs, which is harmless: "/.." is "/".
  std::string via = scratch;
  while (!via.empty() && via.back() == '/') via.pop_back();
  std::size_t depth = 0;
  bool in_component = false;
  for (char c : scratch) {
    if (c != '/' && !in_component) ++depth;
    in_component = c != '/';
  }
  for (std::size_t i = 0; i < depth; ++i) via += "/..";
  std::size_t start = path.find_first_not_of('/');
  via += '/';
  if (start != std::string::npos) via += path.substr(start);
  return via;
}

std::string CheckFsAliasArgs(const FamilyArgs& args) {
  if (args.size() < 2 || args[0] != "--scratch" || args[1].empty()) {
    return "fs.alias: usage: fs.alias --scratch DIR PATH...";
  }
  const FamilyArgs paths(args.begin() + 2, args.end());
  std::string error = CheckPathList("fs.alias", paths);
  if (!error.empty()) return error;
  for (const std::string& path : paths) {
    // The aliases are built from the absolute form; a relative path has no root to alias.
    if (path[0] != '/') return "fs.alias: path is not absolute: " + path;
  }
  return "";
}

void RunFsAlias(const ProbeContext& ctx, const FamilyArgs& args) {
  const std::string& scratch = args[1];
  std::size_t total_mounts = 0;
  const std::vector<MountEntry> mounts = OtherMounts(&total_mounts);
  std::size_t budget = kMaxMountRootTries;
  for (std::size_t i = 2; i < args.size(); ++i) {
    const std::string& path = args[i];

    const std::string dotdot = DotDotAlias(scratch, path);
    nlohmann::json fact = AliasFact(path, AliasVariant::kDotDot, dotdot);
    ReadPathFacts(dotdot, fact);
    ctx.out.Emit(fact);

    const std::string proc_root = "/proc/self/root" + path;
    fact = AliasFact(path, AliasVariant::kProcRoot, proc_root);
    ReadPathFacts(proc_root, fact);
    ctx.out.Emit(fact);

    const std::string link =
        scratch + "/.sandprobe-" + ctx.nonce + "-link-" + std::to_string(i - 2);
    fact = AliasFact(path, AliasVariant::kSymlink, link);
    ReadThroughSymlink(path, link, fact);
    ctx.out.Emit(fact);

    ctx.out.Emit(MountRootFact(path, mounts, total_mounts, budget));
  }
}

}  // namespace sandprobe
