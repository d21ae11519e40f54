// Reading other processes through /proc: what the launcher's leftover sweep, the run registry
// and the witnesses need to recognise a process (its parent, group, session, start time, argv).
//
// A pid alone names a process only while it cannot be reused: a child not yet reaped, or a
// pid paired with its start time (field 22 of /proc/<pid>/stat), which a new process with the
// same pid would not share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandprobe {

// Fields of /proc/<pid>/stat (see proc(5)).
struct ProcStat {
  int pid = 0;
  char state = '?';  // R, S, D, Z, X, ...
  int ppid = 0;
  int pgid = 0;
  int sid = 0;
  unsigned long long start_ticks = 0;  // field 22: clock ticks after boot
  bool dead() const { return state == 'Z' || state == 'X'; }
};

// Parses the text of a stat file; the comm field may hold spaces and parentheses, so the
// fields after it are found from the last ')'.
std::optional<ProcStat> ParseProcStat(std::string_view text);
// nullopt when the process is gone (or /proc is not readable).
std::optional<ProcStat> ReadProcStat(int pid);

// The raw bytes of /proc/<pid>/<name> ("cmdline", "environ"), at most `cap` bytes; empty when
// unreadable (gone, a zombie, or not ours to read).
std::string ReadProcFile(int pid, const char* name, std::size_t cap = 64 * 1024);

// A NUL-separated cmdline for people: NULs as spaces, no trailing space, capped at `cap`
// bytes (then "...").
std::string CmdlineForDisplay(std::string_view raw, std::size_t cap);

// Every numeric entry of /proc, ascending.
std::vector<int> ListPids();

// The pids whose parent is this process (any of its threads), from
// /proc/<pid>/task/*/children: a few small reads instead of a walk over every process. Falls
// back to ListPids() (a superset: callers check the parent) where the kernel lacks the file.
std::vector<int> ListOwnChildrenOrAllPids();

// Every descendant of `root_pid` (children, their children, ...), ascending, by following
// the children files down; empty when it is gone. nullopt where the kernel lacks the files,
// the tree keeps changing under the reads, or it is implausibly large (over 100000).
std::optional<std::vector<int>> ListDescendants(int root_pid);

// Every descendant of this process, as above, with its own children read again at the end:
// one whose parent exits during the walk is reparented to this process if it is a child
// subreaper. Falls back to ListPids() (a superset: callers check what they look for) where
// ListDescendants would give nullopt.
std::vector<int> ListOwnDescendantsOrAllPids();

// A process found by a token in its argv (a canary, a probe's background process).
struct HostProcess {
  long pid = 0;
  std::string argv;  // the command line, NULs shown as spaces
  // In the same pid namespace as the harness (the host's, when the harness runs on the host);
  // false for a process inside a container's or bwrap's own pid namespace.
  bool host_pid_namespace = false;
};

// True when `arg` is one whole element of a NUL-separated cmdline.
bool CmdlineHasArg(std::string_view cmdline, std::string_view arg);

// Every process (but the caller) with `arg` as one whole argv element.
std::vector<HostProcess> FindProcessesWithArg(const std::string& arg);

}  // namespace sandprobe
