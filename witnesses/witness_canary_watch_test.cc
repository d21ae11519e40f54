// The canary watch sees every open of the canary's inode, by any path, and every change to it,
// and re-verifies it after each launch; what happens after Stop is not its business.
#include "witnesses/witness_canary_watch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

class CanaryWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-canary-watch-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    StatusOr<CanaryFile> canary = CanaryFile::Plant(dir_);
    ASSERT_TRUE(canary.ok()) << canary.status().message();
    canary_.emplace(std::move(*canary));
    watch_ = CanaryWatch::Start(canary_->path(), canary_->sha256());
  }
  void TearDown() override {
    watch_.reset();
    canary_.reset();
    fs::remove_all(dir_);
  }
  nlohmann::json Seen(const std::string& launch = "L1") {
    watch_->AfterLaunch(launch);
    return watch_->Collect();
  }
  static void Touch(const std::string& path) {  // an open that reads nothing
    int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << path;
    ::close(fd);
  }

  std::string dir_;
  std::optional<CanaryFile> canary_;
  std::unique_ptr<CanaryWatch> watch_;
};

TEST_F(CanaryWatchTest, AQuietLaunchLeavesNothing) {
  const nlohmann::json seen = Seen();
  EXPECT_EQ(seen["watched"], true);
  EXPECT_FALSE(seen.contains("error"));
  EXPECT_EQ(seen["opens"], nlohmann::json::array());
  EXPECT_EQ(seen["changes"], nlohmann::json::array());
  EXPECT_EQ(seen["verified"], 2);  // once at the start, once after L1
}

// The inode is watched, not the name: an open through another name of the same file counts.
TEST_F(CanaryWatchTest, SeesAnOpenThroughAnotherPath) {
  const std::string alias = dir_ + "/alias";
  ASSERT_EQ(::link(canary_->path().c_str(), alias.c_str()), 0);
  watch_->AfterLaunch("L1");  // the link itself changed the link count: a change, seen at L1
  Touch(alias);
  Touch(alias);
  const nlohmann::json seen = Seen("L2");
  ASSERT_EQ(seen["opens"].size(), 1u);
  EXPECT_EQ(seen["opens"][0]["after_launch"], "L2");
  EXPECT_GE(seen["opens"][0]["count"], 1);  // inotify merges identical events in a row
  EXPECT_EQ(seen["changes"].size(), 1u);
  EXPECT_EQ(seen["changes"][0]["after_launch"], "L1");
}

// A changed or missing canary is a write to the host; a lasting change is reported once.
TEST_F(CanaryWatchTest, ADeletedCanaryIsAChange) {
  ASSERT_EQ(::unlink(canary_->path().c_str()), 0);
  watch_->AfterLaunch("L1");
  const nlohmann::json seen = Seen("L2");
  std::vector<std::string> what;
  for (const auto& change : seen["changes"]) {
    EXPECT_EQ(change["after_launch"], "L1");
    what.push_back(change["what"]);
  }
  EXPECT_NE(std::find(what.begin(), what.end(), "gone from its path"), what.end());
}

TEST_F(CanaryWatchTest, OverwrittenContentIsAChangeEvenWhenTheInodeStays) {
  {
    std::ofstream out(canary_->path(), std::ios::trunc);
    out << "sandprobe host canary 00000000000000000000000000000000\n";
  }
  const nlohmann::json seen = Seen();
  std::vector<std::string> what;
  for (const auto& change : seen["changes"]) what.push_back(change["what"]);
  EXPECT_NE(std::find(what.begin(), what.end(), "content changed (sha256 differs)"), what.end());
  EXPECT_NE(std::find(what.begin(), what.end(), "written to (inotify)"), what.end());
  EXPECT_EQ(seen["opens"][0]["count"], 1);  // writing needs an open too
}

// Replaced by a rename over its path, content restored: the path names another inode.
TEST_F(CanaryWatchTest, AReplacedCanaryIsAChange) {
  const std::string copy = dir_ + "/copy";
  fs::copy_file(canary_->path(), copy);
  ASSERT_EQ(::rename(copy.c_str(), canary_->path().c_str()), 0);
  const nlohmann::json seen = Seen();
  bool replaced = false;
  for (const auto& change : seen["changes"]) replaced = replaced || change["what"] == "replaced: its path names another file";
  EXPECT_TRUE(replaced) << seen.dump();
}

TEST_F(CanaryWatchTest, AModeChangeIsAChange) {
  ASSERT_EQ(::chmod(canary_->path().c_str(), 0666), 0);
  const nlohmann::json seen = Seen();
  bool mode = false;
  for (const auto& change : seen["changes"]) mode = mode || change["what"] == "mode changed from 0644 to 0666";
  EXPECT_TRUE(mode) << seen.dump();
}

// The harness removes the canary with the run dir after the launches: not a sandbox's write.
TEST_F(CanaryWatchTest, NothingAfterStopCounts) {
  watch_->Stop();
  Touch(canary_->path());
  ASSERT_EQ(::unlink(canary_->path().c_str()), 0);
  watch_->AfterLaunch("late");
  const nlohmann::json seen = watch_->Collect();
  EXPECT_EQ(seen["opens"], nlohmann::json::array());
  EXPECT_EQ(seen["changes"], nlohmann::json::array());
}

TEST(CanaryWatch, AWatchThatCannotStartSaysWhy) {
  std::unique_ptr<CanaryWatch> watch = CanaryWatch::Start("/nonexistent/sp-canary.txt", "00");
  const nlohmann::json seen = watch->Collect();
  EXPECT_EQ(seen["watched"], false);
  EXPECT_NE(seen["error"].get<std::string>().find("open(/nonexistent/sp-canary.txt)"), std::string::npos);
  watch->AfterLaunch("L1");  // harmless
}

}  // namespace
}  // namespace sandprobe
