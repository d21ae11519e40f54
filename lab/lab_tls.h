// LabTlsContext: the TLS side of the lab's sinks. A throwaway self-signed certificate (EC P-256,
// made in memory on first use, never written anywhere) and a server context that records the SNI
// each client sent: OpenSSL parses the ClientHello and hands the name to a servername callback.
// A client that refuses the certificate has still sent its SNI: the receipt holds it either way.
//
// Made on first use, by the first TLS connection (NewServerSsl), on the sink worker that serves
// it: OpenSSL's initialisation (its config file, the providers' algorithm tables), the key and
// the signature cost milliseconds of CPU (and OpenSSL's clean-up at exit more), which a run whose
// probes send no ClientHello (bwrap-lab's network suite) never pays: on a busy machine a maker
// thread started with the lab took the CPU from the lab's own set-up (issue 28's lab budget).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <openssl/ssl.h>

#include "model/status.h"

namespace sandprobe {

class LabTlsContext {
 public:
  // A context not made yet (never an error: a context that could not be made says so in Ready()).
  static StatusOr<std::unique_ptr<LabTlsContext>> Create();
  ~LabTlsContext();
  // Makes the context on the first call (later callers wait for it); its error ("lab TLS
  // certificate: ...") if it could not be made.
  Status Ready() const;
  LabTlsContext(const LabTlsContext&) = delete;
  LabTlsContext& operator=(const LabTlsContext&) = delete;

  // A new server SSL on `fd` whose SNI, once the ClientHello is read, lands in `*sni` (which
  // must outlive the SSL). Makes the context first (Ready); nullptr when it could not be made or
  // OpenSSL cannot allocate one.
  SSL* NewServerSsl(int fd, std::string* sni) const;

 private:
  LabTlsContext() = default;
  void Make() const;

  mutable std::once_flag made_;   // the first Ready() makes the context; later ones wait for it
  mutable SSL_CTX* ctx_ = nullptr;  // written inside made_'s call only
  mutable std::string error_;
};

// The name OpenSSL's last error queue entry gives (for error messages), "" when empty.
std::string OpenSslError();

}  // namespace sandprobe
