#include "contract/sha256.h"

#include <openssl/sha.h>

#include "contract/frame_writer.h"

namespace sandprobe {

// The low-level SHA-256 calls, deprecated in OpenSSL 3 but kept there. The one-shot SHA256()
// goes through EVP, whose first use initialises the provider machinery: by default it reads
// openssl.cnf (or $OPENSSL_CONF) and may load modules named there (inside a sandbox, an
// unreported file access and code the sandbox controls), and costs about 0.5 ms of every run
// (a tenth of a bwrap launch) for a 55-byte canary. These compute the same digest with no
// initialisation, in the probe and the harness alike.
std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  SHA256_CTX context;
  SHA256_Init(&context);
  SHA256_Update(&context, bytes.data(), bytes.size());
  SHA256_Final(digest, &context);
#pragma GCC diagnostic pop
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

}  // namespace sandprobe
