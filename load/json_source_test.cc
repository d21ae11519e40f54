#include "load/json_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

using nlohmann::json;

JsonDocument MustParse(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "x.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  return std::move(doc).value();
}

std::string ParseError(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "x.json");
  EXPECT_FALSE(doc.ok());
  return doc.status().message();
}

// Line 5 mixes a block comment, literals, a number and an escaped string; line 6 has an
// escaped key and a multi-byte character (one column).
const char* const kPositions = R"({
  // a comment with "quotes" and { braces [
  "a": 1,
  /* block
     comment */ "b": [true, false, null, -1.5e3, "x\"y\\"],
  "c\u0041": {"d": "é", "e": 2}
})";

TEST(JsonDocumentTest, ValuePositionsAcrossCommentsLiteralsAndEscapes) {
  JsonDocument doc = MustParse(kPositions);
  EXPECT_EQ(doc.root()["b"][4], "x\"y\\");
  EXPECT_EQ(doc.Where(JsonPointer("")), "x.json:1:1");
  EXPECT_EQ(doc.Where(JsonPointer("/a")), "x.json:3:8");
  EXPECT_EQ(doc.Where(JsonPointer("/b")), "x.json:5:22");
  EXPECT_EQ(doc.Where(JsonPointer("/b/0")), "x.json:5:23");
  EXPECT_EQ(doc.Where(JsonPointer("/b/1")), "x.json:5:29");
  EXPECT_EQ(doc.Where(JsonPointer("/b/2")), "x.json:5:36");
  EXPECT_EQ(doc.Where(JsonPointer("/b/3")), "x.json:5:42");
  EXPECT_EQ(doc.Where(JsonPointer("/b/4")), "x.json:5:50");
  EXPECT_EQ(doc.Where(JsonPointer("/cA")), "x.json:6:14");
  EXPECT_EQ(doc.Where(JsonPointer("/cA/d")), "x.json:6:20");
  EXPECT_EQ(doc.Where(JsonPointer("/cA/e")), "x.json:6:30");
}

TEST(JsonDocumentTest, CommentMarkersInsideStringsAreText) {
  JsonDocument doc = MustParse("{\"u\": \"http://x /* [[\", \"v\": 1} // end\n/* tail */");
  EXPECT_EQ(doc.root()["u"], "http://x /* [[");
  EXPECT_EQ(doc.Where(JsonPointer("/v")), "x.json:1:30");
}

// A minified file: one line of many kilobytes, multi-byte characters on both sides of the
// 4 KiB column checkpoints. Columns count characters, not bytes.
TEST(JsonDocumentTest, ColumnsOnALongLineCountCharacters) {
  std::string text = "{\"list\": [";
  std::vector<std::size_t> starts;  // byte offset of each item
  for (int i = 0; i < 3000; ++i) {
    if (i > 0) text += ", ";
    starts.push_back(text.size());
    text += "\"\xc3\xa9" + std::to_string(i) + "\xc3\xa9\"";  // é (2 bytes, 1 character) around i
  }
  text += "]}";
  auto column = [&](std::size_t offset) {  // the naive count: characters before it, plus one
    std::size_t chars = 0;
    for (std::size_t b = 0; b < offset; ++b) chars += (static_cast<unsigned char>(text[b]) & 0xC0) != 0x80;
    return chars + 1;
  };
  JsonDocument doc = MustParse(text);
  for (std::size_t i : {0u, 1u, 500u, 1234u, 2999u}) {
    EXPECT_EQ(doc.Where(JsonPointer("/list/" + std::to_string(i))),
              "x.json:1:" + std::to_string(column(starts[i])))
        << i;
  }
  EXPECT_EQ(column(starts[1]), starts[1] - 1);  // one é before it: one byte more than characters
}

TEST(JsonDocumentTest, KeyPositions) {
  JsonDocument doc = MustParse(kPositions);
  EXPECT_EQ(doc.WhereKey(JsonPointer(""), "a"), "x.json:3:3");
  EXPECT_EQ(doc.WhereKey(JsonPointer(""), "b"), "x.json:5:17");
  EXPECT_EQ(doc.WhereKey(JsonPointer(""), "cA"), "x.json:6:3");
  EXPECT_EQ(doc.WhereKey(JsonPointer("/cA"), "e"), "x.json:6:25");
}

