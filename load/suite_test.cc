#include "load/suite.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

const std::string kDir = SANDPROBE_SOURCE_DIR "/load/testdata/load/";
const FamilyCatalog kFamilies = {
    {"fs.alias", {VariantKind::kOneOf, {"symlink", "dotdot", "proc_root"}}},
    {"fs.read", {}},
    {"fs.write", {}},
    {"net.unix", {VariantKind::kAbsolutePaths, {}}},
};

TEST(SuiteTest, LoadsEntries) {
  StatusOr<Suite> s = LoadSuite(kDir + "suite_default.json", kFamilies);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "default");
  EXPECT_EQ(s->description, "File system reads and aliases.");
  EXPECT_EQ(s->source_path, kDir + "suite_default.json");
  ASSERT_EQ(s->entries.size(), 2u);
  EXPECT_EQ(s->entries[0].family, "fs.read");
  EXPECT_TRUE(s->entries[0].variants.empty());
  EXPECT_EQ(s->entries[0].pointer, "/families/0");
  EXPECT_EQ(s->entries[1].family, "fs.alias");
  EXPECT_EQ(s->entries[1].variants, (std::vector<std::string>{"symlink", "dotdot", "proc_root"}));
  EXPECT_EQ(s->entries[1].pointer, "/families/1");
  EXPECT_EQ(s->raw["name"], "default");
}

std::string SuiteError(const std::string& families) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      "{\"name\": \"s\", \"description\": \"d\",\n\"families\": " + families + "}", "s.json");
  if (!doc.ok()) return "parse: " + doc.status().message();
  StatusOr<Suite> s = ParseSuite(*doc, kFamilies);
  return s.ok() ? "ok" : s.status().message();
}

TEST(SuiteTest, UnknownFamilyListsKnownOnes) {
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read"}, {"family": "fs.raed"}])"),
            "s.json:2:48: /families/1/family: unknown family \"fs.raed\" (known: fs.alias, "
            "fs.read, fs.write, net.unix)");
}

TEST(SuiteTest, DuplicatesAreErrors) {
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read"}, {"family": "fs.read"}])"),
            "s.json:2:48: /families/1/family: duplicate family \"fs.read\" (first at /families/0)");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.alias", "variants": ["dotdot", "dotdot"]}])"),
            "s.json:2:60: /families/0/variants/1: duplicate of /families/0/variants/0");
}

TEST(SuiteTest, ShapeErrors) {
  EXPECT_EQ(SuiteError("[]"), "s.json:2:13: /families: must list at least one family");
  EXPECT_EQ(SuiteError("{}"), "s.json:2:13: /families: expected array of objects, got object");
  EXPECT_EQ(SuiteError(R"(["fs.read"])"), "s.json:2:14: /families/0: expected object, got string");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read", "params": {}}])"),
            "s.json:2:36: /families/0/params: unknown key (known: family, variants)");
  EXPECT_EQ(SuiteError(R"([{"variants": []}])"),
            "s.json:2:14: /families/0/family: missing required field");
}

TEST(ValidateFileTest, TellsKindsApart) {
  EXPECT_EQ(ValidateFile(kDir + "suite_default.json", kFamilies).value(), "suite default");
  EXPECT_EQ(ValidateFile(kDir + "policy_full.json", kFamilies).value(), "policy tier-test");
  EXPECT_EQ(ValidateFile(kDir + "profile_session.json", kFamilies).value(),
            "profile docker-session");
  EXPECT_EQ(ValidateFile(kDir + "profile_oneshot.json", kFamilies).value(),
            "profile docker-hardened (policy tier-test)");
}

