// Removing a directory tree that another uid may write into while it is removed (a run dir
// whose workspace belongs to the sandbox's uid, and so to any process of that uid).
//
// std::filesystem::remove_all (libstdc++ 12, Boost 1.74 alike) checks an entry's type by name
// and then descends by name: a directory swapped for a symlink in between sends root's removal
// to wherever the link points (the remove_dir_all race, CVE-2022-21658). Here every directory
// is opened relative to its parent with O_NOFOLLOW | O_DIRECTORY and emptied through that fd,
// so a link is only ever removed itself; a directory on another filesystem (a mount) is not
// entered.
#pragma once

#include <string>

#include "model/status.h"

namespace sandprobe {

// Removes `path` (a directory, a file or a link, never followed) and everything below it.
// ENOENT for `path` itself is success. The first error names the entry and the call; the
// removal goes on past it, so as much as possible is gone.
Status RemoveTree(const std::string& path);

}  // namespace sandprobe
