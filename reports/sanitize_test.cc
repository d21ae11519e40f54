#include "reports/sanitize.h"

#include <gtest/gtest.h>
#include <utf8cpp/utf8.h>

#include <string>

namespace sandprobe {
namespace {

using namespace std::string_literals;

const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD

TEST(RepairUtf8, KeepsValidTextUnchanged) {
  const std::string valid = "ascii caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \x1b\t\n"s + '\0';
  EXPECT_EQ(RepairUtf8(valid), valid);
}

TEST(RepairUtf8, ReplacesEachInvalidSequenceWithOneReplacementCharacter) {
  EXPECT_EQ(RepairUtf8("a\xff" "b"), "a" + kReplacement + "b");           // invalid lead
  EXPECT_EQ(RepairUtf8("a\xc3"), "a" + kReplacement);                     // truncated at end
  EXPECT_EQ(RepairUtf8("a\xe2\x9c" "b"), "a" + kReplacement + "b");       // truncated mid-text
  EXPECT_EQ(RepairUtf8("\xed\xa0\x80"), kReplacement);                    // encoded surrogate
  EXPECT_EQ(RepairUtf8("\xc0\xaf"), kReplacement);                        // overlong "/"
  EXPECT_EQ(RepairUtf8("\xf4\x90\x80\x80"), kReplacement);                // above U+10FFFF
  EXPECT_TRUE(utf8::is_valid(RepairUtf8("\x80\x80\xfe\xff\xc3(")));
}

TEST(StripAnsiEscapes, RemovesCsiSequences) {
  EXPECT_EQ(StripAnsiEscapes("\x1b[1;31mred\x1b[0m \x1b[2K\x1b[?25lx"), "red x");
}

TEST(StripAnsiEscapes, RemovesOscStringsEndedByBelOrStringTerminator) {
  EXPECT_EQ(StripAnsiEscapes("a\x1b]0;title\x07" "b"), "ab");
  EXPECT_EQ(StripAnsiEscapes("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b"), "alinkb");
}

TEST(StripAnsiEscapes, KeepsTextAfterAnUnterminatedOsc) {
  EXPECT_EQ(StripAnsiEscapes("a\x1b]0;rest of output"), "a0;rest of output");
}

TEST(StripAnsiEscapes, RemovesTwoByteAndCharsetSequences) {
  EXPECT_EQ(StripAnsiEscapes("a\x1b" "7b\x1b" "8c\x1b(Bd"), "abcd");
}

TEST(StripAnsiEscapes, DropsOnlyTheEscBeforeNonAsciiOrControls) {
  EXPECT_EQ(StripAnsiEscapes("\x1b\xc3\xa9\x1b\n\x1b"), "\xc3\xa9\n");
}

TEST(SanitizeForXml, DropsC0ControlsButKeepsTabAndLineEnds) {
  const std::string raw = "a"s + '\0' + "b\x01\x07\x08\x0b\x0c\x1b\x1f" + "c\t\nd";
  EXPECT_EQ(SanitizeForXml(raw, 1000), "abc\t\nd");
}

TEST(SanitizeForXml, NormalizesCarriageReturnsToNewlines) {
  EXPECT_EQ(SanitizeForXml("a\r\nb\rc\n\r", 1000), "a\nb\nc\n\n");
}

TEST(SanitizeForXml, DropsNonCharactersFffeAndFfff) {
  EXPECT_EQ(SanitizeForXml("a\xef\xbf\xbe" "b\xef\xbf\xbf" "c", 1000), "abc");
}

TEST(SanitizeForXml, KeepsWhatXmlAllows) {
  const std::string ok = "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 ]]> & < \" \x7f \xef\xbf\xbd";
  EXPECT_EQ(SanitizeForXml(ok, 1000), ok);
}

TEST(SanitizeForXml, ReplacesInvalidUtf8AndEncodedSurrogates) {
  EXPECT_EQ(SanitizeForXml("a\xed\xb0\x80" "b\xff", 1000), "a" + kReplacement + "b" + kReplacement);
}

TEST(SanitizeForXml, StripsAnsiEscapesWhole) {
  // Dropping only the ESC would leave "[31m" behind.
  EXPECT_EQ(SanitizeForXml("\x1b[31mred\x1b[0m", 1000), "red");
}

TEST(SanitizeForXml, LeavesTextUpToTheCapUntouched) {
  const std::string text(100, 'x');
  EXPECT_EQ(SanitizeForXml(text, 100), text);
}

TEST(SanitizeForXml, CapsWithAMarkerCountingTheDroppedBytes) {
  const std::string text(10000, 'x');
  const std::string out = SanitizeForXml(text, 1000);
  EXPECT_LE(out.size(), 1000u);
  const std::size_t kept = out.find('\n');
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(out.substr(kept), "\n[... " + std::to_string(10000 - kept) + " bytes truncated]");
  EXPECT_EQ(out.substr(0, kept), std::string(kept, 'x'));
  EXPECT_GT(kept, 900u);
}

TEST(SanitizeForXml, CapsOnACodePointBoundary) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xe2\x9c\x93";  // 3 bytes each
  for (std::size_t cap : {100u, 101u, 102u, 103u, 500u}) {
    const std::string out = SanitizeForXml(text, cap);
    EXPECT_TRUE(utf8::is_valid(out)) << "cap " << cap;
    EXPECT_LE(out.size(), cap);
    const std::size_t kept = out.find('\n');
    EXPECT_EQ(kept % 3, 0u) << "cap " << cap;
  }
}

TEST(SanitizeForXml, CapCountsSanitizedBytesNotRawBytes) {
  // 2000 NULs vanish: the remaining 10 bytes fit a cap of 50.
  EXPECT_EQ(SanitizeForXml(std::string(2000, '\0') + "0123456789", 50), "0123456789");
}

TEST(SanitizeForXml, MarkerBoundIsTheLongestMarker) {
  EXPECT_EQ(kMaxTruncationMarker, ("\n[... " + std::string(20, '9') + " bytes truncated]").size());
  EXPECT_LE(SanitizeForXml(std::string(500, 'x'), 0).size(), kMaxTruncationMarker);
}

}  // namespace
}  // namespace sandprobe
