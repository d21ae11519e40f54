#include "launch/launch_executable.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <openssl/sha.h>

#include "launch/launch_hash_cache.h"
#include "io/atomic_file.h"
#include "model/errno_text.h"
#include "model/ready_future.h"

namespace sandprobe {
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (text.empty() || text.back() == sep) parts.emplace_back();  // getline drops a trailing ""
  return parts;
}

std::string Join(std::string dir, const std::string& name) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) dir.push_back('.');  // execvp: an empty PATH entry is the current directory
  if (dir != "/") dir += '/';
  dir += name;
  return dir;
}

std::string DefaultPath() {
  std::array<char, 256> buffer{};
  const std::size_t n = ::confstr(_CS_PATH, buffer.data(), buffer.size());
  return n > 0 && n <= buffer.size() ? std::string(buffer.data()) : "/bin:/usr/bin";
}

std::string Absolute(const std::string& path, const std::string& working_dir) {
  if (!path.empty() && path[0] == '/') return path;
  std::string base = working_dir;
  if (base.empty() || base[0] != '/') {
    std::array<char, PATH_MAX> cwd{};
    const std::string here = ::getcwd(cwd.data(), cwd.size()) ? cwd.data() : ".";
    base = base.empty() ? here : Join(here, base);
  }
  std::string rest = path;
  while (rest.rfind("./", 0) == 0) rest.erase(0, 2);
  return Join(base, rest);
}

std::mutex g_hash_mutex;
std::map<std::string, std::string> g_hash_cache;  // FileIdentity -> sha256; guarded by g_hash_mutex

std::string Hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

// The low-level calls for the same reason as witnesses/witnesses.cc: EVP's first use loads
// openssl.cnf, about 0.5 ms.
StatusOr<std::string> HashFd(int fd, const std::string& path) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  constexpr std::size_t kChunk = 256 * 1024;
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[kChunk]);  // not zeroed: read() fills it
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  SHA256_CTX context;
  SHA256_Init(&context);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.get(), kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(fmt::format("read(\"{}\"): {}", path, ErrnoText(errno)));
    if (n == 0) break;
    SHA256_Update(&context, buffer.get(), static_cast<std::size_t>(n));
  }
  SHA256_Final(digest, &context);
#pragma GCC diagnostic pop
  return Hex(digest, sizeof digest);
}

// Problems of one path component, by what lstat says it is.
void JudgeEntry(const std::string& entry, const struct stat& st, bool is_file,
                std::vector<std::string>& problems) {
  auto add = [&](std::string problem) {
    if (std::find(problems.begin(), problems.end(), problem) == problems.end())
      problems.push_back(std::move(problem));
  };
  const bool ours = st.st_uid == 0 || st.st_uid == ::geteuid();
  if (S_ISLNK(st.st_mode)) {
    if (!ours) add(fmt::format("through a symlink {} owned by uid {}", entry, st.st_uid));
    return;
  }
  if (is_file) {
    if (st.st_mode & S_IWOTH) add("the file is world-writable");
    else if (st.st_mode & S_IWGRP) add("the file is group-writable");
    if (!ours) add(fmt::format("the file is owned by uid {}", st.st_uid));
    return;
  }
  // The sticky bit (as on /tmp) stops others renaming or removing what is not theirs.
  const bool sticky = st.st_mode & S_ISVTX;
  if ((st.st_mode & S_IWOTH) && !sticky) add(fmt::format("in a world-writable directory {}", entry));
  else if ((st.st_mode & S_IWGRP) && !sticky) add(fmt::format("in a group-writable directory {}", entry));
  if (!ours) add(fmt::format("in a directory {} owned by uid {}", entry, st.st_uid));
}

// Every prefix of absolute `path` ("/a", "/a/b", ..., then the file), each lstat'ed.
void JudgeChain(const std::string& path, std::vector<std::string>& problems) {
  std::string prefix;
  const std::vector<std::string> parts = Split(path.substr(1), '/');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    prefix += "/" + parts[i];
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) != 0) continue;  // the hash or the exec names that
    JudgeEntry(prefix, st, i + 1 == parts.size() && !S_ISLNK(st.st_mode), problems);
  }
  struct stat root {};
  if (::lstat("/", &root) == 0) JudgeEntry("/", root, false, problems);
}

}  // namespace