TEST(ValidateFileTest, ReportsErrorsOfTheFileAndOfTheProfilesPolicy) {
  EXPECT_EQ(ValidateFile(kDir + "policy_bad_pids.json", kFamilies).status().message(),
            kDir + "policy_bad_pids.json:6:13: /limits/pids: expected integer, got string");
  EXPECT_EQ(ValidateFile(kDir + "profile_bad_policy.json", kFamilies).status().message(),
            kDir + "profile_bad_policy.json:5:13: /policy: " + kDir +
                "policy_bad_pids.json:6:13: /limits/pids: expected integer, got string");
  EXPECT_EQ(ValidateFile(kDir + "missing.json", kFamilies).status().message(),
            "open(" + kDir + "missing.json): No such file or directory");
}

// Variants are checked against the family's own rule when the suite loads: an unknown one used
// to become an inconclusive check at run time, a relative net.unix path a run failure with no
// file or position.
TEST(SuiteVariantsTest, EachFamilyAllowsOnlyItsOwnVariants) {
  EXPECT_EQ(SuiteError(R"([{"family": "fs.alias", "variants": ["symlink", "proc_root"]}])"), "ok");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.alias", "variants": ["symlink", "hardlink"]}])"),
            "s.json:2:61: /families/0/variants/1: unknown variant \"hardlink\" of fs.alias "
            "(known: symlink, dotdot, proc_root)");
  EXPECT_EQ(SuiteError(R"([{"family": "net.unix", "variants": ["/run/x.sock"]}])"), "ok");
  EXPECT_EQ(SuiteError(R"([{"family": "net.unix", "variants": ["/run/a.sock", "run/x.sock"]}])"),
            "s.json:2:65: /families/0/variants/1: a net.unix variant must be an absolute path, "
            "got \"run/x.sock\"");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read", "variants": ["symlink"]}])"),
            "s.json:2:48: /families/0/variants: family \"fs.read\" takes no variants");
  // An empty list means "all" for every family, as before.
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read", "variants": []}])"), "ok");
}

TEST(SuiteVariantsTest, NulInAVariantOrFamilyIsRefused) {
  EXPECT_EQ(SuiteError(R"([{"family": "net.unix", "variants": ["/run/x.sock\u0000/y"]}])"),
            "s.json:2:50: /families/0/variants/0: contains a NUL character (\\u0000): it would "
            "cut the string short at run time");
  EXPECT_EQ(SuiteError(R"([{"family": "fs.read\u0000"}])"),
            "s.json:2:25: /families/0/family: contains a NUL character (\\u0000): it would cut "
            "the string short at run time");
}

// A temp directory of this test's own, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    std::string base = testing::TempDir();
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    std::string pattern = base + "/sandprobe_suite_XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    for (const std::string& f : files_) ::unlink((path_ + "/" + f).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string Fifo(const std::string& name) {
    files_.push_back(name);
    std::string p = path_ + "/" + name;
    return ::mkfifo(p.c_str(), 0600) == 0 ? p : "mkfifo failed: " + std::string(std::strerror(errno));
  }
  std::string File(const std::string& name, const std::string& text) {
    files_.push_back(name);
    std::ofstream(path_ + "/" + name) << text;
    return path_ + "/" + name;
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// `sandprobe validate` on a FIFO (directly, or as a profile's policy) returns an error at once;
// a blocking open would hang here forever.
TEST(ValidateFileTest, FifoIsRefusedNotWaitedFor) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string fifo = dir.Fifo("suite.json");
  ASSERT_EQ(fifo, dir.path() + "/suite.json");
  EXPECT_EQ(ValidateFile(fifo, kFamilies).status().message(),
            fifo + ": is a FIFO, not a regular file");
  EXPECT_EQ(LoadSuite(fifo, kFamilies).status().message(),
            fifo + ": is a FIFO, not a regular file");
  std::string policy = dir.Fifo("policy.json");
  std::string profile = dir.File("profile.json", R"({"name": "p", "description": "d",
  "backend": "host", "policy": "policy.json", "lifecycle": "oneshot", "injection": "host-path",
  "probe_path": "{probe_dir}/sandprobe-probe", "run": ["{probe}", "{probe_args...}"]})");
  EXPECT_EQ(ValidateFile(profile, kFamilies).status().message(),
            profile + ":2:32: /policy: " + policy + ": is a FIFO, not a regular file");
}


