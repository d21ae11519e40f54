#include "reports/report_format.h"

#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

TEST(ReportFormatTest, EveryRowHasAUniqueNameFlagHelpAndWriter) {
  std::set<std::string_view> names, flags;
  for (const ReportFormat& f : ReportFormats()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_EQ(f.flag, "--" + std::string(f.name));
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_NE(f.write, nullptr) << f.name;
  }
  for (const char* name : {"json", "junit", "sarif", "summary"}) {
    EXPECT_NE(FindReportFormat(name), nullptr) << name;
  }
  EXPECT_EQ(FindReportFormat("pdf"), nullptr);
}

TEST(ReportFormatTest, WritesEveryGivenOutputAndNamesItsFlag) {
  const std::string dir = report_fixture::MakeTempDir();
  ReportPaths paths(ReportFormats().size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    paths[i] = dir + "/out." + std::string(ReportFormats()[i].name);
  }
  EXPECT_EQ(NamedOutputs(paths).size(), paths.size());
  EXPECT_EQ(NamedOutputs(paths)[0].first, "--json");
  EXPECT_FALSE(AnyOutputOnStdout(paths));
  EXPECT_TRUE(WriteReports({report_fixture::HardenedReport()}, paths).empty());
  for (const std::string& path : paths) {
    EXPECT_GT(std::filesystem::file_size(path), 100u) << path;
  }
  paths[1] = "-";
  EXPECT_TRUE(AnyOutputOnStdout(paths));
  paths.assign(paths.size(), "");
  paths[0] = dir + "/missing/r.json";
  const std::vector<Status> failed = WriteReports({report_fixture::HardenedReport()}, paths);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_THAT(failed[0].message(), HasSubstr("write JSON report"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe
