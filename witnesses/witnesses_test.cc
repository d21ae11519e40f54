#include "witnesses/witnesses.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "witnesses/witness.h"

namespace sandprobe {
namespace {

std::string TempDir() {
  std::string tmpl = std::filesystem::temp_directory_path().string() + "/sp-witness-XXXXXX";
  return mkdtemp(tmpl.data());
}

TEST(WitnessesTest, FindWitnessNamesARowOrNothing) {
  const WitnessRow* net = FindWitness("net");
  ASSERT_NE(net, nullptr);
  EXPECT_STREQ(net->name, "net");
  EXPECT_EQ(FindWitness("no-such-witness"), nullptr);
}

TEST(WitnessesTest, Sha256OfKnownInput) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(WitnessesTest, RandomHexIsRandomAndSized) {
  std::string a = RandomHex(16), b = RandomHex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

TEST(WitnessesTest, CanaryFileHoldsContentMatchingItsHashAndIsRemoved) {
  std::string dir = TempDir();
  std::string path;
  {
    auto canary = CanaryFile::Plant(dir);
    ASSERT_TRUE(canary.ok()) << canary.status().message();
    path = canary->path();
    std::ifstream in(path);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_EQ(Sha256Hex(content.str()), canary->sha256());
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

TEST(WitnessesTest, CanaryEnvSecretHasPrefixAndHash) {
  CanaryEnvSecret secret = CanaryEnvSecret::Make();
  EXPECT_EQ(secret.name.rfind(std::string(kCanaryEnvPrefix), 0), 0u);
  EXPECT_EQ(secret.sha256, Sha256Hex(secret.token));
  EXPECT_NE(secret.token, CanaryEnvSecret::Make().token);
}

TEST(WitnessesTest, FindsOnlyThisNoncesLeftovers) {
  std::string dir = TempDir();
  std::ofstream(dir + "/.sandprobe-n1-0") << "x";
  std::ofstream(dir + "/.sandprobe-n2-0") << "x";
  std::ofstream(dir + "/other") << "x";
  auto found = FindProbeLeftovers(dir, "n1");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], dir + "/.sandprobe-n1-0");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sandprobe
