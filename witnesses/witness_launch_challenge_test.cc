// The fresh positive control: only an answer computed from this launch's file, with an open of
// that file the host saw, passes; a replayed answer, a missing one, a probe that could not read
// it, or an answer without a host-seen open does not. The file is gone after the launch.
#include "witnesses/witness_launch_challenge.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "contract/launch_control.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

class LaunchChallengeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-challenge-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  LaunchChallenge Plant(const std::string& content = "fresh-content", bool readable_by_policy = false) {
    StatusOr<LaunchChallenge> c =
        LaunchChallenge::Plant({dir_, "/inside", readable_by_policy}, ".sandprobe-control-x", content);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return std::move(*c);
  }
  // What a live probe does: reads the file (an open the watch sees) and answers.
  static ProbeFrames Answered(const LaunchChallenge& c, const std::string& nonce) {
    std::ifstream in(c.host_path());
    std::stringstream content;
    content << in.rdbuf();
    ProbeFrames frames;
    frames.facts.push_back({{"family", "hello"}, {std::string(kControlAnswerKey), ControlAnswer(nonce, content.str())}});
    return frames;
  }
  std::string dir_;
};

TEST_F(LaunchChallengeTest, APlantedFileIsReadOnlyAndNamedByItsInsidePathAndGoesAfterward) {
  std::string host;
  {
    LaunchChallenge c = Plant();
    host = c.host_path();
    EXPECT_EQ(c.inside_path(), "/inside/.sandprobe-control-x");
    struct stat st {};
    ASSERT_EQ(::stat(host.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0444u);
  }
  EXPECT_FALSE(fs::exists(host));
}

TEST_F(LaunchChallengeTest, AnExistingNameIsRefusedNeverFollowed) {
  fs::create_symlink("/etc/passwd", dir_ + "/.sandprobe-control-x");
  StatusOr<LaunchChallenge> c = LaunchChallenge::Plant({dir_, "/inside"}, ".sandprobe-control-x", "x");
  EXPECT_FALSE(c.ok());
}

TEST_F(LaunchChallengeTest, ALiveAnswerWithAHostSeenOpenPasses) {
  LaunchChallenge c = Plant();
  nlohmann::json row = c.Judge(Answered(c, "n1"), "n1");
  EXPECT_FALSE(row.contains("failed")) << row.dump();
  EXPECT_TRUE(row["answered"]);
  EXPECT_TRUE(row["opened"]);
}

TEST_F(LaunchChallengeTest, AReplayedAnswerFails) {
  // The answer an earlier launch gave (another file's content) under this launch's nonce.
  LaunchChallenge c = Plant("this launch");
  std::ifstream(c.host_path()).get();  // an open, so only the answer is wrong
  ProbeFrames frames;
  frames.facts.push_back({{"family", "hello"}, {std::string(kControlAnswerKey), ControlAnswer("n1", "an earlier launch")}});
  nlohmann::json row = c.Judge(frames, "n1");
  ASSERT_TRUE(row.contains("failed"));
  EXPECT_NE(row["failed"].get<std::string>().find("a replay"), std::string::npos) << row.dump();
}

TEST_F(LaunchChallengeTest, AnAnswerUnderAnotherNonceFails) {
  LaunchChallenge c = Plant();
  nlohmann::json row = c.Judge(Answered(c, "old-nonce"), "n1");
  EXPECT_TRUE(row.contains("failed")) << row.dump();
}

TEST_F(LaunchChallengeTest, AnAnswerWithoutAnOpenTheHostSawFails) {
  LaunchChallenge c = Plant("content");
  ProbeFrames frames;  // the right answer, computed without opening the host's file
  frames.facts.push_back({{"family", "hello"}, {std::string(kControlAnswerKey), ControlAnswer("n1", "content")}});
  nlohmann::json row = c.Judge(frames, "n1");
  ASSERT_TRUE(row.contains("failed"));
  EXPECT_FALSE(row["opened"]);
  EXPECT_NE(row["failed"].get<std::string>().find("saw no open"), std::string::npos);
}

TEST_F(LaunchChallengeTest, AProbeThatCouldNotReadTheFileLeavesTheLaunchWithoutAControl) {
  LaunchChallenge c = Plant();
  ProbeFrames frames;
  frames.facts.push_back({{"family", "hello"}, {"control_step", "open"}, {"control_errno", ""}});
  nlohmann::json row = c.Judge(frames, "n1");
  EXPECT_FALSE(row.contains("failed")) << row.dump();
  EXPECT_NE(row.value("unavailable", "").find("refused by its runtime"), std::string::npos) << row.dump();
}

// A launcher may claim its probe could not read the control, to escape it. The claim fails
// where it cannot be true: the host saw the open the probe says failed, or the policy promises
// the workspace readable (a sandbox breaking that promise is no ground for a pass either).
TEST_F(LaunchChallengeTest, ACouldNotReadClaimTheHostContradictsFails) {
  LaunchChallenge c = Plant();
  std::ifstream(c.host_path()).get();  // the live probe's open
  ProbeFrames frames;
  frames.facts.push_back({{"family", "hello"}, {"control_step", "open"}, {"control_errno", "EACCES"}});
  nlohmann::json row = c.Judge(frames, "n1");
  EXPECT_FALSE(row.contains("unavailable")) << row.dump();
  EXPECT_NE(row.value("failed", "").find("saw it opened"), std::string::npos) << row.dump();
}

TEST_F(LaunchChallengeTest, ACouldNotReadClaimFailsWhereThePolicyPromisesTheWorkspace) {
  LaunchChallenge c = Plant("fresh-content", /*readable_by_policy=*/true);
  ProbeFrames frames;
  frames.facts.push_back({{"family", "hello"}, {"control_step", "open"}, {"control_errno", "EACCES"}});
  nlohmann::json row = c.Judge(frames, "n1");
  EXPECT_FALSE(row.contains("unavailable")) << row.dump();
  EXPECT_NE(row.value("failed", "").find("although the policy declares {workspace} readable"), std::string::npos)
      << row.dump();
}

TEST(ChallengeFailureTest, NamesWhatWasMissing) {
  EXPECT_EQ(*ChallengeFailure(nullptr, "x", true, "/w/c"), "no hello fact answered the fresh control");
  nlohmann::json hello = {{"family", "hello"}};
  EXPECT_NE(ChallengeFailure(&hello, "x", true, "/w/c")->find("no control_sha256"), std::string::npos);
  hello["control_step"] = "open";
  hello["control_errno"] = "EACCES";
  EXPECT_NE(ChallengeFailure(&hello, "x", true, "/w/c")->find("could not read its fresh control /w/c (\"open\" EACCES)"),
            std::string::npos);
  nlohmann::json answered = {{"family", "hello"}, {"control_sha256", "x"}};
  EXPECT_EQ(ChallengeFailure(&answered, "x", true, "/w/c"), std::nullopt);
  nlohmann::json not_hello = {{"family", "fs.read"}, {"control_sha256", "x"}};
  EXPECT_TRUE(ChallengeFailure(&not_hello, "x", true, "/w/c").has_value());
}

TEST(ControlAnswerTest, IsTheSha256OfTheNonceThenTheContent) {
  EXPECT_EQ(ControlAnswer("ab", "c"), Sha256Hex("abc"));
  EXPECT_NE(ControlAnswer("a", "bc"), ControlAnswer("b", "bc"));
}

}  // namespace
}  // namespace sandprobe
