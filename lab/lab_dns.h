// The egress lab's resolver logic: one DNS query in, one response out, and a receipt of what
// was asked. Pure (no sockets) so it is tested without a namespace; lab/lab.cc serves it on
// UDP and TCP port 53 inside the lab. Messages are parsed with libresolv (ns_initparse,
// ns_parserr) and names compressed with dn_comp.
//
// Answers: a lab name (lab/lab_names.h) gets its A or AAAA address (TTL 0, authoritative); a
// lab name asked for another type gets NOERROR without answers; any other name gets NXDOMAIN.
// The resolver never forwards: it has nowhere to forward to.
#pragma once

#include <functional>
#include <string>

#include "lab/lab_names.h"

namespace sandprobe {

// One query the lab's resolver received.
struct DnsReceipt {
  std::string name;       // the question's name as sent (case kept), printable ASCII
  std::string type;       // "A", "AAAA", "TXT", ... (libresolv's p_type), or "" when unparsed
  std::string peer;       // "[2001:db8:a::2]:41234" or "192.0.2.2:41234"
  std::string transport;  // "udp" or "tcp"
  std::string rcode;      // what it was answered: "NOERROR", "NXDOMAIN", "FORMERR"; "" for no reply
  std::string answer;     // the address answered, "" for none
};

// The response to `query` (empty: no reply, e.g. not a query at all) and the receipt's name,
// type, rcode and answer fields. `query` may be anything a sandbox sent.
// `rebind`, when set, is asked for every lab name found: the name whose addresses to answer
// instead (net.bypass's rebinding: an allowed name answered once with a control's addresses),
// or nullptr for the name's own.
using LabRebind = std::function<const LabName*(const LabName& asked)>;
std::string AnswerLabQuery(const LabNames& names, const std::string& query, DnsReceipt& receipt,
                           const LabRebind& rebind = {});

// The largest DNS message the lab reads or writes (UDP without EDNS: 512 bytes; TCP: bounded
// here, since the lab's answers are never larger than one record).
constexpr std::size_t kMaxLabDnsMessage = 1024;

}  // namespace sandprobe