StatusOr<ResolvedExecutable> ResolveExecutable(const std::string& argv0,
                                               const std::optional<std::string>& path_env,
                                               const std::string& working_dir) {
  if (argv0.empty()) return Status::Error("execve(\"\"): ENOENT");
  if (argv0.find('/') != std::string::npos) {
    return ResolvedExecutable{.path = Absolute(argv0, working_dir)};
  }
  std::string unexecutable;
  for (const std::string& dir : Split(path_env ? *path_env : DefaultPath(), ':')) {
    const std::string candidate = Absolute(Join(dir, argv0), working_dir);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    // execvp goes on past EACCES and reports it only when nothing else ran.
    if (::access(candidate.c_str(), X_OK) != 0) {
      if (unexecutable.empty()) unexecutable = candidate;
      continue;
    }
    return ResolvedExecutable{.path = candidate};
  }
  if (!unexecutable.empty()) {
    return Status::Error(
        fmt::format("execve({}): EACCES (in PATH only as {}, not executable)", argv0, unexecutable));
  }
  return Status::Error(fmt::format("execve({}): ENOENT (not in PATH)", argv0));
}

std::future<StatusOr<std::string>> StartExecutableSha256(const std::string& path) {
  auto failed = [](std::string why) { return ReadyFuture<StatusOr<std::string>>(Status::Error(std::move(why))); };
  // O_NONBLOCK: a FIFO named as a program must not block the open (execve refuses it anyway).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return failed(fmt::format("open(\"{}\"): {}", path, ErrnoText(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return failed(fmt::format("fstat(\"{}\"): {}", path, ErrnoText(err)));
  }
  if (!S_ISREG(st.st_mode)) {  // a device such as /dev/zero would never end
    ::close(fd);
    return failed(fmt::format("\"{}\": not a regular file", path));
  }
  const std::string key = FileIdentity(st);
  {
    std::lock_guard lock(g_hash_mutex);
    auto it = g_hash_cache.find(key);
    if (it != g_hash_cache.end()) {
      ::close(fd);
      return ReadyFuture(StatusOr<std::string>(it->second));
    }
  }
  // Only a big file's hash is worth keeping across runs: a look into that cache (up to 0.13 ms,
  // launch_bench) costs what hashing 100 KB does.
  const std::string persisted = st.st_size >= kPersistHashFromBytes ? PersistedHashesPath() : "";
  // Looked up and hashed off the critical path, outside the lock: two launches of one new
  // binary may both hash it, once each.
  return std::async(std::launch::async, [fd, path, key, st, persisted]() -> StatusOr<std::string> {
    std::optional<std::string> known = persisted.empty() ? std::nullopt : FindPersistedHash(persisted, st);
    StatusOr<std::string> hash = known ? StatusOr<std::string>(*known) : HashFd(fd, path);
    ::close(fd);
    if (hash.ok()) {
      if (!known && !persisted.empty()) PersistHash(persisted, st, path, *hash);
      std::lock_guard lock(g_hash_mutex);
      g_hash_cache.emplace(key, *hash);
    }
    return hash;
  });
}

std::string ExecutableWarning(const std::string& path) {
  std::vector<std::string> problems;
  JudgeChain(path, problems);
  std::array<char, PATH_MAX> real{};
  if (::realpath(path.c_str(), real.data()) != nullptr && path != real.data()) {
    JudgeChain(real.data(), problems);
  }
  std::string warning;
  for (const std::string& problem : problems) {
    if (!warning.empty()) warning += "; ";
    warning += problem;
  }
  return warning;
}

std::string PathLocationNote(const std::string& path, bool found_in_path) {
  if (!found_in_path) return "";
  const std::vector<std::string> system = Split(kSystemPath, ':');
  const std::string dir = DirectoryOf(path);
  if (std::find(system.begin(), system.end(), dir) != system.end()) return "";
  return fmt::format("found on PATH in {}, outside the system paths {}", dir, kSystemPath);
}

}  // namespace sandprobe
