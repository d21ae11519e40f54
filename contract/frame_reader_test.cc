#include "contract/frame_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace sandprobe {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr std::string_view kNonce = "n0nce42";

std::string Frame(std::string_view payload, std::string_view nonce = kNonce) {
  return "@@sandprobe " + std::string(nonce) + " " + std::string(payload) + "\n";
}
const std::string kDone = Frame(R"({"done":true})");
const std::string kFactA = Frame(R"({"family":"fs.read","path":"/etc/shadow","ok":false})");
const std::string kFactB = Frame(R"({"family":"net.tcp","ok":true})");

// One row: a stdout and what the parser must make of it. `errors` are message prefixes.
struct FrameCase {
  std::string name;
  std::string stdout_bytes;
  bool stream_truncated = false;
  std::size_t facts = 0;
  bool done = false;
  int noise_lines = 0;
  std::vector<std::string> errors;
};

std::string Show(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e;
  return out;
}

// Asserts the whole result, including FramesComplete: only a row with done and no errors
// may be complete, so every garbage row also checks that garbage is never trusted.
void ExpectParsed(const std::string& name, const ProbeFrames& got, std::size_t facts, bool done,
                  int noise_lines, const std::vector<std::string>& errors) {
  SCOPED_TRACE(name);
  EXPECT_EQ(got.facts.size(), facts);
  EXPECT_EQ(got.done, done);
  EXPECT_EQ(got.noise_lines, noise_lines);
  ASSERT_EQ(got.protocol_errors.size(), errors.size()) << "got:" << Show(got.protocol_errors);
  for (std::size_t i = 0; i < errors.size(); ++i) {
    EXPECT_THAT(got.protocol_errors[i], StartsWith(errors[i]));
  }
  EXPECT_EQ(FramesComplete(got), done && errors.empty());
}

// Failures name the row instead of dumping its bytes.
void PrintTo(const FrameCase& c, std::ostream* os) { *os << c.name; }

class FrameTable : public ::testing::TestWithParam<FrameCase> {};

TEST_P(FrameTable, ParsesAsExpected) {
  const FrameCase& c = GetParam();
  ProbeFrames got = ParseFrames(c.stdout_bytes, kNonce, c.stream_truncated);
  ExpectParsed(c.name, got, c.facts, c.done, c.noise_lines, c.errors);
}

