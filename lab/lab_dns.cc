#include "lab/lab_dns.h"

#include <arpa/nameser.h>
#include <resolv.h>

#include <array>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace sandprobe {
namespace {

struct TypeName {
  int type;
  const char* name;
};
// Types a sandbox is likely to ask; others are recorded as "TYPE<n>" (RFC 3597).
constexpr TypeName kTypeNames[] = {{ns_t_a, "A"},     {ns_t_ns, "NS"},     {ns_t_cname, "CNAME"},
                                   {ns_t_soa, "SOA"}, {ns_t_ptr, "PTR"},   {ns_t_mx, "MX"},
                                   {ns_t_txt, "TXT"}, {ns_t_aaaa, "AAAA"}, {ns_t_srv, "SRV"},
                                   {64, "SVCB"},      {65, "HTTPS"},       {ns_t_any, "ANY"}};

std::string TypeText(int type) {
  for (const TypeName& row : kTypeNames) {
    if (row.type == type) return row.name;
  }
  return fmt::format("TYPE{}", type);
}

std::string RcodeText(int rcode) {
  switch (rcode) {
    case ns_r_noerror: return "NOERROR";
    case ns_r_formerr: return "FORMERR";
    case ns_r_nxdomain: return "NXDOMAIN";
    case ns_r_notimpl: return "NOTIMP";
    default: return fmt::format("RCODE{}", rcode);
  }
}

// Writes a response into `out`: the question `name`/`type`/`klass` and, when `address` is set,
// one answer record. Returns its length, or -1 when a name does not fit (never for lab names).
int BuildResponse(std::uint16_t id, bool rd, int rcode, const char* name, int type, int klass,
                  const IpAddress* address, unsigned char* out, int size) {
  unsigned char* dnptrs[8] = {out, nullptr};
  unsigned char** lastdnptr = dnptrs + 8;
  unsigned char* cp = out;
  const unsigned flags = 0x8000u | 0x0400u | (rd ? 0x0100u : 0u) | static_cast<unsigned>(rcode);
  NS_PUT16(id, cp);
  NS_PUT16(flags, cp);   // QR, AA, RD as asked, RA clear: the lab is not a recursive resolver
  NS_PUT16(1, cp);       // one question
  NS_PUT16(address ? 1 : 0, cp);
  NS_PUT16(0, cp);
  NS_PUT16(0, cp);
  int n = ::dn_comp(name, cp, static_cast<int>(out + size - cp), dnptrs, lastdnptr);
  if (n < 0 || out + size - (cp + n) < 4) return -1;
  cp += n;
  NS_PUT16(type, cp);
  NS_PUT16(klass, cp);
  if (address != nullptr) {
    n = ::dn_comp(name, cp, static_cast<int>(out + size - cp), dnptrs, lastdnptr);
    const auto rdlength = static_cast<int>(address->size());
    if (n < 0 || out + size - (cp + n) < 10 + rdlength) return -1;
    cp += n;
    NS_PUT16(type, cp);
    NS_PUT16(ns_c_in, cp);
    NS_PUT32(0, cp);  // TTL 0: a sandbox's cache never outlives the check
    NS_PUT16(rdlength, cp);
    std::memcpy(cp, address->bytes.data(), address->size());
    cp += rdlength;
  }
  return static_cast<int>(cp - out);
}

}  // namespace

std::string AnswerLabQuery(const LabNames& names, const std::string& query, DnsReceipt& receipt,
                           const LabRebind& rebind) {
  ns_msg msg;
  if (query.size() > kMaxLabDnsMessage ||
      ::ns_initparse(reinterpret_cast<const unsigned char*>(query.data()), static_cast<int>(query.size()),
                     &msg) != 0 ||
      ns_msg_getflag(msg, ns_f_qr) != 0) {
    receipt.rcode = "";
    return "";  // not a query: a reply to it could be an answer to nobody (or reflection)
  }
  const auto id = static_cast<std::uint16_t>(ns_msg_id(msg));
  const bool rd = ns_msg_getflag(msg, ns_f_rd) != 0;
  std::array<unsigned char, kMaxLabDnsMessage> out{};
  ns_rr question;
  int length = -1;
  const bool standard = ns_msg_getflag(msg, ns_f_opcode) == ns_o_query;
  if (!standard || ns_msg_count(msg, ns_s_qd) != 1 || ::ns_parserr(&msg, ns_s_qd, 0, &question) != 0) {
    const unsigned rcode = standard ? ns_r_formerr : ns_r_notimpl;
    receipt.rcode = RcodeText(static_cast<int>(rcode));
    // Header only: the id and the error, no question to echo.
    unsigned char* cp = out.data();
    NS_PUT16(id, cp);
    NS_PUT16(0x8000u | rcode, cp);
    for (int i = 0; i < 4; ++i) NS_PUT16(0, cp);
    return std::string(reinterpret_cast<const char*>(out.data()), 12);
  }
  const char* name = ns_rr_name(question);
  const int type = ns_rr_type(question);
  const int klass = ns_rr_class(question);
  receipt.name = name;
  receipt.type = TypeText(type);
  const LabName* entry = names.Find(name);
  if (entry != nullptr && rebind) {
    if (const LabName* instead = rebind(*entry); instead != nullptr) entry = instead;
  }
  const IpAddress* address = nullptr;
  if (entry != nullptr && klass == ns_c_in && type == ns_t_a) address = &entry->v4;
  if (entry != nullptr && klass == ns_c_in && type == ns_t_aaaa) address = &entry->v6;
  const int rcode = entry != nullptr ? ns_r_noerror : ns_r_nxdomain;
  length = BuildResponse(id, rd, rcode, name, type, klass, address, out.data(), static_cast<int>(out.size()));
  if (length < 0) return "";
  receipt.rcode = RcodeText(rcode);
  receipt.answer = address != nullptr ? address->Text() : "";
  return std::string(reinterpret_cast<const char*>(out.data()), static_cast<std::size_t>(length));
}

}  // namespace sandprobe
