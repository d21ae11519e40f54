#include "launch/launch_hash_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "launch/run_registry.h"

namespace sandprobe {
namespace {

constexpr const char* kSchema = "sandprobe-executable-sha256/1";
constexpr std::size_t kMaxCacheBytes = 256 * 1024;  // 64 entries are ~20 KB

bool IsSha256Hex(const std::string& text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Only what this user alone could have written: a regular file (not followed through a link),
// owned by the effective uid, not group- or world-writable.
bool Believable(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The cache's entries, or nullopt when it is missing, unbelievable or not ours to parse.
std::optional<nlohmann::json> ReadBelievable(const std::string& cache) {
  const int fd = ::open(cache.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && Believable(st) && static_cast<std::size_t>(st.st_size) <= kMaxCacheBytes) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kSchema || !doc.contains("hashes") ||
      !doc["hashes"].is_object()) {
    return std::nullopt;
  }
  return doc["hashes"];
}

}  // namespace

std::string FileIdentity(const struct stat& st) {
  return fmt::format("{}:{}:{}:{}.{:09}:{}.{:09}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

std::string PersistedHashesPath() { return RunDirParent() + "/sandprobe.executable-sha256.json"; }

std::optional<std::string> FindPersistedHash(const std::string& cache, const struct stat& st) {
  std::optional<nlohmann::json> hashes = ReadBelievable(cache);
  if (!hashes) return std::nullopt;
  auto entry = hashes->find(FileIdentity(st));
  if (entry == hashes->end() || !entry->is_object()) return std::nullopt;
  auto sha256 = entry->find("sha256");  // not value(): it throws on a member of another type
  if (sha256 == entry->end() || !sha256->is_string() || !IsSha256Hex(sha256->get<std::string>())) return std::nullopt;
  return sha256->get<std::string>();
}

void PersistHash(const std::string& cache, const struct stat& st, const std::string& executable,
                 const std::string& sha256) {
  struct stat there {};
  const bool exists = ::lstat(cache.c_str(), &there) == 0;
  if (exists && !Believable(there)) return;  // someone else's, or a link: not ours to replace
  nlohmann::json hashes = (exists ? ReadBelievable(cache) : std::nullopt).value_or(nlohmann::json::object());
  if (hashes.size() >= kMaxPersistedHashes) hashes = nlohmann::json::object();
  hashes[FileIdentity(st)] = {{"path", executable}, {"sha256", sha256}};
  (void)WriteFileAtomically(cache, nlohmann::json{{"schema", kSchema}, {"hashes", hashes}}.dump(1) + "\n");
}

}  // namespace sandprobe