const std::string kHugePayload =
    R"({"family":"x","pad":")" + std::string(kMaxFrameLineBytes, 'a') + R"("})";

INSTANTIATE_TEST_SUITE_P(
    Frames, FrameTable,
    // clang-format off
    // Columns: name, stdout, stream_truncated, facts, done, noise_lines, error prefixes.
    ::testing::Values(
        FrameCase{"clean", kFactA + kFactB + kDone, false, 2, true, 0, {}},
        FrameCase{"clean_with_noise", "hello\n" + kFactA + "\n" + kDone + "bye\n",
                  false, 1, true, 3, {}},
        FrameCase{"no_frame_at_all", "", false, 0, false, 0, {}},
        FrameCase{"pass_and_ok_noise_only", "PASS\nok\n", false, 0, false, 2, {}},
        FrameCase{"wrong_nonce",
                  Frame(R"({"family":"x"})", "other") + Frame(R"({"done":true})", "other"),
                  false, 0, false, 0,
                  {"line 1: frame with a foreign nonce", "line 2: frame with a foreign nonce"}},
        FrameCase{"own_nonce_is_prefix_of_frame_nonce",
                  Frame(R"({"done":true})", std::string(kNonce) + "d"),
                  false, 0, false, 0, {"line 1: frame with a foreign nonce"}},
        FrameCase{"frame_nonce_is_prefix_of_own_nonce",
                  Frame(R"({"done":true})", kNonce.substr(0, 3)),
                  false, 0, false, 0, {"line 1: frame with a foreign nonce"}},
        FrameCase{"two_done_frames", kFactA + kDone + kDone,
                  false, 1, false, 0, {"line 3: second done frame"}},
        FrameCase{"done_not_last", kDone + kFactA,
                  false, 0, false, 0, {"line 2: frame after done"}},
        FrameCase{"noise_after_done_is_fine", kFactA + kDone + "exit 0\n", false, 1, true, 1, {}},
        FrameCase{"truncated_json", Frame(R"({"family":"x","ok":tr)") + kDone,
                  false, 0, true, 0, {"line 1: frame JSON: syntax error"}},
        FrameCase{"frame_cut_mid_line_at_eof", kFactA + R"(@@sandprobe n0nce42 {"family":"x")",
                  false, 1, false, 0, {"line 2: truncated frame (no newline)"}},
        FrameCase{"done_without_newline_at_eof", kFactA + kDone.substr(0, kDone.size() - 1),
                  false, 1, false, 0, {"line 2: truncated frame (no newline)"}},
        FrameCase{"noise_without_newline_at_eof", kDone + "bye", false, 0, true, 1, {}},
        FrameCase{"invalid_utf8_in_frame", Frame("{\"family\":\"x\",\"p\":\"\xff\xfe\"}") + kDone,
                  false, 0, true, 0, {"line 1: frame is not valid UTF-8 at payload byte 20"}},
        FrameCase{"overlong_utf8_in_frame", Frame("{\"family\":\"\xc0\xaf\"}") + kDone,
                  false, 0, true, 0, {"line 1: frame is not valid UTF-8"}},
        FrameCase{"nul_ends_json_early",
                  Frame(std::string("{\"family\":\"x\"}\0junk", 19)) + kDone,
                  false, 0, true, 0, {"line 1: frame has a NUL byte at payload byte 15"}},
        FrameCase{"nul_in_noise_is_noise", std::string("a\0b\n", 4) + kDone,
                  false, 0, true, 1, {}},
        FrameCase{"json_array_payload", Frame(R"([{"family":"x"}])") + kDone,
                  false, 0, true, 0, {"line 1: frame payload is a JSON array, not an object"}},
        FrameCase{"json_comment", Frame(R"({"family":"x"} /* c */)") + kDone,
                  false, 0, true, 0, {"line 1: frame JSON: "}},
        FrameCase{"fact_without_family", Frame(R"({"ok":true})") + kDone,
                  false, 0, true, 0, {R"(line 1: fact without a non-empty string "family")"}},
        FrameCase{"family_not_a_string", Frame(R"({"family":["x"]})") + kDone,
                  false, 0, true, 0, {R"(line 1: fact without a non-empty string "family")"}},
        FrameCase{"done_false", Frame(R"({"done":false})"),
                  false, 0, false, 0,
                  {R"(line 1: malformed done frame: must be exactly {"done":true})"}},
        FrameCase{"done_with_extra_key", Frame(R"({"done":true,"x":1})"),
                  false, 0, false, 0, {"line 1: malformed done frame"}},
        FrameCase{"done_as_string", Frame(R"({"done":"true"})"),
                  false, 0, false, 0, {"line 1: malformed done frame"}},
        FrameCase{"fact_with_a_done_key_is_a_fact", Frame(R"({"family":"x","done":false})") + kDone,
                  false, 1, true, 0, {}},
        FrameCase{"done_with_a_family_is_a_fact_not_the_end",
                  Frame(R"({"family":"x","done":true})"), false, 1, false, 0, {}},
        FrameCase{"huge_frame_line", Frame(kHugePayload) + kDone,
                  false, 0, true, 0, {"line 1: frame line is 65"}},
        FrameCase{"huge_noise_line_is_noise",
                  std::string(kMaxFrameLineBytes * 2, 'x') + "\n" + kDone,
                  false, 0, true, 1, {}},
        FrameCase{"output_cap_truncated", kFactA + kDone,
                  true, 1, true, 0, {"output truncated at the cap"}},
        FrameCase{"output_cap_truncated_mid_frame", kFactA + "@@sandprobe n0nce42 {\"fam",
                  true, 1, false, 0,
                  {"output truncated at the cap", "line 2: truncated frame (no newline)"}},
        FrameCase{"crlf",
                  "hi\r\n" + Frame(R"({"family":"x"})" "\r") + Frame(R"({"done":true})" "\r"),
                  false, 1, true, 1, {}},
        FrameCase{"bare_marker", "@@sandprobe\n" + kDone,
                  false, 0, true, 0, {"line 1: malformed frame: no space after @@sandprobe"}},
        FrameCase{"bare_marker_crlf", "@@sandprobe\r\n" + kDone,
                  false, 0, true, 0, {"line 1: malformed frame: no space after @@sandprobe"}},
        FrameCase{"marker_and_nonce_only", "@@sandprobe n0nce42\n" + kDone,
                  false, 0, true, 0, {"line 1: malformed frame: no payload after the nonce"}},
        FrameCase{"marker_not_at_column_0", " " + kDone + "PASS " + kDone,
                  false, 0, false, 2, {}}),
    // clang-format on
    [](const ::testing::TestParamInfo<FrameCase>& info) { return info.param.name; });

TEST(ParseFrames, KeepsFactsInOrderWithTheirFields) {
  ProbeFrames got = ParseFrames(kFactA + "noise\n" + kFactB + kDone, kNonce, false);
  ASSERT_EQ(got.facts.size(), 2u);
  EXPECT_EQ(got.facts[0]["family"], "fs.read");
  EXPECT_EQ(got.facts[0]["path"], "/etc/shadow");
  EXPECT_EQ(got.facts[0]["ok"], false);
  EXPECT_EQ(got.facts[1]["family"], "net.tcp");
  EXPECT_TRUE(FramesComplete(got));
}

TEST(ParseFrames, EmptyNonceMakesEveryFrameForeign) {
  ProbeFrames got = ParseFrames(Frame(R"({"done":true})", ""), "", false);
  EXPECT_FALSE(got.done);
  EXPECT_THAT(got.protocol_errors, ElementsAre("line 1: frame with a foreign nonce"));
  // The empty nonce also must not match a frame whose nonce field is some other word.
  got = ParseFrames(kDone, "", false);
  EXPECT_THAT(got.protocol_errors, ElementsAre("line 1: frame with a foreign nonce"));
}

TEST(ParseFrames, FrameLineAtTheLimitIsParsed) {
  std::string prefix = "@@sandprobe " + std::string(kNonce) + " ";
  std::string head = R"({"family":"x","pad":")";
  std::string pad(kMaxFrameLineBytes - prefix.size() - head.size() - 2, 'a');
  std::string line = prefix + head + pad + "\"}";
  ASSERT_EQ(line.size(), kMaxFrameLineBytes);
  EXPECT_TRUE(FramesComplete(ParseFrames(line + "\n" + kDone, kNonce, false)));
  ProbeFrames over = ParseFrames(prefix + head + pad + "a\"}\n" + kDone, kNonce, false);
  EXPECT_THAT(over.protocol_errors,
              ElementsAre("line 1: frame line is 65537 bytes, over the 65536-byte limit"));
}

