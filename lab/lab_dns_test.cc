// The lab resolver's answers, built and read back with libresolv (res_mkquery, ns_initparse).
#include "lab/lab_dns.h"

#include <arpa/nameser.h>
#include <resolv.h>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

LabNames Names() {
  std::vector<AllowEntry> allow = {*ParseAllowEntry("pkg.lab.test"), *ParseAllowEntry("*.wild.test")};
  return *MakeLabNames(allow);
}

std::string Query(const char* name, int type, std::uint16_t id = 0x1234) {
  unsigned char buf[512];
  int n = ::res_mkquery(ns_o_query, name, ns_c_in, type, nullptr, 0, nullptr, buf, sizeof buf);
  EXPECT_GT(n, 0) << name;
  buf[0] = static_cast<unsigned char>(id >> 8);
  buf[1] = static_cast<unsigned char>(id & 0xff);
  return std::string(reinterpret_cast<char*>(buf), static_cast<std::size_t>(n));
}

// The rcode and the one answer's address text of `response` ("" when it has none).
struct Parsed {
  int id = -1;
  int rcode = -1;
  bool aa = false;
  std::string answer;
};
Parsed Parse(const std::string& response) {
  Parsed p;
  ns_msg msg;
  if (::ns_initparse(reinterpret_cast<const unsigned char*>(response.data()), static_cast<int>(response.size()),
                     &msg) != 0) {
    return p;
  }
  p.id = ns_msg_id(msg);
  p.rcode = ns_msg_getflag(msg, ns_f_rcode);
  p.aa = ns_msg_getflag(msg, ns_f_aa) != 0;
  ns_rr rr;
  if (ns_msg_count(msg, ns_s_an) == 1 && ::ns_parserr(&msg, ns_s_an, 0, &rr) == 0) {
    IpAddress ip;
    ip.v6 = ns_rr_rdlen(rr) == 16;
    std::copy(ns_rr_rdata(rr), ns_rr_rdata(rr) + ns_rr_rdlen(rr), ip.bytes.begin());
    p.answer = ip.Text();
  }
  return p;
}

TEST(LabDnsTest, AllowedNameAnswersItsLabAddress) {
  LabNames names = Names();
  DnsReceipt r;
  Parsed p = Parse(AnswerLabQuery(names, Query("PKG.lab.test", ns_t_a, 0xbeef), r));
  EXPECT_EQ(p.id, 0xbeef);
  EXPECT_EQ(p.rcode, ns_r_noerror);
  EXPECT_TRUE(p.aa);
  EXPECT_EQ(p.answer, "192.0.2.10");
  EXPECT_EQ(r.name, "PKG.lab.test");  // the case as sent is kept for the bypass checks
  EXPECT_EQ(r.type, "A");
  EXPECT_EQ(r.rcode, "NOERROR");
  EXPECT_EQ(Parse(AnswerLabQuery(names, Query("pkg.lab.test.", ns_t_aaaa), r)).answer, "2001:db8:a::a");
  EXPECT_EQ(Parse(AnswerLabQuery(names, Query("sp-lab.wild.test", ns_t_a), r)).answer, "192.0.2.11");
}

TEST(LabDnsTest, ControlNameAnswersItsControlAddress) {
  LabNames names = Names();
  DnsReceipt r;
  const LabName* control = names.Find("pkg.lab.test.evil.test");
  ASSERT_NE(control, nullptr);
  Parsed p = Parse(AnswerLabQuery(names, Query("pkg.lab.test.evil.test", ns_t_a), r));
  EXPECT_EQ(p.rcode, ns_r_noerror);
  EXPECT_EQ(p.answer, control->v4.Text());
  EXPECT_EQ(p.answer.rfind("198.51.100.", 0), 0u) << p.answer;
  EXPECT_EQ(r.answer, p.answer);
}

TEST(LabDnsTest, OtherNamesGetNxdomainAndOtherTypesNoData) {
  LabNames names = Names();
  DnsReceipt r;
  Parsed p = Parse(AnswerLabQuery(names, Query("elsewhere.example", ns_t_a), r));
  EXPECT_EQ(p.rcode, ns_r_nxdomain);
  EXPECT_EQ(p.answer, "");
  EXPECT_EQ(r.rcode, "NXDOMAIN");
  EXPECT_EQ(r.name, "elsewhere.example");
  p = Parse(AnswerLabQuery(names, Query("pkg.lab.test", ns_t_txt), r));
  EXPECT_EQ(p.rcode, ns_r_noerror);
  EXPECT_EQ(p.answer, "");
  EXPECT_EQ(r.type, "TXT");
}

TEST(LabDnsTest, GarbageAndResponsesGetNoReply) {
  LabNames names = Names();
  DnsReceipt r;
  EXPECT_EQ(AnswerLabQuery(names, "", r), "");
  EXPECT_EQ(AnswerLabQuery(names, std::string(11, 'x'), r), "");
  std::string response = AnswerLabQuery(names, Query("pkg.lab.test", ns_t_a), r);
  EXPECT_EQ(AnswerLabQuery(names, response, r), "") << "a response is never answered";
  std::string two_questions = Query("pkg.lab.test", ns_t_a);
  two_questions[5] = 2;  // QDCOUNT 2 with one question: libresolv cannot parse it
  EXPECT_EQ(AnswerLabQuery(names, two_questions, r), "");
  const std::string no_question = Query("pkg.lab.test", ns_t_a).substr(0, 12).replace(4, 2, std::string(2, '\0'));
  EXPECT_EQ(Parse(AnswerLabQuery(names, no_question, r)).rcode, ns_r_formerr);
  EXPECT_EQ(r.rcode, "FORMERR");
  std::string status_query = Query("pkg.lab.test", ns_t_a);
  status_query[2] = static_cast<char>(ns_o_status << 3);  // opcode STATUS
  EXPECT_EQ(Parse(AnswerLabQuery(names, status_query, r)).rcode, ns_r_notimpl);
}

}  // namespace
}  // namespace sandprobe
