// Writing a report file so that a reader never sees half of it.
//
// CI picks report files up after the run; a crash, SIGKILL or SIGINT while writing must leave
// either the previous file or the new one, never a truncated mix. So: temp file in the target's
// directory (rename is only atomic within one filesystem), write, rename over the target. On any
// failure the temp file is removed.
//
// Not fsynced: every reader (CI's next step, `sandprobe sweep` reading a run's owner.json) runs
// on the same machine while it is up, and the page cache outlives any process. Only a machine
// crash could lose the file, and that ends the CI job anyway. The syncs cost about 1.5 ms per
// run, a quarter of a bwrap launch.
#pragma once

#include <string>
#include <string_view>

#include "runner/status.h"

namespace sandprobe {

// Replaces `path` with `contents` atomically; the file gets mode 0644. Errors name the step
// and the path: `rename(".r.json.AbC123" -> "out/r.json"): EISDIR`.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Writes `contents` to stdout and flushes; for `-o -`.
Status WriteToStdout(std::string_view contents);

}  // namespace sandprobe