TEST(ParseFrames, RejectsDeepNesting) {
  auto nested = [](int levels) {
    return R"({"family":"x","v":)" + std::string(levels - 1, '[') + std::string(levels - 1, ']') +
           "}";
  };
  EXPECT_TRUE(
      FramesComplete(ParseFrames(Frame(nested(kMaxFrameJsonDepth)) + kDone, kNonce, false)));
  ProbeFrames deep = ParseFrames(Frame(nested(kMaxFrameJsonDepth + 1)) + kDone, kNonce, false);
  EXPECT_THAT(deep.protocol_errors, ElementsAre("line 1: frame JSON nests deeper than 64 levels"));
  EXPECT_TRUE(deep.facts.empty());
}

TEST(ParseFrames, ErrorTextNeverQuotesRawProbeBytes) {
  // nlohmann quotes what it read; an escape sequence there must not reach a terminal.
  ProbeFrames got = ParseFrames(Frame("{\"family\":\"x\" \x1b[2J\xc2\x9b}"), kNonce, false);
  ASSERT_EQ(got.protocol_errors.size(), 1u);
  for (char c : got.protocol_errors[0]) {
    EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << "byte " << int(static_cast<unsigned char>(c));
  }
}

TEST(ParseFrames, StopsCollectingAtTheFactLimit) {
  // Progress facts: a stream, so the same fact many times is not a duplicate.
  std::string fact = Frame(R"({"family":"x","kind":"progress"})");
  std::string stream;
  stream.reserve(fact.size() * (kMaxFacts + 2) + kDone.size());
  for (std::size_t i = 0; i < kMaxFacts + 2; ++i) stream += fact;
  stream += kDone;
  ProbeFrames got = ParseFrames(stream, kNonce, false);
  EXPECT_EQ(got.facts.size(), kMaxFacts);
  EXPECT_TRUE(got.done);
  EXPECT_THAT(got.protocol_errors,
              ElementsAre("line 100001: more than 100000 facts; later facts dropped"));
  EXPECT_FALSE(FramesComplete(got));
}

