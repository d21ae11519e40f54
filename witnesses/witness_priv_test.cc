// The privileges witness's own host command, the backend's `version`: its first line is the
// report's backend version, and it runs kept to one CPU (HostCommandSpec), as it runs beside
// the sandbox's start.
#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "launch/run_registry.h"
#include "witnesses/witness.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

TEST(PrivWitnessTest, TheVersionCommandRunsOnOneCpuAndNamesTheBackendVersion) {
  std::string tmpl = (fs::temp_directory_path() / "sandprobe-privtest-XXXXXX").string();
  const std::string run_dir = ::mkdtemp(tmpl.data());
  ASSERT_TRUE(ClaimRunDir(run_dir, "/x/profile.json").ok());
  Profile profile;
  profile.backend = Backend::kDocker;
  // What a Go CLI would read: GOMAXPROCS, then a second line the report leaves out.
  profile.version = {"sh", "-c", "echo \"cpus=$GOMAXPROCS \"; echo more"};
  ProcessLauncher launcher;
  const WitnessRow* priv = FindWitness("priv");
  ASSERT_NE(priv, nullptr);
  {
    auto witness = priv->start(WitnessSetup{"r", run_dir, profile, launcher, "token"});
    ASSERT_TRUE(witness.ok()) << witness.status().message();
    nlohmann::json seen = (*witness)->Collect();
    EXPECT_EQ(seen.value("backend_version", ""), "cpus=1") << seen.dump();
    EXPECT_EQ(seen.value("backend_version_command", ""), "sh -c echo \"cpus=$GOMAXPROCS \"; echo more");
  }  // the canary process ends with the witness
  fs::remove_all(run_dir);
}

}  // namespace
}  // namespace sandprobe
