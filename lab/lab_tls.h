// LabTlsContext: the TLS side of the lab's sinks. A throwaway self-signed certificate (EC P-256,
// made in memory at start, never written anywhere) and a server context that records the SNI
// each client sent: OpenSSL parses the ClientHello and hands the name to a servername callback.
// A client that refuses the certificate has still sent its SNI: the receipt holds it either way.
#pragma once

#include <memory>
#include <string>

#include <openssl/ssl.h>

#include "model/status.h"

namespace sandprobe {

class LabTlsContext {
 public:
  static StatusOr<std::unique_ptr<LabTlsContext>> Create();
  ~LabTlsContext();
  LabTlsContext(const LabTlsContext&) = delete;
  LabTlsContext& operator=(const LabTlsContext&) = delete;

  // A new server SSL on `fd` whose SNI, once the ClientHello is read, lands in `*sni` (which
  // must outlive the SSL). nullptr when OpenSSL cannot allocate one.
  SSL* NewServerSsl(int fd, std::string* sni) const;

 private:
  LabTlsContext() = default;
  SSL_CTX* ctx_ = nullptr;
};

// The name OpenSSL's last error queue entry gives (for error messages), "" when empty.
std::string OpenSslError();

}  // namespace sandprobe
