#include "contract/sha256.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "contract/frame_writer.h"

namespace sandprobe {

std::string Sha256Hex(std::string_view bytes) {
  // OpenSSL 3's SHA256() goes through its provider machinery, whose default initialisation
  // reads openssl.cnf (or $OPENSSL_CONF) and may load modules named there: an unreported file
  // access and code the sandbox controls. Initialise once without the config.
  static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1;
  (void)initialised;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest) ==
      nullptr) {
    return "";  // never a made-up digest: an empty hash matches no token
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

}  // namespace sandprobe
