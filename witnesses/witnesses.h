// Host-side witnesses: facts the harness plants or reads itself, so that a leak is proven by
// something the probe could not make up (the canary's hash), not by the probe's word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/sha256.h"  // Sha256Hex, which every witness compares by
#include "model/canary_env.h"
#include "model/status.h"

namespace sandprobe {

// `bytes` random bytes from getrandom(2), hex-encoded.
std::string RandomHex(std::size_t bytes);

// A host file holding a random token that the sandbox must not be able to read. Removed when
// the object is destroyed (move-only).
class CanaryFile {
 public:
  // Writes DIR/<prefix><random>.txt, mode 0644 (readable by any uid, so only the sandbox's
  // isolation, not file permissions, keeps it from the probe), never over an existing file
  // (O_EXCL). The prefix says whose file it is where the directory is the user's own.
  static StatusOr<CanaryFile> Plant(const std::string& dir, const std::string& prefix = "canary-");
  CanaryFile(CanaryFile&& other) noexcept;
  CanaryFile& operator=(CanaryFile&&) = delete;
  CanaryFile(const CanaryFile&) = delete;
  ~CanaryFile();

  const std::string& path() const { return path_; }
  const std::string& sha256() const { return sha256_; }

 private:
  CanaryFile(std::string path, std::string sha256)
      : path_(std::move(path)), sha256_(std::move(sha256)) {}
  std::string path_;
  std::string sha256_;
};

// A secret the harness puts into the environment of everything it launches.
struct CanaryEnvSecret {
  std::string name;    // SANDPROBE_CANARY_<random>
  std::string token;   // the value
  std::string sha256;  // of the value

  static CanaryEnvSecret Make();
};

// Files named `.sandprobe-<nonce>-*` under `dir` (not recursive): what a probe's fs.write left
// on the host side of a bind mount.
std::vector<std::string> FindProbeLeftovers(const std::string& dir, std::string_view nonce);

}  // namespace sandprobe
