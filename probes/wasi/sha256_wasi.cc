// Sha256Hex for the wasm32-wasi build (contract/sha256.h), in place of contract/sha256.cc
// (libcrypto): the portable digest, hex-encoded like the native probe's.
#include "contract/frame_writer.h"
#include "contract/sha256.h"
#include "probes/wasi/sha256_portable.h"

namespace sandprobe {

std::string Sha256Hex(std::string_view bytes) {
  const std::array<std::uint8_t, 32> digest = portable_sha256::Digest(bytes);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

}  // namespace sandprobe
