// Writing a report where the user said, without harming what is already there.
//
// CI picks report files up after the run; a crash, SIGKILL or SIGINT while writing must leave
// either the previous file or the new one, never a truncated mix. So: temp file in the target's
// directory (rename is only atomic within one filesystem), write, rename over the target. On any
// failure the temp file is removed; a temp file a killed writer left has a name that says whose
// it was, and is removed by the next write to the same target or by `sandprobe sweep`
// (io/write_temp.h).
//
// Who may read the report: a new file gets 0666 less the umask (umask 077: 0600), as any
// program's output would. Writing over an existing report keeps that file's mode and group (a
// group it cannot be given loses its permission bits instead) and its owner, which must be the
// harness's own user: another uid's file is refused (exit 2 before the run). As root that is a
// choice, not a limit: root could chown the new file to its old owner, but a report written by
// root into another user's file is root's data handed to them under a name they chose, and the
// rename would have to trust a directory they control. No exception: remove the file, or write
// the report elsewhere.
//
// But a rename replaces whatever directory entry has the name: run as root, `--json /dev/null`
// once turned the host's /dev/null into a regular file. So the rename is only ever done over a
// regular file or a missing name. What a report output path leads to (ResolveOutput):
//   - "-", /dev/stdout, /dev/stderr (and /dev/fd/1, /proc/self/fd/1, ...): the harness's own
//     fd 1 or 2, written through stdio so it follows the console text in order;
//   - a regular file, or nothing yet: temp file + rename;
//   - a character device or a FIFO: opened (no O_CREAT, no O_TRUNC) and written through, never
//     replaced. A FIFO is opened O_NONBLOCK first, so one nobody reads is a clear error
//     ("no reader") instead of a harness blocked forever; then the write blocks as usual;
//   - a directory, block device or socket: refused.
// Symlinks: the link itself is never replaced. A chain of links is followed (at most 40 hops)
// to what it names, and that is treated as above: a link to a regular file (or to a name that
// does not exist yet) gets the temp file + rename at the resolved path, so the link keeps
// pointing where the user made it point and the file it names is replaced atomically
// (`out/report.json -> /srv/ci/real.json` updates real.json). A link owned by anyone but the
// harness's user or root is refused rather than followed: that is the classic attack on a
// shared directory (another user plants /tmp/r.json -> /etc/shadow and waits for root to write
// its report), the same rule as the kernel's fs.protected_symlinks.
//
// The kind is decided again at write time (the run may take minutes); CheckReportOutputs runs
// the same resolution before the run, so a bad path costs a usage error (exit 2) up front and
// not a finished run that cannot be saved. A race between the check and the rename (someone
// swaps the regular file for a link meanwhile) replaces that link, never what it points to.
//
// Not fsynced: every reader (CI's next step, `sandprobe sweep` reading a run's owner.json) runs
// on the same machine while it is up, and the page cache outlives any process. Only a machine
// crash could lose the file, and that ends the CI job anyway. The syncs cost about 1.5 ms per
// run, a quarter of a bwrap launch.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/status.h"

namespace sandprobe {

// How a report reaches its output path.
enum class OutputKind {
  kStream,        // the harness's own stdout or stderr (OutputTarget::fd)
  kReplace,       // temp file + rename at OutputTarget::path (a regular file or a missing name)
  kWriteThrough,  // open and write OutputTarget::path (a character device or a FIFO)
};

struct OutputTarget {
  OutputKind kind = OutputKind::kReplace;
  std::string path;  // kReplace, kWriteThrough: after following symlinks
  int fd = -1;       // kStream: 1 or 2
  bool fifo = false; // kWriteThrough: a FIFO (else a character device)
};

// The directory part of `path`: "/" for "/x", "." for a name without a slash.
std::string DirectoryOf(const std::string& path);

// What `path` leads to now, by the rules above; an error names why it is refused:
// `"out": a directory, not a file`.
StatusOr<OutputTarget> ResolveOutput(const std::string& path);

// True when `path` is written to the harness's stdout ("-", /dev/stdout, ...).
bool WritesToStdout(const std::string& path);

// Before the run: every non-empty path of {flag, path} (e.g. {"--json", "r.json"}) resolves to
// something writable (for a new file: its directory exists and is writable; for a device: it
// is writable), and no two outputs land in the same place (`--json - --junit -`). Opens
// nothing: opening a FIFO would hand its waiting reader an EOF, and some devices act on open.
Status CheckReportOutputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Writes a report to `path` by its ResolveOutput kind. Errors name the step and the path.
Status WriteReportOutput(const std::string& path, std::string_view contents);

struct AtomicWriteOptions {
  // The file's mode whatever the umask or an existing file's mode (owner.json: 0600); nullopt:
  // 0666 less the umask for a new file, the existing file's mode otherwise.
  std::optional<mode_t> mode;
  // Record the temp file in the run root's journal (io/write_temp.h) so a sweep finds it when
  // this process is killed mid-write. For reports; a file the sweep removes anyway (owner.json
  // in its run dir) needs none.
  bool journal = false;
};

// Replaces `path` with `contents` atomically (see the top of this file for mode and owner).
// Refuses when `path` is there and not a regular file of this uid (never renames over a link,
// device or FIFO). Errors name the step and the path:
// `rename(".r.json.sandprobe-tmp.42.9.0a1b2c3d4e5f" -> "out/r.json"): EISDIR`.
Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           const AtomicWriteOptions& options = {});

// Writes `contents` to stdout and flushes; for `-o -`.
Status WriteToStdout(std::string_view contents);

}  // namespace sandprobe
