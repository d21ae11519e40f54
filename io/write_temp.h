// The temp files of atomic writes (io/atomic_file.h), recognisable after a crash.
//
// A write in flight is a temp file beside its target, named
//   .<target name>.sandprobe-tmp.<writer pid>.<writer start ticks>.<12 hex>
// The writer is its pid together with its start time (field 22 of /proc/<pid>/stat), so a
// recycled pid never passes for a writer that died. A writer killed with -9 between creating
// the temp file and renaming it leaves the temp behind; that file is removed
//   - by the next write to the same target (RemoveDeadTemps), and
//   - by `sandprobe sweep` and the start-up sweep of every run (SweepDeadWrites), through the
//     journal: before a report's temp file is made, an entry naming it goes into
//     <run root>/.sandprobe-writes-<uid>/ (a 0700 directory of the writer's own uid), and it is
//     removed once the temp file is renamed or removed.
// Only what is ours is removed: a regular file (never a link), owned by this uid, whose name
// has the pattern above for that target, written by a process that is gone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandprobe {

struct WriterId {
  int pid = 0;
  unsigned long long start_ticks = 0;
};

// This process; nullopt when /proc/self/stat cannot be read.
std::optional<WriterId> ThisWriter();

// True when no process runs with that pid and start time (or it is a zombie).
bool WriterGone(const WriterId& writer);

// A fresh temp name for `target_name` (a file name, no slash), for this process.
std::string NewTempName(std::string_view target_name);

struct TempName {
  std::string target;  // the target's file name
  WriterId writer;
  std::string unique;  // "<pid>.<ticks>.<hex>": names its journal entry
};
// The parts of a temp name of the pattern above; nullopt for any other name.
std::optional<TempName> ParseTempName(std::string_view name);

// Removes, in the directory `dir_fd`, the temp files of `target_name` whose writer is gone and
// that are regular files owned by this uid. Returns the names removed.
std::vector<std::string> RemoveDeadTemps(int dir_fd, std::string_view target_name);

// An entry of the journal of writes in flight; removed when destroyed. Best effort: when the
// journal cannot be written (no run root, a directory another uid planted there), the entry is
// empty and only the next write to the same target finds a leftover temp file.
class WriteJournalEntry {
 public:
  WriteJournalEntry() = default;
  // Records `temp_path` (absolute), a temp name of this process, in the run root's journal.
  static WriteJournalEntry Record(const std::string& run_root, const std::string& temp_path);
  WriteJournalEntry(WriteJournalEntry&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  WriteJournalEntry& operator=(WriteJournalEntry&&) = delete;
  ~WriteJournalEntry();
  bool recorded() const { return !path_.empty(); }

 private:
  explicit WriteJournalEntry(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The journal directory of this uid under `run_root`.
std::string WriteJournalDir(const std::string& run_root);

// A write whose writer died: its temp file, removed (or, in a dry run, to be removed).
struct DeadWrite {
  std::string temp;   // absolute path
  std::string why;    // "writer pid 4242 is gone"
  std::string error;  // non-empty: it could not be removed, and why
};

// Every journal entry of this uid under `run_root` whose writer is gone: its temp file is
// removed when it is still there and ours, then the entry. Entries of live writers are left.
// Dry run: lists, removes nothing. Temp files already gone are not listed.
std::vector<DeadWrite> SweepDeadWrites(const std::string& run_root, bool dry_run);

}  // namespace sandprobe