TEST(JsonDocumentTest, MissingPointerFallsBackToNearestAncestor) {
  JsonDocument doc = MustParse(kPositions);
  EXPECT_EQ(doc.Where(JsonPointer("/cA/zz/y")), "x.json:6:14");
  EXPECT_EQ(doc.ErrorAt(JsonPointer("/cA/zz"), "missing required field").message(),
            "x.json:6:14: /cA/zz: missing required field");
}

TEST(JsonDocumentTest, ErrorMessagesNamePositionAndPointer) {
  JsonDocument doc = MustParse(kPositions);
  EXPECT_EQ(doc.ErrorAt(JsonPointer("/b/3"), "too cold").message(), "x.json:5:42: /b/3: too cold");
  EXPECT_EQ(doc.ErrorAt(JsonPointer(""), "expected object").message(),
            "x.json:1:1: expected object");
  EXPECT_EQ(doc.ErrorAtKey(JsonPointer("/cA"), "d", "bad key").message(),
            "x.json:6:15: /cA/d: bad key");
}

TEST(JsonDocumentTest, PointerKeysWithSlashAndTildeAreEscaped) {
  JsonDocument doc = MustParse("{\"a/b\": {\"c~d\":\n 7}}");
  EXPECT_EQ(doc.ErrorAt(JsonPointer("/a~1b/c~0d"), "x").message(), "x.json:2:2: /a~1b/c~0d: x");
}

TEST(JsonDocumentTest, SyntaxErrorsReportLineAndColumn) {
  // The position is where nlohmann noticed: the last character of the unexpected token.
  EXPECT_EQ(ParseError("{\n  \"a\": 1\n  \"b\": 2\n}"),
            "x.json:3:5: syntax error: while parsing object - unexpected string literal; "
            "expected '}'");
  EXPECT_EQ(ParseError("{\n  // c\n  \"a\": tru\n}"),
            "x.json:3:11: syntax error: while parsing value - invalid literal; last read: "
            "'\"a\": tru<U+000A>'");
  EXPECT_EQ(ParseError("{\"a\": [1, 2,]}"),
            "x.json:1:13: syntax error: while parsing value - unexpected ']'; expected '[', '{', "
            "or a literal");
  EXPECT_EQ(ParseError(""),
            "x.json:1:1: syntax error: while parsing value - unexpected end of input; expected "
            "'[', '{', or a literal");
  EXPECT_EQ(ParseError("{} {}"),
            "x.json:1:4: syntax error: while parsing value - unexpected '{'; expected end of "
            "input");
}

TEST(JsonDocumentTest, DuplicateKeyIsAnErrorAtTheSecond) {
  EXPECT_EQ(ParseError("{\"a\": {\"k\": 1,\n \"k\": 2}}"),
            "x.json:2:2: /a/k: duplicate key (first at 1:8)");
}

TEST(JsonDocumentTest, OversizeInputIsRefused) {
  std::string big = "\"" + std::string(kMaxJsonBytes, 'x') + "\"";
  EXPECT_EQ(ParseError(big), "x.json: 1048578 bytes, more than the limit of 1048576 bytes (1 MiB)");
}

TEST(JsonDocumentTest, NestingDepthIsCapped) {
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(JsonDocument::Parse(ok, "x.json").ok());
  std::string deep = "{\"a\":\n" + std::string(kMaxJsonDepth, '[') + std::string(65, ']') + "}";
  EXPECT_EQ(ParseError(deep), "x.json:2:64: nesting deeper than 64 levels");
  // Huge depth (well past any recursion limit) is refused the same way, cheaply.
  std::string huge(kMaxJsonBytes, '[');
  EXPECT_EQ(ParseError(huge), "x.json:1:65: nesting deeper than 64 levels");
}

TEST(JsonDocumentTest, SyntaxErrorBeforeTooDeepWins) {
  std::string text = "[x, " + std::string(100, '[');
  EXPECT_EQ(ParseError(text),
            "x.json:1:2: syntax error: while parsing value - invalid literal; last read: '[x'");
}

TEST(JsonDocumentTest, LoadReportsTheFailingCall) {
  StatusOr<JsonDocument> missing = JsonDocument::Load("/nonexistent/x.json");
  EXPECT_EQ(missing.status().message(), "open(/nonexistent/x.json): No such file or directory");
  std::string dir = SANDPROBE_SOURCE_DIR "/load/testdata/load";
  EXPECT_EQ(JsonDocument::Load(dir).status().message(),
            dir + ": is a directory, not a regular file");
}

