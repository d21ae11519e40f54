#include "run/workspace_owner.h"

#include <endian.h>
#include <fcntl.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "model/errno_text.h"

namespace sandprobe {
namespace {

constexpr std::uint16_t kRwx = ACL_READ | ACL_WRITE | ACL_EXECUTE;

struct AclEntry {
  std::uint16_t tag;
  std::uint16_t perm;
  std::uint32_t id;
};

// The kernel's xattr form of an ACL: a version, then entries sorted by tag and id, each
// little-endian (linux/posix_acl_xattr.h).
std::string AclXattr(std::vector<AclEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const AclEntry& a, const AclEntry& b) { return a.tag != b.tag ? a.tag < b.tag : a.id < b.id; });
  std::string out(sizeof(posix_acl_xattr_header) + entries.size() * sizeof(posix_acl_xattr_entry), '\0');
  posix_acl_xattr_header header{htole32(POSIX_ACL_XATTR_VERSION)};
  std::copy_n(reinterpret_cast<const char*>(&header), sizeof header, out.data());
  char* at = out.data() + sizeof header;
  for (const AclEntry& e : entries) {
    posix_acl_xattr_entry raw{htole16(e.tag), htole16(e.perm), htole32(e.id)};
    std::copy_n(reinterpret_cast<const char*>(&raw), sizeof raw, at);
    at += sizeof raw;
  }
  return out;
}

Status SetXattr(int fd, const std::string& dir, const char* name, const std::string& value) {
  if (::fsetxattr(fd, name, value.data(), value.size(), 0) != 0) {
    return Status::HarnessError(fmt::format("fsetxattr(\"{}\", {}): {}", dir, name, ErrnoText(errno)));
  }
  return Status::Ok();
}

}  // namespace

Status GrantByAcl(const std::string& dir, std::uint32_t uid) {
  const auto undefined = static_cast<std::uint32_t>(ACL_UNDEFINED_ID);
  const std::uint32_t self = ::geteuid();
  std::vector<AclEntry> access = {{ACL_USER_OBJ, kRwx, undefined}, {ACL_USER, kRwx, uid},
                                  {ACL_GROUP_OBJ, 0, undefined},   {ACL_MASK, kRwx, undefined},
                                  {ACL_OTHER, 0, undefined}};
  std::vector<AclEntry> inherited = access;
  if (self != uid) inherited.push_back({ACL_USER, kRwx, self});
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::HarnessError(fmt::format("open(\"{}\"): {}", dir, ErrnoText(errno)));
  Status status = SetXattr(fd, dir, "system.posix_acl_access", AclXattr(access));
  if (status.ok()) status = SetXattr(fd, dir, "system.posix_acl_default", AclXattr(inherited));
  ::close(fd);
  return status;
}

Status GiveWorkspace(const std::string& workspace, const std::optional<WorkspaceOwner>& owner) {
  // Explicitly: mkdir's mode went through the umask, and 0700 is what is meant.
  if (::chmod(workspace.c_str(), 0700) != 0) {
    return Status::HarnessError(fmt::format("chmod(\"{}\", 0700): {}", workspace, ErrnoText(errno)));
  }
  if (!owner || owner->uid == ::geteuid()) return Status::Ok();
  if (::geteuid() == 0) {
    // A directory this process made in a run dir no one else can write: nobody can have
    // swapped it for a link.
    if (::lchown(workspace.c_str(), owner->uid, owner->gid) != 0) {
      return Status::HarnessError(
          fmt::format("lchown(\"{}\", {}, {}): {}", workspace, owner->uid, owner->gid, ErrnoText(errno)));
    }
    return Status::Ok();
  }
  Status granted = GrantByAcl(workspace, owner->uid);
  if (granted.ok()) return granted;
  return Status::HarnessError(fmt::format(
      "give the workspace to uid {} (the profile's workspace_owner): {}; run as root or as uid {}, "
      "or set SANDPROBE_RUN_ROOT to a filesystem with POSIX ACLs",
      owner->uid, granted.message(), owner->uid));
}

}  // namespace sandprobe
