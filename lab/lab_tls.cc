#include "lab/lab_tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace sandprobe {
namespace {

// The SNI of the ClientHello, as OpenSSL read it, into the string the SSL carries.
int RecordServerName(SSL* ssl, int* /*alert*/, void* /*arg*/) {
  auto* sni = static_cast<std::string*>(SSL_get_app_data(ssl));
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (sni != nullptr && name != nullptr) sni->assign(name, std::min<std::size_t>(std::strlen(name), 255));
  return SSL_TLSEXT_ERR_OK;
}

// A self-signed certificate for `key`, valid for a day, CN "sandprobe-lab".
X509* SelfSigned(EVP_PKEY* key) {
  X509* cert = X509_new();
  if (cert == nullptr) return nullptr;
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("sandprobe-lab"), -1,
                             -1, 0);
  X509_set_issuer_name(cert, name);
  if (X509_set_pubkey(cert, key) != 1 || X509_sign(cert, key, EVP_sha256()) == 0) {
    X509_free(cert);
    return nullptr;
  }
  return cert;
}

}  // namespace

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

StatusOr<std::unique_ptr<LabTlsContext>> LabTlsContext::Create() {
  return std::unique_ptr<LabTlsContext>(new LabTlsContext());
}

void LabTlsContext::Make() const {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = key != nullptr ? SelfSigned(key) : nullptr;
  ctx_ = SSL_CTX_new(TLS_server_method());
  const bool ok = cert != nullptr && ctx_ != nullptr && SSL_CTX_use_certificate(ctx_, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(ctx_, key) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) {
    error_ = fmt::format("lab TLS certificate: {}", OpenSslError());
    return;
  }
  SSL_CTX_set_tlsext_servername_callback(ctx_, RecordServerName);
}

Status LabTlsContext::Ready() const {
  std::call_once(made_, [this] { Make(); });
  return error_.empty() ? Status::Ok() : Status::HarnessError(error_);
}

LabTlsContext::~LabTlsContext() { SSL_CTX_free(ctx_); }

SSL* LabTlsContext::NewServerSsl(int fd, std::string* sni) const {
  if (!Ready().ok()) return nullptr;
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  SSL_set_app_data(ssl, sni);
  SSL_set_fd(ssl, fd);
  return ssl;
}

}  // namespace sandprobe