TEST(ParseFrames, BoundsTheListOfProtocolErrors) {
  std::string stream;
  for (std::size_t i = 0; i < kMaxListedProtocolErrors + 500; ++i) stream += "@@sandprobe\n";
  ProbeFrames got = ParseFrames(stream, kNonce, false);
  ASSERT_EQ(got.protocol_errors.size(), kMaxListedProtocolErrors + 1);
  EXPECT_EQ(got.protocol_errors.back(), "500 more protocol errors not listed");
}

TEST(ParseFrames, AStreamCutAnywhereIsNeverComplete) {
  // A probe killed at any byte, or a cap at any byte, must not pass for a finished run.
  std::string full = "banner\n" + kFactA + kFactB + kDone;
  ASSERT_TRUE(FramesComplete(ParseFrames(full, kNonce, false)));
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    ProbeFrames got = ParseFrames(std::string_view(full).substr(0, cut), kNonce, false);
    EXPECT_FALSE(FramesComplete(got)) << "cut at byte " << cut;
  }
  EXPECT_FALSE(FramesComplete(ParseFrames(full, kNonce, /*stream_truncated=*/true)));
}

TEST(ParseFrames, NeverThrowsOnMutatedStreams) {
  std::string full = kFactA + kFactB + kDone;
  const char replacements[] = {'\0', '\n', '\r', ' ', '"', '{', '}', '\\', '\xff', '\xc3', 'x'};
  for (std::size_t i = 0; i < full.size(); ++i) {
    for (char r : replacements) {
      std::string mutated = full;
      mutated[i] = r;
      ProbeFrames got;
      ASSERT_NO_THROW(got = ParseFrames(mutated, kNonce, false)) << "byte " << i;
      if (FramesComplete(got)) {
        for (const auto& fact : got.facts) EXPECT_TRUE(fact["family"].is_string());
      }
    }
  }
}

TEST(DescribeFrameProblems, SaysWhatIsWrong) {
  EXPECT_EQ(DescribeFrameProblems(ParseFrames(kFactA + kDone, kNonce, false)), "");
  EXPECT_EQ(DescribeFrameProblems(ParseFrames("PASS\n", kNonce, false)), "no done frame");
  EXPECT_EQ(
      DescribeFrameProblems(ParseFrames(Frame("[1]") + Frame("{}", "x") + kDone, kNonce, false)),
      "2 protocol errors: line 1: frame payload is a JSON array, not an object; "
      "line 2: frame with a foreign nonce");
  EXPECT_EQ(DescribeFrameProblems(ParseFrames(Frame("{}", "x"), kNonce, true)),
            "no done frame; 2 protocol errors: output truncated at the cap; "
            "line 1: frame with a foreign nonce");
  std::string five = Frame("1") + Frame("2") + Frame("3") + Frame("4") + Frame("5");
  EXPECT_THAT(DescribeFrameProblems(ParseFrames(five, kNonce, false)),
              AllOf(StartsWith("no done frame; 5 protocol errors: line 1: "), HasSubstr("line 3: "),
                    Not(HasSubstr("line 4: ")), EndsWith("; and 2 more")));
}