// A FIFO with no writer would block a plain open() (and a read) forever: Load must return an
// error instead. If this regresses, the test hangs (ctest's timeout then fails it).
TEST(JsonDocumentTest, LoadRefusesAFifoWithoutBlocking) {
  std::string path = testing::TempDir() + "/sandprobe_fifo_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  ::unlink(path.c_str());
  EXPECT_EQ(doc.status().message(), path + ": is a FIFO, not a regular file");
}

TEST(JsonDocumentTest, LoadRefusesADevice) {
  EXPECT_EQ(JsonDocument::Load("/dev/null").status().message(),
            "/dev/null: is a character device, not a regular file");
  // /dev/zero would never end a read loop that did not cap its size; it is refused first.
  EXPECT_EQ(JsonDocument::Load("/dev/zero").status().message(),
            "/dev/zero: is a character device, not a regular file");
}

TEST(JsonDocumentTest, LoadFollowsASymlinkToARegularFile) {
  std::string target = SANDPROBE_SOURCE_DIR "/load/testdata/load/policy_bad_pids.json";
  std::string link = testing::TempDir() + "/sandprobe_link_" + std::to_string(::getpid());
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << std::strerror(errno);
  StatusOr<JsonDocument> doc = JsonDocument::Load(link);
  ::unlink(link.c_str());
  EXPECT_TRUE(doc.ok()) << doc.status().message();
}

TEST(JsonDocumentTest, LoadRefusesOversizeFile) {
  std::string path = testing::TempDir() + "/sandprobe_big.json";
  {
    std::ofstream out(path);
    out << std::string(kMaxJsonBytes + 10, ' ');
  }
  EXPECT_EQ(JsonDocument::Load(path).status().message(),
            path + ": larger than the limit of 1048576 bytes (1 MiB)");
}

TEST(JsonDocumentTest, LoadNamesTheFileAsGiven) {
  std::string path = SANDPROBE_SOURCE_DIR "/load/testdata/load/policy_bad_pids.json";
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->file_name(), path);
  EXPECT_EQ(doc->Where(JsonPointer("/limits/pids")), path + ":6:13");
}

// ---- ObjectReader ----

TEST(ObjectReaderTest, UnknownKeyListsTheKnownOnesAndPointsAtTheKey) {
  JsonDocument doc = MustParse("{\"fs\": {\n  \"readable\": [],\n  \"readabel\": []}}");
  ObjectReader r(doc, JsonPointer("/fs"), {"readable", "unreadable", "writable", "unwritable"});
  EXPECT_EQ(r.status().message(),
            "x.json:3:3: /fs/readabel: unknown key (known: readable, unreadable, writable, "
            "unwritable)");
}

TEST(ObjectReaderTest, FirstUnknownKeyInTheFileIsReported) {
  JsonDocument doc = MustParse("{\"zz\": 1, \"aa\": 2}");
  ObjectReader r(doc, JsonPointer(""), {"k"});
  EXPECT_EQ(r.status().message(), "x.json:1:2: /zz: unknown key (known: k)");
}

TEST(ObjectReaderTest, NonObjectIsAnError) {
  JsonDocument doc = MustParse("{\"limits\": [1]}");
  ObjectReader r(doc, JsonPointer("/limits"), {"pids"});
  EXPECT_EQ(r.status().message(), "x.json:1:12: /limits: expected object, got array");
  EXPECT_FALSE(r.Has("pids"));
}

TEST(ObjectReaderTest, TypedReadsReturnValues) {
  JsonDocument doc = MustParse(R"({"s": "v", "b": true, "i": 7, "n": 2, "l": ["a", "b"],
      "argv": ["ls", ""], "argvs": [["a"], ["b", "c"]], "m": {"k": "v"}, "e": "allow"})");
  ObjectReader r(doc, JsonPointer(""), {"s", "b", "i", "n", "l", "argv", "argvs", "m", "e", "x"});
  EXPECT_EQ(r.String("s", Presence::kRequired), "v");
  EXPECT_EQ(r.Bool("b", Presence::kRequired), true);
  EXPECT_EQ(r.Int("i", Presence::kRequired, 1, 10), 7);
  EXPECT_EQ(r.Number("n", Presence::kRequired, {.min = 0, .max = 4, .min_exclusive = true}), 2.0);
  EXPECT_EQ(r.StringList("l", Presence::kRequired), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.Argv("argv", Presence::kRequired), (std::vector<std::string>{"ls", ""}));
  EXPECT_EQ(r.ArgvList("argvs", Presence::kRequired)->size(), 2u);
  EXPECT_EQ(r.StringMap("m", Presence::kRequired)->at("k"), "v");
  EXPECT_EQ(r.Enum("e", Presence::kRequired, {"deny", "allow"}), "allow");
  EXPECT_EQ(r.String("x", Presence::kOptional), std::nullopt);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

