// SHA-256 (FIPS 180-4) in portable C++, for the wasm32-wasi probe only: the native probe and
// the host hash with libcrypto (contract/sha256.cc), which Debian does not build for wasm32,
// and no SHA-256 library is packaged for wasm32-wasi. sha256_portable_test checks it against
// libcrypto (the FIPS examples, and every length 0..1100 across block boundaries), so both
// sides of a comparison hash alike.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace sandprobe::portable_sha256 {

std::array<std::uint8_t, 32> Digest(std::string_view bytes);

}  // namespace sandprobe::portable_sha256
