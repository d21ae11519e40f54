// Who may write a run's workspace: the sandbox's uid and nobody else (issue 25: another local
// user once planted a file in a mode-0777 workspace, and the report listed it as the probe's).
//
// The workspace is made mode 0700 by the harness. When the profile declares that its sandbox
// writes as another uid (load/profile.h, workspace_owner), that uid gets it:
//   - as root: chown to that uid and gid (exact, and honoured by every backend, gVisor's
//     sentry included, which checks the mode bits and owner it is shown);
//   - as another user: a POSIX ACL (system.posix_acl_access, the kernel's own xattr format)
//     granting that uid rwx, and a default ACL giving it and the harness's user rwx on what is
//     made inside (so the harness can still remove it). Where the filesystem has no ACLs, the
//     run cannot give the workspace away and says so (a harness error) rather than open it to
//     everyone.
// Never world-writable: any local user of the sandbox's uid can write it (they are the
// sandbox's uid), no one else.
#pragma once

#include <optional>
#include <string>

#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

// Makes the directory `workspace` (which this process just created) writable by `owner` (or,
// without one, by this process's user) alone. Errors name the call and what to do.
Status GiveWorkspace(const std::string& workspace, const std::optional<WorkspaceOwner>& owner);

// Grants `uid` rwx on the directory `dir` by an access ACL, and `uid` and this euid rwx on what
// is made inside by a default ACL. Exposed for tests.
Status GrantByAcl(const std::string& dir, std::uint32_t uid);

}  // namespace sandprobe
