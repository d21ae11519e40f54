#include "witnesses/witnesses.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace sandprobe {
namespace {

std::string Hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

}  // namespace

std::string RandomHex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t filled = 0;
  while (filled < bytes) {
    ssize_t n = getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::abort();  // no entropy source: nothing sensible to continue with
    filled += static_cast<std::size_t>(n);
  }
  return Hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

StatusOr<CanaryFile> CanaryFile::Plant(const std::string& dir, const std::string& prefix) {
  std::string path = dir + "/" + prefix + RandomHex(8) + ".txt";
  std::string content = "sandprobe host canary " + RandomHex(16) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(fmt::format("open({}): {}", path, std::strerror(errno)));
  ::fchmod(fd, 0644);  // independent of the umask
  bool written = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    return Status::Error(fmt::format("write({}): short write", path));
  }
  return CanaryFile(path, Sha256Hex(content));
}

CanaryFile::CanaryFile(CanaryFile&& other) noexcept
    : path_(std::move(other.path_)), sha256_(std::move(other.sha256_)) {
  other.path_.clear();
}

CanaryFile::~CanaryFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

CanaryEnvSecret CanaryEnvSecret::Make() {
  CanaryEnvSecret secret;
  secret.name = std::string(kCanaryEnvPrefix) + RandomHex(4);
  secret.token = RandomHex(16);
  secret.sha256 = Sha256Hex(secret.token);
  return secret;
}

std::vector<std::string> FindProbeLeftovers(const std::string& dir, std::string_view nonce) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::string prefix = ".sandprobe-" + std::string(nonce);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back(entry.path().string());
  }
  return found;
}

}  // namespace sandprobe
