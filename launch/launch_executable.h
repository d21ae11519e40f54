// Which program a launch runs. Part of the launcher (ProcessLauncher resolves every argv[0]
// here before it forks); its own file because it is a concept of its own.
//
// Profiles name programs by bare name (`env`, `bwrap`, `docker`), so whoever controls PATH
// controls what runs: a forged `env` earlier in PATH would give a report byte-identical to a
// real run. So each launch records the absolute path it ran and the SHA-256 of that file, and
// says when the file is easy to forge (a writable directory, someone else's file, a PATH
// directory outside the system ones). The launcher execs exactly the resolved path, so the
// record and what ran cannot differ by PATH. They can only differ if the file itself is
// replaced between the hash's open (before the fork) and execve; a file where that is possible
// gets the warning.
#pragma once

#include <future>
#include <optional>
#include <string>

#include "model/status.h"

namespace sandprobe {

struct ResolvedExecutable {
  std::string path;     // absolute; what the launcher hands to execve
  std::string sha256;   // lowercase hex of the file's bytes; "" when it could not be read
  std::string warning;  // "" or why the file is suspect; "; "-separated when several
};

// The directories a bare name may resolve into without a warning.
inline constexpr const char* kSystemPath =
    "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin";

// argv[0] resolved as execvp(3) would in the child: a name with a '/' is taken as is; a bare
// name is searched in `path_env` (the child's PATH; unset: confstr(_CS_PATH), as glibc), where
// an empty entry means the current directory, and the first regular file the caller may
// execute wins. Relative results are made absolute against `working_dir` (the directory the
// child changes to before execve; empty: this process's cwd). Error only when a bare name is
// nowhere: `execve(foo): ENOENT (not in PATH)`, or EACCES when only unexecutable ones exist.
StatusOr<ResolvedExecutable> ResolveExecutable(const std::string& argv0,
                                               const std::optional<std::string>& path_env,
                                               const std::string& working_dir);

// SHA-256 of the file at `path`, computed while the launch runs: the file is opened now (the
// inode hashed is the one the path named before the fork) and, unless the hash is cached,
// hashed on a thread of its own; get() waits for it. A 45 MB docker binary takes 36 ms to hash,
// about an eighth of a container launch: off the critical path, it overlaps the launch. The
// file cannot change under the hash while it runs (writing a running executable is ETXTBSY).
// Cached by (device, inode, size, mtime, ctime) for the life of the process and, for a file of
// 1 MiB or more, in a file of this user's from one run to the next (launch_hash_cache.h): a
// docker CLI is hashed once, not once per run or launch, and any change to the file (ctime
// cannot be set back by its owner) is hashed again. The lookup runs on the hash's thread too.
std::future<StatusOr<std::string>> StartExecutableSha256(const std::string& path);

// The same, waited for at once.
inline StatusOr<std::string> ExecutableSha256(const std::string& path) { return StartExecutableSha256(path).get(); }

// Why the file at absolute `path` is easy to forge, or "": a directory on its path (as named
// and after resolving symlinks) that is group- or world-writable without the sticky bit; the
// file itself group- or world-writable; a directory, symlink or the file owned by someone other
// than root or this process's user. Only its permissions count, never its location: a file
// only root or this user can replace is as trustworthy in ~/.local/bin as in /usr/bin.
std::string ExecutableWarning(const std::string& path);

// Where a bare name (argv[0] without a '/') was found when that is outside kSystemPath:
// "found on PATH in /root/.local/bin, outside the system paths /usr/bin:...", else "". Worth a
// warning (whoever set PATH chose the program) but not a reason to distrust what it printed:
// the report records the path and SHA-256 of exactly what ran.
std::string PathLocationNote(const std::string& path, bool found_in_path);

}  // namespace sandprobe