// The garbage corpus: launch/testdata/frames/NAME.out with NAME.expect.json (see README.md).
std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(FrameCorpus, EveryFileParsesAsItsExpectationSays) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(SANDPROBE_SOURCE_DIR) / "launch/testdata/frames";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".out") continue;
    fs::path expect_path = entry.path();
    expect_path.replace_extension(".expect.json");
    ASSERT_TRUE(fs::exists(expect_path)) << expect_path << " is missing";
    nlohmann::json expect = nlohmann::json::parse(ReadFile(expect_path));
    ProbeFrames got = ParseFrames(ReadFile(entry.path()), expect.at("nonce").get<std::string>(),
                                  expect.at("stream_truncated").get<bool>());
    ExpectParsed(entry.path().filename().string(), got, expect.at("facts").get<std::size_t>(),
                 expect.at("done").get<bool>(), expect.at("noise_lines").get<int>(),
                 expect.at("errors").get<std::vector<std::string>>());
    EXPECT_EQ(FramesComplete(got), expect.at("complete").get<bool>()) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 12) << "corpus in " << dir << " went missing";
}

// One fact per identity: a repeat (an innocent fact first, the leak second) is an error, and
// so is a contradiction hiding behind an extra field that is no part of the identity.
TEST(ParseFrames, ASecondFactWithTheSameIdentityIsAProtocolError) {
  ProbeFrames got = ParseFrames(Frame(R"({"family":"fs.read","path":"/etc/shadow","ok":false})") +
                                    Frame(R"({"family":"fs.read","path":"/etc/shadow","ok":true,"kind":"file"})") +
                                    kDone,
                                kNonce, false);
  EXPECT_THAT(got.protocol_errors,
              ElementsAre("line 2: a second fact for fs.read /etc/shadow (first on line 1): a fact is stated once"));
  EXPECT_FALSE(FramesComplete(got));
  // Items of a list differ by their item fields; a variant is another fact.
  got = ParseFrames(Frame(R"({"family":"env.secret","source":"environ","name":"A"})") +
                        Frame(R"({"family":"env.secret","source":"environ","name":"B"})") +
                        Frame(R"({"family":"fs.alias","path":"/p","variant":"symlink"})") +
                        Frame(R"({"family":"fs.alias","path":"/p","variant":"dotdot"})") +
                        Frame(R"({"family":"priv.fds","fd":3})") + Frame(R"({"family":"priv.fds","fd":4})") +
                        kDone,
                    kNonce, false);
  EXPECT_TRUE(FramesComplete(got)) << DescribeFrameProblems(got);
}

// Item fields count only in the families that list items by them (frame_reader.cc
// kItemKeys): fs.mounts' "source" is the mounter's word, and a name in another family's fact
// cannot make a repeated fact look like a second one.
TEST(FactIdentity, ItemFieldsCountOnlyInTheFamiliesThatListByThem) {
  const nlohmann::json mount = {{"family", "fs.mounts"}, {"variant", "id:7"}, {"source", "/dev/sda1"}};
  EXPECT_EQ(FactIdentity(mount), KeyedFactIdentity("fs.mounts", "", "id:7"));
  ProbeFrames got = ParseFrames(Frame(R"({"family":"fs.read","path":"/p","name":"a","ok":false})") +
                                    Frame(R"({"family":"fs.read","path":"/p","name":"b","ok":true})") + kDone,
                                kNonce, false);
  EXPECT_THAT(got.protocol_errors, ElementsAre(HasSubstr("a second fact for fs.read /p")));
  got = ParseFrames(Frame(R"({"family":"priv.runtime_sockets","path":"/s","source":"list"})") +
                        Frame(R"({"family":"priv.runtime_sockets","path":"/s","source":"mountinfo"})") + kDone,
                    kNonce, false);
  EXPECT_TRUE(FramesComplete(got)) << DescribeFrameProblems(got);
  EXPECT_NE(FactIdentity({{"family", "priv.fds"}, {"fd", 3}}), FactIdentity({{"family", "priv.fds"}, {"fd", 4}}));
  EXPECT_EQ(FactIdentity({{"family", "fs.read"}, {"path", "/p"}, {"fd", 3}}), KeyedFactIdentity("fs.read", "/p", ""));
}

