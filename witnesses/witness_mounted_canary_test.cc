// The mounted-canary witness plants one canary per canaries_in entry (never over a file),
// offers the planner its inside path, records it for the sweep, and removes it when destroyed.
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "launch/fake_launcher.h"
#include "launch/run_registry.h"
#include "run/run_sweep.h"
#include "witnesses/witness.h"
#include "witnesses/witnesses.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

std::string MakeDir(const std::string& name) {
  std::string tmpl = (fs::temp_directory_path() / (name + "-XXXXXX")).string();
  return ::mkdtemp(tmpl.data());
}

// The mounted-canary witness's row; the table always has one.
const WitnessRow& Row() { return *FindWitness("mounted_canaries"); }

TEST(WitnessMountedCanaryTest, PlantsRecordsOffersAndRemoves) {
  std::string run_dir = MakeDir("sandprobe-mctest0123456789");
  ASSERT_TRUE(ClaimRunDir(run_dir, "/x/profile.json").ok());
  std::string home = MakeDir("sp-home");
  std::ofstream(home + "/mine.txt") << "user data";
  Profile profile;
  profile.source_path = "p.json";
  profile.vars = {{"home", home}};
  profile.canaries_in = {{"{home}", "/host-home", "p.json:1:1 /canaries_in/0"}};
  testing::FakeLauncher launcher;
  std::string planted;
  {
    auto witness = Row().start(WitnessSetup{"r", run_dir, profile, launcher, "token"});
    ASSERT_TRUE(witness.ok()) << witness.status().message();
    auto values = (*witness)->PlanValues();
    EXPECT_EQ(values["count"], "1");
    EXPECT_EQ(values["0.label"], home);
    std::string inside = values["0.inside"];
    ASSERT_EQ(inside.rfind("/host-home/sandprobe-canary-", 0), 0u) << inside;
    planted = home + inside.substr(std::string("/host-home").size());
    EXPECT_TRUE(fs::is_regular_file(planted));
    EXPECT_TRUE(IsPlantedCanary(planted));
    StatusOr<OwnerRecord> owner = LoadOwner(run_dir);
    ASSERT_TRUE(owner.ok());
    EXPECT_EQ(owner->planted_canaries, std::vector<std::string>{planted});
    // The host watches it like its own canary: an open during a launch is seen by inode.
    std::ifstream(planted).get();
    (*witness)->AfterLaunch("L1");
    (*witness)->AfterLaunch("L2");
    nlohmann::json seen = (*witness)->Collect();
    EXPECT_EQ(seen[0]["present_at_collect"], true);
    EXPECT_EQ(seen[0]["sha256"].get<std::string>().size(), 64u);
    const nlohmann::json& watch = seen[0]["watch"];
    EXPECT_EQ(watch.value("watched", false), true) << watch.dump();
    ASSERT_EQ(watch["opens"].size(), 1u) << watch.dump();
    EXPECT_EQ(watch["opens"][0]["after_launch"], "L1");
    EXPECT_TRUE(watch["changes"].empty()) << watch.dump();
  }
  EXPECT_FALSE(fs::exists(planted)) << "the canary outlived its witness";
  EXPECT_TRUE(fs::exists(home + "/mine.txt"));
  EXPECT_FALSE(IsPlantedCanary(home + "/mine.txt"));
  EXPECT_FALSE(IsPlantedCanary("relative/sandprobe-canary-00.txt"));
  fs::remove_all(home);
  fs::remove_all(run_dir);
}

TEST(WitnessMountedCanaryTest, MissingHostDirIsAnErrorNamingIt) {
  std::string run_dir = MakeDir("sandprobe-mctest9876543210");
  Profile profile;
  profile.source_path = "p.json";
  profile.canaries_in = {{"/nonexistent-sp-dir", "/nonexistent-sp-dir", "p.json:2:3 /canaries_in/0"}};
  testing::FakeLauncher launcher;
  auto witness = Row().start(WitnessSetup{"r", run_dir, profile, launcher, "token"});
  ASSERT_FALSE(witness.ok());
  EXPECT_NE(witness.status().message().find("/nonexistent-sp-dir"), std::string::npos)
      << witness.status().message();
  fs::remove_all(run_dir);
}

// A run that died before removing its planted canary: the sweep removes it (and only it).
TEST(WitnessMountedCanaryTest, SweepOfADeadRunRemovesItsPlantedCanary) {
  std::string parent = MakeDir("sp-mcsweep");
  std::string root = parent + "/sandprobe-" + RandomHex(6);
  fs::create_directories(root + "/workspace");
  std::ofstream(parent + "/profile.json") << R"({"name": "h", "description": "d", "backend": "host",
      "lifecycle": "oneshot", "probe_path": "{probe_dir}/p", "injection": "host-path",
      "run": ["{probe}", "{probe_args...}"]})";
  std::string home = MakeDir("sp-home");
  std::string planted = home + "/sandprobe-canary-0123456789abcdef.txt";
  std::ofstream(planted) << "sandprobe host canary x\n";
  std::ofstream(home + "/sandprobe-canary-notes.txt") << "the user's";
  // The host profile has no sweep commands: recorded as none (an owner.json of this version).
  OwnerRecord owner{.pid = 1, .profile_path = parent + "/profile.json", .sweeps = std::vector<RecordedSweep>{},
                    .planted_canaries = {planted, home + "/sandprobe-canary-notes.txt", "/etc/passwd"}};
  testing::FakeLauncher launcher;
  SweepSummary s = SweepDeadRun(DeadRun{.run_id = "x", .root = root, .why = "dead", .owner = owner},
                                launcher, {});
  EXPECT_TRUE(s.errors.empty()) << s.errors.front();
  EXPECT_FALSE(fs::exists(planted));
  EXPECT_TRUE(fs::exists(home + "/sandprobe-canary-notes.txt")) << "not a canary's name";
  EXPECT_TRUE(fs::exists("/etc/passwd"));
  EXPECT_NE(DescribeSweep(s, false).find("removed planted canary " + planted), std::string::npos);
  fs::remove_all(home);
  fs::remove_all(parent);
}

}  // namespace
}  // namespace sandprobe
