// fs.alias: does a denial hold when the same file is named another way?
//
// Path-based sandboxes (seccomp path filters, LSM rules on strings, FUSE layers) can block
// "/etc/shadow" and still allow "/tmp/../etc/shadow", "/proc/self/root/etc/shadow" or a symlink
// the process planted itself. For each path this family reads it through each alias and
// reports the same facts as fs.read, plus which alias ("variant") and the exact name ("via").
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "probes/errno_name.h"
#include "probes/families.h"
#include "probes/read_path.h"

namespace sandprobe {
namespace {

// Every alias is reported, so the host can tell "all three denied" from "one slipped through".
enum class AliasVariant { kDotDot, kProcRoot, kSymlink };

const char* VariantName(AliasVariant variant) {
  switch (variant) {
    case AliasVariant::kDotDot: return "dotdot";
    case AliasVariant::kProcRoot: return "proc_root";
    case AliasVariant::kSymlink: return "symlink";
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
  }
}

}  // namespace sandprobe
