#include "io/write_temp.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "model/errno_text.h"

namespace sandprobe {
namespace {

constexpr std::string_view kMarker = ".sandprobe-tmp.";
constexpr std::size_t kRandomHexChars = 12;
constexpr std::size_t kMaxJournalEntryBytes = 64 * 1024;

// Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses)
// and whether the process is a zombie (state Z or X).
struct StatFields {
  unsigned long long start_ticks = 0;
  bool dead = false;
};
std::optional<StatFields> ReadStat(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3, the state
  std::string_view rest(text);
  rest.remove_prefix(close + 2);
  while (!rest.empty()) {
    std::size_t space = rest.find(' ');
    fields.push_back(rest.substr(0, space));
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  if (fields.size() < 20) return std::nullopt;
  StatFields out;
  out.dead = fields[0] == "Z" || fields[0] == "X";
  auto [end, ec] = std::from_chars(fields[19].data(), fields[19].data() + fields[19].size(), out.start_ticks);
  if (ec != std::errc()) return std::nullopt;
  return out;
}

std::string RandomHex(std::size_t chars) {
  std::array<unsigned char, 16> bytes{};
  std::size_t need = (chars + 1) / 2, filled = 0;
  while (filled < need) {
    ssize_t n = ::getrandom(bytes.data() + filled, need - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // no entropy source: O_EXCL still refuses a name that exists
    filled += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (std::size_t i = 0; i < need; ++i) hex += fmt::format("{:02x}", bytes[i]);
  return hex.substr(0, chars);
}

bool AllOf(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

// "<pid>.<ticks>.<hex>" -> the writer; nullopt for anything else.
std::optional<WriterId> ParseUnique(std::string_view unique) {
  std::size_t first = unique.find('.');
  std::size_t second = first == std::string_view::npos ? first : unique.find('.', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  std::string_view pid = unique.substr(0, first), ticks = unique.substr(first + 1, second - first - 1),
                   hex = unique.substr(second + 1);
  if (!AllOf(pid, IsDigit) || !AllOf(ticks, IsDigit) || hex.size() != kRandomHexChars || !AllOf(hex, IsHex)) {
    return std::nullopt;
  }
  WriterId writer;
  if (std::from_chars(pid.data(), pid.data() + pid.size(), writer.pid).ec != std::errc() ||
      std::from_chars(ticks.data(), ticks.data() + ticks.size(), writer.start_ticks).ec != std::errc() ||
      writer.pid <= 0) {
    return std::nullopt;
  }
  return writer;
}

// A regular file (not a link) named `name` in `dir_fd`, owned by this uid.
bool OursAt(int dir_fd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         st.st_uid == ::geteuid();
}

// The journal directory, opened, when it is ours: a directory (not a link) of this uid that no
// other uid can write. -1 otherwise. `create`: make it first (mode 0700) if missing.
int OpenJournal(const std::string& run_root, bool create) {
  std::string dir = WriteJournalDir(run_root);
  if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The temp path a journal entry names; "" when unreadable, not ours or malformed.
std::string ReadJournalEntry(int journal_fd, const std::string& name) {
  int fd = ::openat(journal_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      static_cast<std::size_t>(st.st_size) <= kMaxJournalEntryBytes) {
    text.resize(static_cast<std::size_t>(st.st_size));
    ssize_t n = ::read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("temp") || !doc["temp"].is_string()) return "";
  return doc["temp"].get<std::string>();
}

}  // namespace

std::optional<WriterId> ThisWriter() {
  static const std::optional<WriterId> self = []() -> std::optional<WriterId> {
    int pid = ::getpid();
    std::optional<StatFields> stat = ReadStat(std::to_string(pid));
    if (!stat) return std::nullopt;
    return WriterId{pid, stat->start_ticks};
  }();
  // A fork has another pid: the cached identity is the parent's.
  if (self && self->pid == ::getpid()) return self;
  std::optional<StatFields> stat = ReadStat(std::to_string(::getpid()));
  if (!stat) return std::nullopt;
  return WriterId{::getpid(), stat->start_ticks};
}

bool WriterGone(const WriterId& writer) {
  std::optional<StatFields> stat = ReadStat(std::to_string(writer.pid));
  return !stat || stat->dead || stat->start_ticks != writer.start_ticks;
}

std::string NewTempName(std::string_view target_name) {
  WriterId self = ThisWriter().value_or(WriterId{::getpid(), 0});
  return fmt::format(".{}{}{}.{}.{}", target_name, kMarker, self.pid, self.start_ticks, RandomHex(kRandomHexChars));
}

std::optional<TempName> ParseTempName(std::string_view name) {
  if (name.size() < 2 || name[0] != '.') return std::nullopt;
  std::size_t marker = name.rfind(kMarker);
  if (marker == std::string_view::npos || marker < 2) return std::nullopt;
  std::string_view unique = name.substr(marker + kMarker.size());
  std::optional<WriterId> writer = ParseUnique(unique);
  if (!writer) return std::nullopt;
  return TempName{std::string(name.substr(1, marker - 1)), *writer, std::string(unique)};
}

std::vector<std::string> RemoveDeadTemps(int dir_fd, std::string_view target_name) {
  std::vector<std::string> removed;
  int list_fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0) return removed;
  DIR* dir = ::fdopendir(list_fd);
  if (dir == nullptr) {
    ::close(list_fd);
    return removed;
  }
  std::vector<std::string> candidates;
  const std::string prefix = fmt::format(".{}{}", target_name, kMarker);
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    std::optional<TempName> temp = ParseTempName(name);
    if (temp && temp->target == target_name && WriterGone(temp->writer)) candidates.push_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : candidates) {
    if (OursAt(dir_fd, name) && ::unlinkat(dir_fd, name.c_str(), 0) == 0) removed.push_back(name);
  }
  return removed;
}

std::string WriteJournalDir(const std::string& run_root) {
  return fmt::format("{}/.sandprobe-writes-{}", run_root, ::geteuid());
}

WriteJournalEntry WriteJournalEntry::Record(const std::string& run_root, const std::string& temp_path) {
  std::optional<TempName> temp = ParseTempName(temp_path.substr(temp_path.rfind('/') + 1));
  if (!temp || temp_path.empty() || temp_path[0] != '/') return {};
  int journal = OpenJournal(run_root, /*create=*/true);
  if (journal < 0) return {};
  int fd = ::openat(journal, temp->unique.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  std::string text = nlohmann::json{{"temp", temp_path}}.dump() + "\n";
  bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  if (fd >= 0 && !written) ::unlinkat(journal, temp->unique.c_str(), 0);
  ::close(journal);
  return written ? WriteJournalEntry(WriteJournalDir(run_root) + "/" + temp->unique) : WriteJournalEntry();
}

WriteJournalEntry::~WriteJournalEntry() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

std::vector<DeadWrite> SweepDeadWrites(const std::string& run_root, bool dry_run) {
  std::vector<DeadWrite> dead;
  int journal = OpenJournal(run_root, /*create=*/false);
  if (journal < 0) return dead;
  int list_fd = ::dup(journal);
  DIR* dir = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  std::vector<std::string> names;
  if (dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) names.emplace_back(entry->d_name);
    ::closedir(dir);
  } else if (list_fd >= 0) {
    ::close(list_fd);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::optional<WriterId> writer = ParseUnique(name);
    if (!writer || !WriterGone(*writer)) continue;
    std::string temp = ReadJournalEntry(journal, name);
    std::size_t slash = temp.rfind('/');
    std::optional<TempName> parsed =
        slash == std::string::npos || temp[0] != '/' ? std::nullopt : ParseTempName(temp.substr(slash + 1));
    if (parsed && parsed->unique == name) {
      DeadWrite write{.temp = temp, .why = fmt::format("writer pid {} is gone", writer->pid)};
      std::string base = temp.substr(slash + 1), parent = DirectoryOf(temp);
      int parent_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat st {};
      bool there = parent_fd >= 0 && ::fstatat(parent_fd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
      if (there && !OursAt(parent_fd, base)) {
        write.error = fmt::format("\"{}\": not a regular file of uid {}: left alone", temp, ::geteuid());
      } else if (there && !dry_run && ::unlinkat(parent_fd, base.c_str(), 0) != 0 && errno != ENOENT) {
        write.error = fmt::format("unlink(\"{}\"): {}", temp, ErrnoText(errno));
      }
      if (parent_fd >= 0) ::close(parent_fd);
      bool failed = !write.error.empty();
      if (there) dead.push_back(std::move(write));
      if (failed) continue;  // the entry stays: the next sweep says it again
    }
    if (!dry_run) ::unlinkat(journal, name.c_str(), 0);
  }
  ::close(journal);
  return dead;
}

}  // namespace sandprobe
