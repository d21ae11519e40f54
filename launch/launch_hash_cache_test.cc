#include "launch/launch_hash_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/launch_executable.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";  // sha256("abc")

class HashCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sp-hashcache-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    cache_ = dir_ + "/cache.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::trunc) << content;
    return path;
  }
  static struct stat Stat(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_, cache_;
};

// Found only for the file as it was when hashed: a write changes its ctime, and the entry is
// no longer found.
TEST_F(HashCacheTest, AHashIsFoundForTheSameFileUntilTheFileChanges) {
  const std::string tool = Write("tool", "abc");
  EXPECT_FALSE(FindPersistedHash(cache_, Stat(tool)));
  PersistHash(cache_, Stat(tool), tool, kAbc);
  EXPECT_EQ(FindPersistedHash(cache_, Stat(tool)), std::optional<std::string>(kAbc));
  EXPECT_EQ((Stat(cache_).st_mode & 0777), 0644u);
  Write("tool", "abd");  // same inode, same size, new bytes
  EXPECT_FALSE(FindPersistedHash(cache_, Stat(tool)));
}

// /var/tmp is anyone's: a cache someone else could have written is neither believed nor
// replaced, and a link is never followed or written through.
TEST_F(HashCacheTest, ACacheSomeoneElseCouldWriteIsIgnoredAndLeftAlone) {
  const std::string tool = Write("tool", "abc");
  PersistHash(cache_, Stat(tool), tool, kAbc);
  const std::string written = Read(cache_);
  const std::string other = Write("other", "xyz");

  ASSERT_EQ(::chmod(cache_.c_str(), 0664), 0);  // group-writable
  EXPECT_FALSE(FindPersistedHash(cache_, Stat(tool)));
  PersistHash(cache_, Stat(other), other, kAbc);
  EXPECT_EQ(Read(cache_), written);
  ASSERT_EQ(::chmod(cache_.c_str(), 0644), 0);

  const std::string link = dir_ + "/link.json";
  ASSERT_EQ(::symlink(cache_.c_str(), link.c_str()), 0);
  EXPECT_FALSE(FindPersistedHash(link, Stat(tool)));
  PersistHash(link, Stat(other), other, kAbc);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(cache_), written);

  if (::geteuid() == 0) {  // only root can give a file away
    ASSERT_EQ(::chown(cache_.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(FindPersistedHash(cache_, Stat(tool)));
    PersistHash(cache_, Stat(other), other, kAbc);
    EXPECT_EQ(Read(cache_), written);
  }
}

// What is not a cache this version wrote gives no hash; being ours, it is replaced.
TEST_F(HashCacheTest, GarbageGivesNoHashAndIsReplaced) {
  const std::string tool = Write("tool", "abc");
  const struct stat st = Stat(tool);
  PersistHash(cache_, st, tool, kAbc);
  const std::string key = nlohmann::json::parse(Read(cache_))["hashes"].begin().key();
  for (const std::string& garbage :
       {std::string("{not json"), std::string("[]"), std::string(R"({"schema": "other/1", "hashes": {}})"),
        std::string(R"({"schema": 1, "hashes": {}})"),
        nlohmann::json{{"schema", "sandprobe-executable-sha256/1"}, {"hashes", {{key, {{"sha256", "ABC"}}}}}}.dump(),
        nlohmann::json{{"schema", "sandprobe-executable-sha256/1"}, {"hashes", {{key, {{"sha256", 7}}}}}}.dump(),
        nlohmann::json{{"schema", "sandprobe-executable-sha256/1"}, {"hashes", {{key, "x"}}}}.dump()}) {
    Write("cache.json", garbage);
    EXPECT_FALSE(FindPersistedHash(cache_, st)) << garbage;
  }
  PersistHash(cache_, st, tool, kAbc);
  EXPECT_EQ(FindPersistedHash(cache_, st), std::optional<std::string>(kAbc));
}

TEST_F(HashCacheTest, TheCacheStartsOverPastItsBound) {
  for (std::size_t i = 0; i < kMaxPersistedHashes; ++i) {
    const std::string file = Write("f" + std::to_string(i), "abc");
    PersistHash(cache_, Stat(file), file, kAbc);
  }
  EXPECT_EQ(nlohmann::json::parse(Read(cache_))["hashes"].size(), kMaxPersistedHashes);
  const std::string last = Write("last", "abc");
  PersistHash(cache_, Stat(last), last, kAbc);
  EXPECT_EQ(nlohmann::json::parse(Read(cache_))["hashes"].size(), 1u);
  EXPECT_TRUE(FindPersistedHash(cache_, Stat(last)));
}

// A big executable's hash is kept in the run root's cache, and a later process would take it
// from there: seeded with another (well-formed) value, that value is what comes back.
TEST_F(HashCacheTest, TheLaunchHashIsKeptInTheRunRootAndTakenFromThere) {
  const char* old = std::getenv("SANDPROBE_RUN_ROOT");
  const std::string saved = old ? old : "";
  ASSERT_EQ(::setenv("SANDPROBE_RUN_ROOT", dir_.c_str(), 1), 0);
  EXPECT_EQ(PersistedHashesPath(), dir_ + "/sandprobe.executable-sha256.json");
  const std::string big = Write("big", std::string(kPersistHashFromBytes, 'a'));
  StatusOr<std::string> hashed = ExecutableSha256(big);
  ASSERT_TRUE(hashed.ok()) << hashed.status().message();
  // hashlib.sha256(b"a" * 1024 * 1024)
  EXPECT_EQ(*hashed, "9bc1b2a288b26af7257a36277ae3816a7d4f16e89c1e7e77d0a5c48bad62b360");
  EXPECT_EQ(FindPersistedHash(PersistedHashesPath(), Stat(big)), *hashed);

  const std::string fresh = Write("fresh", std::string(kPersistHashFromBytes, 'b'));
  const std::string seeded(64, 'e');
  PersistHash(PersistedHashesPath(), Stat(fresh), fresh, seeded);
  StatusOr<std::string> taken = ExecutableSha256(fresh);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(*taken, seeded);

  // A small one is hashed by every run and not kept: looking it up would cost as much.
  const std::string tool = Write("tool", "abc");
  StatusOr<std::string> small = ExecutableSha256(tool);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, kAbc);
  EXPECT_FALSE(FindPersistedHash(PersistedHashesPath(), Stat(tool)));
  if (old) ::setenv("SANDPROBE_RUN_ROOT", saved.c_str(), 1);
  else ::unsetenv("SANDPROBE_RUN_ROOT");
}

}  // namespace
}  // namespace sandprobe
