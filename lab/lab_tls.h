// LabTlsContext: the TLS side of the lab's sinks. A throwaway self-signed certificate (EC P-256,
// made in memory at start, never written anywhere) and a server context that records the SNI
// each client sent: OpenSSL parses the ClientHello and hands the name to a servername callback.
// A client that refuses the certificate has still sent its SNI: the receipt holds it either way.
//
// Made on a thread of its own, started by Create and waited for only by the first TLS
// connection (NewServerSsl): OpenSSL's initialisation (its config file, the providers'
// algorithm tables), the key and the signature cost milliseconds that a run whose probes send
// no ClientHello never waits for (the network suite's lab budget, issue 28).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <openssl/ssl.h>

#include "model/status.h"

namespace sandprobe {

class LabTlsContext {
 public:
  // Starts making the context and returns at once (never an error: a context that could not be
  // made says so in Ready()).
  static StatusOr<std::unique_ptr<LabTlsContext>> Create();
  ~LabTlsContext();  // waits for the maker thread
  // Waits until the context is made; its error ("lab TLS certificate: ...") if it could not be.
  Status Ready() const;
  LabTlsContext(const LabTlsContext&) = delete;
  LabTlsContext& operator=(const LabTlsContext&) = delete;

  // A new server SSL on `fd` whose SNI, once the ClientHello is read, lands in `*sni` (which
  // must outlive the SSL). Waits for the context; nullptr when it could not be made or OpenSSL
  // cannot allocate one.
  SSL* NewServerSsl(int fd, std::string* sni) const;

 private:
  LabTlsContext() = default;
  void Make();

  mutable std::thread maker_;  // joined by the first Ready()
  mutable std::once_flag joined_;  // the first waiter joins maker_; later ones find it joined
  SSL_CTX* ctx_ = nullptr;         // written by maker_ only, read after the join
  std::string error_;
};

// The name OpenSSL's last error queue entry gives (for error messages), "" when empty.
std::string OpenSslError();

}  // namespace sandprobe
