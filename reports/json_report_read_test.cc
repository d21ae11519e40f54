#include "reports/json_report_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/json_report.h"
#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::HasSubstr;

class JsonReportReadTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  const std::string dir_ = report_fixture::MakeTempDir();
};

// A real report of 10 MB (a big run keeps every frame) is read: `diff` refused it at 1 MiB.
TEST_F(JsonReportReadTest, AReportOfTenMegabytesIsRead) {
  RunReport report = report_fixture::HardenedReport();
  report.witnesses["padding"] = std::string(10 << 20, 'x');
  const std::string path = Write("big.json", RenderJsonReport(report));
  ASSERT_GT(std::filesystem::file_size(path), 10u << 20);
  StatusOr<nlohmann::json> read = LoadJsonReport(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)["schema"], kReportSchema);
}

// Past the limit the file is refused by its size, before a byte of it is parsed.
TEST_F(JsonReportReadTest, AFileOverTheLimitIsRefusedUnread) {
  const std::string path = dir_ + "/huge.json";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kMaxReportBytes) + 1), 0);  // sparse
  ::close(fd);
  StatusOr<nlohmann::json> read = LoadJsonReport(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
  EXPECT_THAT(read.status().message(), HasSubstr("more than 256 MiB"));
}

TEST_F(JsonReportReadTest, AnotherSchemaOrNotAReportIsRefusedByName) {
  nlohmann::json v2 = nlohmann::json::parse(RenderJsonReport(report_fixture::HardenedReport()));
  v2["schema"] = "sandprobe-report/2";
  const std::string path = Write("v2.json", v2.dump());
  EXPECT_EQ(LoadJsonReport(path).status().message(),
            path + ": report schema sandprobe-report/2 is not sandprobe-report/1, the one this sandprobe reads");
  EXPECT_THAT(LoadJsonReport(Write("list.json", "[1, 2]")).status().message(), HasSubstr("not a sandprobe JSON report"));
}

TEST_F(JsonReportReadTest, NotJsonNamesFileLineAndColumn) {
  const std::string path = Write("broken.json", "{\n  \"schema\": \"sandprobe-report/1\",\n  oops\n}");
  StatusOr<nlohmann::json> read = LoadJsonReport(path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), ::testing::StartsWith(path + ":3:3: not JSON: "));
}

TEST_F(JsonReportReadTest, OnlyARegularFileIsRead) {
  EXPECT_THAT(LoadJsonReport(dir_).status().message(), HasSubstr("not a regular file"));
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(LoadJsonReport(fifo).status().message(), HasSubstr("not a regular file"));  // no writer: no hang
  EXPECT_THAT(LoadJsonReport(dir_ + "/missing.json").status().message(), HasSubstr("ENOENT"));
}

}  // namespace
}  // namespace sandprobe