Suite ParsedSuite(const std::string& name, const std::string& families) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(
      "{\"name\": \"" + name + "\", \"description\": \"d\", \"families\": " + families + "}", name + ".json");
  EXPECT_TRUE(doc.ok());
  StatusOr<Suite> s = ParseSuite(*doc, kFamilies);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

TEST(SuiteTest, MergeUnitesFamiliesOnceInFirstSeenOrder) {
  Suite a = ParsedSuite("a", R"([{"family": "fs.read"}, {"family": "fs.alias", "variants": ["symlink"]}])");
  Suite b = ParsedSuite("b", R"([{"family": "fs.write"}, {"family": "fs.alias", "variants": ["dotdot", "symlink"]},
                                 {"family": "fs.read"}])");
  StatusOr<Suite> merged = MergeSuites({a, b}, kFamilies);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->name, "a+b");
  EXPECT_EQ(merged->names, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(merged->entries.size(), 3u);
  EXPECT_EQ(merged->entries[0].family, "fs.read");
  EXPECT_EQ(merged->entries[1].family, "fs.alias");
  EXPECT_EQ(merged->entries[1].variants, (std::vector<std::string>{"symlink", "dotdot"}));
  EXPECT_EQ(merged->entries[1].pointer, "a.json:/families/1") << "names the file it came from";
  EXPECT_EQ(merged->entries[2].family, "fs.write");
  // Its raw form is a suite file of its own that loads back to the same families (a recorded
  // run's plan keeps it for `sandprobe report`).
  StatusOr<JsonDocument> doc = JsonDocument::Parse(merged->raw.dump(), "merged.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  StatusOr<Suite> back = ParseSuite(*doc, kFamilies);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, "a.b");
  ASSERT_EQ(back->entries.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->entries[i].family, merged->entries[i].family);
    EXPECT_EQ(back->entries[i].variants, merged->entries[i].variants);
  }
}

TEST(SuiteTest, MergeWithAnEntryOfAllVariantsIsAllVariants) {
  Suite a = ParsedSuite("a", R"([{"family": "fs.alias", "variants": ["symlink"]}])");
  Suite b = ParsedSuite("b", R"([{"family": "fs.alias"}])");
  for (const auto& pair : {std::vector<Suite>{a, b}, std::vector<Suite>{b, a}}) {
    StatusOr<Suite> merged = MergeSuites(pair, kFamilies);
    ASSERT_TRUE(merged.ok());
    ASSERT_EQ(merged->entries.size(), 1u);
    EXPECT_TRUE(merged->entries[0].variants.empty()) << merged->name;
  }
}

TEST(SuiteTest, MergeOfExtraPathsKeepsBothLists) {
  // net.unix's variants are sockets to try besides the policy's: none is none extra, not all.
  Suite a = ParsedSuite("a", R"([{"family": "net.unix", "variants": ["/run/a.sock"]}])");
  Suite b = ParsedSuite("b", R"([{"family": "net.unix"}])");
  Suite c = ParsedSuite("c", R"([{"family": "net.unix", "variants": ["/run/c.sock", "/run/a.sock"]}])");
  StatusOr<Suite> merged = MergeSuites({a, b, c}, kFamilies);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->entries.size(), 1u);
  EXPECT_EQ(merged->entries[0].variants, (std::vector<std::string>{"/run/a.sock", "/run/c.sock"}));
}

TEST(SuiteTest, MergeOfOneIsTheSuiteAndOfNoneAnError) {
  Suite a = ParsedSuite("a", R"([{"family": "fs.read"}])");
  StatusOr<Suite> one = MergeSuites({a}, kFamilies);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->name, "a");
  EXPECT_EQ(one->names, (std::vector<std::string>{"a"}));
  EXPECT_EQ(one->entries[0].pointer, "/families/0");
  EXPECT_FALSE(MergeSuites({}, kFamilies).ok());
}

}  // namespace
}  // namespace sandprobe