// Reads `key` of {"k": <value>} with `read` and returns the error message.
template <typename Read>
std::string ReadError(const std::string& value, Read read) {
  JsonDocument doc = MustParse("{\"k\": " + value + "}");
  ObjectReader r(doc, JsonPointer(""), {"k", "missing"});
  read(r);
  return r.status().message();
}

TEST(ObjectReaderTest, TypeAndRangeErrors) {
  auto integer = [](ObjectReader& r) { (void)r.Int("k", Presence::kRequired, 1, 3600); };
  EXPECT_EQ(ReadError("\"50\"", integer), "x.json:1:7: /k: expected integer, got string");
  EXPECT_EQ(ReadError("5.0", integer), "x.json:1:7: /k: expected integer, got number");
  EXPECT_EQ(ReadError("0", integer), "x.json:1:7: /k: must be between 1 and 3600, got 0");
  EXPECT_EQ(ReadError("18446744073709551615", integer),
            "x.json:1:7: /k: must be between 1 and 3600, got 18446744073709551615");
  auto positive = [](ObjectReader& r) {
    (void)r.Number("k", Presence::kRequired, {.min = 0, .max = 4096, .min_exclusive = true});
  };
  EXPECT_EQ(ReadError("-0.5", positive),
            "x.json:1:7: /k: must be greater than 0 and at most 4096, got -0.5");
  EXPECT_EQ(ReadError("0", positive),
            "x.json:1:7: /k: must be greater than 0 and at most 4096, got 0");
  EXPECT_EQ(ReadError("1e308", positive),
            "x.json:1:7: /k: must be greater than 0 and at most 4096, got 1e+308");
  EXPECT_EQ(ReadError("4096", positive), "");
  EXPECT_EQ(ReadError("4096.5", positive),
            "x.json:1:7: /k: must be greater than 0 and at most 4096, got 4096.5");
  EXPECT_EQ(ReadError("null", positive), "x.json:1:7: /k: expected number, got null");
  auto closed = [](ObjectReader& r) { (void)r.Number("k", Presence::kRequired, {0, 100}); };
  EXPECT_EQ(ReadError("0", closed), "");
  EXPECT_EQ(ReadError("100.5", closed), "x.json:1:7: /k: must be between 0 and 100, got 100.5");
  auto boolean = [](ObjectReader& r) { (void)r.Bool("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("\"yes\"", boolean), "x.json:1:7: /k: expected boolean, got string");
  auto list = [](ObjectReader& r) { (void)r.StringList("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[\"a\", 2]", list), "x.json:1:13: /k/1: expected string, got integer");
  auto argv = [](ObjectReader& r) { (void)r.Argv("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[]", argv), "x.json:1:7: /k: argv must not be empty");
  EXPECT_EQ(ReadError("[\"\", \"a\"]", argv),
            "x.json:1:8: /k/0: program name must not be empty");
  auto argvs = [](ObjectReader& r) { (void)r.ArgvList("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[[\"a\"], \"b\"]", argvs),
            "x.json:1:15: /k/1: expected argv (array of strings), got string");
  auto map = [](ObjectReader& r) { (void)r.StringMap("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("{\"a\": 1}", map), "x.json:1:13: /k/a: expected string, got integer");
  auto enumerated = [](ObjectReader& r) {
    (void)r.Enum("k", Presence::kRequired, {"deny", "allow"});
  };
  EXPECT_EQ(ReadError("\"block\"", enumerated),
            "x.json:1:7: /k: expected one of \"deny\", \"allow\", got \"block\"");
  auto name = [](ObjectReader& r) { (void)r.Name("k", Presence::kRequired); };
  for (const char* bad : {"\"\"", "\"Upper\"", "\"-lead\"", "\"sp ace\"", "\"a/b\""}) {
    EXPECT_EQ(ReadError(bad, name), "x.json:1:7: /k: must match [a-z0-9][a-z0-9._-]*") << bad;
  }
  EXPECT_EQ(ReadError("\"tier-low.v2_x\"", name), "");
  auto required = [](ObjectReader& r) { (void)r.String("missing", Presence::kRequired); };
  EXPECT_EQ(ReadError("1", required), "x.json:1:1: /missing: missing required field");
}

// "\u0000" is valid JSON, but a path or argv element holding it ends at the NUL at run time.
TEST(ObjectReaderTest, NulInAnyStringIsRefusedWhereItIsWritten) {
  const std::string nul = "contains a NUL character (\\u0000): it would cut the string short at "
                          "run time";
  auto string = [](ObjectReader& r) { (void)r.String("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("\"/etc\\u0000/x\"", string), "x.json:1:7: /k: " + nul);
  auto enumerated = [](ObjectReader& r) { (void)r.Enum("k", Presence::kRequired, {"a"}); };
  EXPECT_EQ(ReadError("\"a\\u0000\"", enumerated), "x.json:1:7: /k: " + nul);
  auto list = [](ObjectReader& r) { (void)r.StringList("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[\"a\", \"b\\u0000c\"]", list), "x.json:1:13: /k/1: " + nul);
  auto argv = [](ObjectReader& r) { (void)r.Argv("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[\"ls\", \"-l\\u0000\"]", argv), "x.json:1:14: /k/1: " + nul);
  auto argvs = [](ObjectReader& r) { (void)r.ArgvList("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("[[\"a\"], [\"\\u0000b\"]]", argvs), "x.json:1:16: /k/1/0: " + nul);
  auto map = [](ObjectReader& r) { (void)r.StringMap("k", Presence::kRequired); };
  EXPECT_EQ(ReadError("{\"a\": \"v\\u0000\"}", map), "x.json:1:13: /k/a: " + nul);
  // A key: the pointer shows the NUL escaped, so the message stays one readable line.
  EXPECT_EQ(ReadError("{\"a\\u0000b\": \"v\"}", map), "x.json:1:8: /k/a\\u0000b: key " + nul);
}

TEST(ObjectReaderTest, UnknownKeyWithControlCharactersIsPrintedEscaped) {
  JsonDocument doc = MustParse("{\"a\\u0000\\n\": 1}");
  ObjectReader r(doc, JsonPointer(""), {"a"});
  EXPECT_EQ(r.status().message(), "x.json:1:2: /a\\u0000\\u000a: unknown key (known: a)");
}

TEST(ObjectReaderTest, FirstErrorWins) {
  JsonDocument doc = MustParse(R"({"a": "x", "b": "y"})");
  ObjectReader r(doc, JsonPointer(""), {"a", "b"});
  EXPECT_EQ(r.Int("a", Presence::kRequired, 0, 1), std::nullopt);
  EXPECT_EQ(r.String("b", Presence::kRequired), std::nullopt);  // fine, but after an error
  r.FailAt(JsonPointer("/b"), "later");
  EXPECT_EQ(r.status().message(), "x.json:1:7: /a: expected integer, got string");
}

// Found by fuzz_load: errors nlohmann raises that are not parse errors, and comment endings
// the position scanner must read exactly as nlohmann does.
TEST(JsonSourceFuzzRegressionTest, NumberOverflowIsAnErrorNotACrash) {
  auto doc = JsonDocument::Parse("{\"a\": 1e999999}", "f.json");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "f.json:1:7: invalid JSON: [json.exception.out_of_range.406] number overflow parsing "
            "'1e999999'");
}

// A number beyond a double (it would be infinity) is an error at its own position, on any line.
TEST(JsonDocumentTest, InfiniteNumberIsAnErrorAtItsPosition) {
  EXPECT_EQ(ParseError("{\"limits\": {\n  // cores\n  \"cpus\": -1e400}}"),
            "x.json:3:11: invalid JSON: [json.exception.out_of_range.406] number overflow "
            "parsing '-1e400'");
}

TEST(JsonSourceFuzzRegressionTest, LineCommentEndsAtCarriageReturnAsInNlohmann) {
  auto doc = JsonDocument::Parse("// c\r{\"k\":\n 5}", "f.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->Where(nlohmann::json::json_pointer("/k")), "f.json:2:2");
}

}  // namespace
}  // namespace sandprobe
