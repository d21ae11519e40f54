// The wasm32-wasi probe's SHA-256 (sha256_portable.cc) against libcrypto's, which the native
// probe and the host use: a fact's hash must mean the same bytes on both sides.
#include "probes/wasi/sha256_portable.h"

#include <gtest/gtest.h>

#include <string>

#include "contract/frame_writer.h"
#include "contract/sha256.h"

namespace sandprobe {
namespace {

std::string PortableHex(std::string_view bytes) {
  const auto digest = portable_sha256::Digest(bytes);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

TEST(PortableSha256Test, FipsExamples) {
  EXPECT_EQ(PortableHex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(PortableHex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(PortableHex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(PortableSha256Test, AgreesWithLibcryptoAtEveryLengthAcrossBlockBoundaries) {
  std::string bytes;
  for (std::size_t length = 0; length <= 1100; ++length) {
    ASSERT_EQ(PortableHex(bytes), Sha256Hex(bytes)) << "length " << length;
    bytes.push_back(static_cast<char>((length * 131 + 7) & 0xff));  // every byte value, NULs too
  }
  const std::string large(5 * 4096 + 3, '\xa5');
  EXPECT_EQ(PortableHex(large), Sha256Hex(large));
}

}  // namespace
}  // namespace sandprobe
