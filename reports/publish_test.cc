#include "reports/publish.h"

#include <cstdio>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/exit_code.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What Publish printed to a stream.
std::string Drain(FILE* stream) {
  std::fflush(stream);
  std::rewind(stream);
  std::string text;
  for (int c; (c = std::fgetc(stream)) != EOF;) text.push_back(static_cast<char>(c));
  return text;
}

ReportPaths Outputs(const std::string& json) {
  ReportPaths paths(ReportFormats().size());
  paths[static_cast<std::size_t>(FindReportFormat("json") - ReportFormats().data())] = json;
  return paths;
}

struct Streams {
  FILE* console = std::tmpfile();
  FILE* errors = std::tmpfile();
  ~Streams() { std::fclose(console), std::fclose(errors); }
};

PublishOptions Options(const Streams& streams, Severity fail_on) {
  return PublishOptions{.program = "sandprobe run", .fail_on = *ParseFailOn(SeverityName(fail_on)),
                        .console = streams.console, .errors = streams.errors};
}

TEST(Publish, PrintsGatesWritesAndSaysWhereTheReportsWent) {
  const std::string dir = report_fixture::MakeTempDir();
  Streams streams;
  RunReport report = report_fixture::HardenedReport();
  const PublishResult result = Publish(report, Outputs(dir + "/r.json"), Options(streams, Severity::kLow));
  EXPECT_EQ(result.exit_code, kExitFail);
  EXPECT_TRUE(std::filesystem::exists(dir + "/r.json"));
  const std::string console = Drain(streams.console);
  EXPECT_THAT(console, HasSubstr("TOTAL            7\nexit 1: "));
  EXPECT_THAT(console, HasSubstr("\nreports: json " + dir + "/r.json\n"));
  EXPECT_EQ(Drain(streams.errors), "");
  std::filesystem::remove_all(dir);
}

TEST(Publish, AReportThatCannotBeWrittenIsAHarnessErrorAndNotListedAsWritten) {
  Streams streams;
  RunReport report = report_fixture::HardenedReport();
  const PublishResult result =
      Publish(report, Outputs("/nonexistent-dir-sandprobe/r.json"), Options(streams, Severity::kCritical));
  EXPECT_EQ(result.exit_code, kExitHarness);
  EXPECT_THAT(Drain(streams.errors), HasSubstr("sandprobe run: "));
  EXPECT_THAT(Drain(streams.console), Not(HasSubstr("reports:")));
}

TEST(Publish, WaiversApplyBeforeTheGateAndTheGateLineHasItsPrefix) {
  Streams streams;
  RunReport report = report_fixture::HardenedReport();
  WaiverFile waivers;
  waivers.source_path = "w.json";
  waivers.waivers.push_back(Waiver{.check = "fs.*", .reason = "tracked", .expires = "2099-01-01", .where = "w.json:1:1"});
  PublishOptions options = Options(streams, Severity::kLow);
  options.gate_prefix = "re-judged run r against policy p: ";
  options.waivers = &waivers;
  options.today = "2026-11-27";
  Publish(report, ReportPaths(ReportFormats().size()), options);
  const std::string console = Drain(streams.console);
  EXPECT_THAT(console, HasSubstr("  waived         2\n"));
  EXPECT_THAT(console, HasSubstr("\nre-judged run r against policy p: exit "));
  EXPECT_THAT(console, Not(HasSubstr("reports:")));  // none was asked for
}

TEST(ParseFailOnFlag, NamesTheAcceptedValues) {
  Streams streams;
  EXPECT_FALSE(ParseFailOnFlag("sandprobe report", "severe", streams.errors));
  EXPECT_EQ(Drain(streams.errors),
            "sandprobe report: --fail-on severe: expected critical, high, medium, low, info or none\n");
  EXPECT_TRUE(ParseFailOnFlag("sandprobe report", "none", streams.errors));
}

TEST(WrittenReportsLine, NamesEveryGivenOutputInTableOrder) {
  ReportPaths paths(ReportFormats().size());
  EXPECT_EQ(WrittenReportsLine(paths), "");
  paths[static_cast<std::size_t>(FindReportFormat("sarif") - ReportFormats().data())] = "out.sarif";
  paths[static_cast<std::size_t>(FindReportFormat("json") - ReportFormats().data())] = "-";
  EXPECT_EQ(WrittenReportsLine(paths), "reports: json (stdout), sarif out.sarif");
}

}  // namespace
}  // namespace sandprobe