TEST(FactIdentity, KeyedLookupsFindExactlyTheKeyedFact) {
  const nlohmann::json keyed = {{"family", "fs.read"}, {"path", "/p"}, {"ok", true}};
  EXPECT_EQ(FactIdentity(keyed), KeyedFactIdentity("fs.read", "/p", ""));
  const nlohmann::json summary = {{"family", "fs.read"}, {"path", "/p"}, {"summary", true}};
  EXPECT_NE(FactIdentity(summary), KeyedFactIdentity("fs.read", "/p", ""));
  EXPECT_EQ(FactIdentity({{"family", "res.memory"}, {"kind", "progress"}, {"mib", 8}}), std::nullopt);
}

}  // namespace
}  // namespace sandprobe

namespace sandprobe {
namespace {

// A VM's init reports the probe's status on the stream's last line; a tty may end it in CRLF.
TEST(ParseFramesExitLine, TheLastLineCarriesTheStatus) {
  ProbeFrames got = ParseFrames(kFactA + kDone + "@@sandprobe-exit 0\n", kNonce, false);
  EXPECT_TRUE(FramesComplete(got)) << DescribeFrameProblems(got);
  EXPECT_EQ(got.exit_status, 0);

  got = ParseFrames("noise\r\n" + kFactA + kDone + "@@sandprobe-exit 137\r\n", kNonce, false);
  EXPECT_TRUE(FramesComplete(got)) << DescribeFrameProblems(got);
  EXPECT_EQ(got.exit_status, 137);
  EXPECT_EQ(got.facts.size(), 1u);

  got = ParseFrames(kFactA + kDone, kNonce, false);
  EXPECT_EQ(got.exit_status, std::nullopt);
}

// A probe (or anything in the sandbox) that prints an exit line early is followed by the real
// one: the stream then has a protocol error and no status, never the forged one.
TEST(ParseFramesExitLine, AnEarlyOrRepeatedExitLineIsAnErrorAndNoStatus) {
  ProbeFrames got = ParseFrames("@@sandprobe-exit 0\n" + kFactA + kDone + "@@sandprobe-exit 1\n",
                                kNonce, false);
  EXPECT_FALSE(FramesComplete(got));
  EXPECT_EQ(got.exit_status, std::nullopt);
  EXPECT_THAT(got.protocol_errors,
              ::testing::Contains(HasSubstr("line 2: a line after the exit status line (line 1)")));

  got = ParseFrames(kFactA + kDone + "@@sandprobe-exit 0\n@@sandprobe-exit 0\n", kNonce, false);
  EXPECT_FALSE(FramesComplete(got));
  EXPECT_EQ(got.exit_status, std::nullopt);
}

TEST(ParseFramesExitLine, MalformedExitLinesAreErrors) {
  for (std::string bad : {"@@sandprobe-exit \n", "@@sandprobe-exit 256\n", "@@sandprobe-exit -1\n",
                          "@@sandprobe-exit 0x1\n", "@@sandprobe-exit 0 \n", "@@sandprobe-exit 0",
                          "@@sandprobe-exit 0000\n"}) {
    SCOPED_TRACE(bad);
    ProbeFrames got = ParseFrames(kDone + bad, kNonce, false);
    EXPECT_FALSE(FramesComplete(got));
    EXPECT_EQ(got.exit_status, std::nullopt);
  }
}

}  // namespace
}  // namespace sandprobe
