#include "mutate/mutation_operators.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

StatusOr<MutationOperatorFile> Parse(const std::string& text) {
  StatusOr<JsonDocument> doc = JsonDocument::Parse(text, "ops.json");
  if (!doc.ok()) return doc.status();
  return ParseMutationOperators(*doc);
}

// A file with one operator whose "edit" is `edit` (and `more` extra operator fields).
std::string OneOperator(const std::string& edit, const std::string& more = "") {
  return R"({"name": "x", "description": "d", "backends": ["docker"],
  "operators": [{"name": "op", "description": "why", )" + more + R"("edit": )" + edit + "}]}";
}

std::string Error(const std::string& text) {
  StatusOr<MutationOperatorFile> file = Parse(text);
  return file.ok() ? "ok" : file.status().message();
}

TEST(MutationOperatorsTest, ReadsEveryStepKind) {
  StatusOr<MutationOperatorFile> file = Parse(R"({
    "name": "docker", "description": "d", "backends": ["docker", "gvisor"],
    "operators": [
      {"name": "a", "description": "d", "edit": {"insert": {"after": "run", "args": ["--pid", "host"]}}},
      {"name": "b", "description": "d", "edit": [{"remove": {"flag": "--cap-drop", "values": 1, "match": "ALL"}},
                                                   {"replace_value": {"flag": "--memory", "to": "4g"}}]},
      {"name": "c", "description": "d", "edit": {"rewrite_value": {"flag": "--tmpfs", "regex": "size=[^,]*", "to": "size=1g"}}},
      {"name": "d", "description": "d", "edit": {"replace_arg": {"arg": "--unshare-all", "with": ["--unshare-pid"]}}},
      {"name": "e", "description": "d", "edit": {"remove_span": {"from": "setpriv", "until": "bwrap"}},
       "requires": [["true"]], "host_values": {"gid": ["stat", "-c", "%g", "/"]}},
      {"name": "f", "description": "d", "edit": {"set_field": {"field": "environment", "from": "empty", "to": "inherit"}}},
      {"name": "g", "description": "d", "edit": {"insert": {"before": "{probe}", "args": ["--bind", "/tmp", "/tmp"]}}}
    ]})");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->backends, (std::vector<Backend>{Backend::kDocker, Backend::kGvisor}));
  ASSERT_EQ(file->operators.size(), 7u);
  const auto& insert = std::get<InsertArgs>(file->operators[0].steps.at(0));
  EXPECT_EQ(insert.anchor, "run");
  EXPECT_FALSE(insert.before);
  EXPECT_EQ(insert.args, (std::vector<std::string>{"--pid", "host"}));
  ASSERT_EQ(file->operators[1].steps.size(), 2u);
  const auto& remove = std::get<RemoveFlag>(file->operators[1].steps[0]);
  EXPECT_EQ(remove.values, 1);
  EXPECT_EQ(remove.match, "ALL");
  EXPECT_EQ(std::get<ReplaceValue>(file->operators[1].steps[1]).to, "4g");
  EXPECT_EQ(std::get<RewriteValue>(file->operators[2].steps[0]).regex_text, "size=[^,]*");
  EXPECT_EQ(std::get<ReplaceArg>(file->operators[3].steps[0]).with, (std::vector<std::string>{"--unshare-pid"}));
  EXPECT_EQ(std::get<RemoveSpan>(file->operators[4].steps[0]).until, "bwrap");
  EXPECT_EQ(file->operators[4].requirements, (std::vector<std::vector<std::string>>{{"true"}}));
  EXPECT_EQ(file->operators[4].host_values.at("gid"), (std::vector<std::string>{"stat", "-c", "%g", "/"}));
  EXPECT_EQ(std::get<SetField>(file->operators[5].steps[0]).to, "inherit");
  EXPECT_TRUE(std::get<InsertArgs>(file->operators[6].steps[0]).before);
  EXPECT_EQ(file->operators[1].edit.size(), 2u);  // as written, for the report
  EXPECT_EQ(file->operators[0].where, "ops.json:4:7");
}

TEST(MutationOperatorsTest, ErrorsNameFileLineColumnAndPointer) {
  EXPECT_EQ(Error(OneOperator(R"({"insert": {"after": "run", "args": ["x"], "at": 3}})")),
            "ops.json:2:105: /operators/0/edit/insert/at: unknown key (known: after, before, args)");
  EXPECT_EQ(Error(OneOperator(R"({"grow": {}})")).substr(0, 50), "ops.json:2:63: /operators/0/edit/grow: unknown key");
  EXPECT_EQ(Error(OneOperator(R"({})")),
            "ops.json:2:62: /operators/0/edit: a step is an object with one key, its kind: insert, remove, "
            "replace_value, rewrite_value, replace_arg, remove_span, set_field");
  EXPECT_EQ(Error(OneOperator(R"({"remove": {"flag": "-a"}, "insert": {"after": "run", "args": ["x"]}})")),
            "ops.json:2:63: /operators/0/edit/remove: one kind per step, and this one is \"insert\" already");
  EXPECT_EQ(Error(OneOperator(R"({"insert": {"args": ["x"]}})")),
            "ops.json:2:73: /operators/0/edit/insert: needs exactly one of \"after\" and \"before\" (the anchor element)");
  EXPECT_EQ(Error(OneOperator(R"({"insert": {"after": "run", "before": "x", "args": ["x"]}})")),
            "ops.json:2:73: /operators/0/edit/insert: needs exactly one of \"after\" and \"before\" (the anchor element)");
  EXPECT_EQ(Error(OneOperator(R"({"insert": {"after": "run", "args": []}})")),
            "ops.json:2:98: /operators/0/edit/insert/args: must not be empty");
  EXPECT_EQ(Error(OneOperator(R"({"remove": {"flag": "--x", "match": "a*"}})")),
            "ops.json:2:98: /operators/0/edit/remove/match: a flag without values has nothing to match (set \"values\")");
  EXPECT_EQ(Error(OneOperator(R"({"remove": {"flag": "--x", "values": 4}})")).substr(0, 55),
            "ops.json:2:99: /operators/0/edit/remove/values: must be");
  EXPECT_EQ(Error(OneOperator(R"({"rewrite_value": {"flag": "--x", "regex": "(", "to": ""}})")).substr(0, 80),
            "ops.json:2:105: /operators/0/edit/rewrite_value/regex: not an ECMAScript regex: ");
  EXPECT_EQ(Error(OneOperator(R"({"set_field": {"field": "run", "from": 1, "to": 2}})")),
            "ops.json:2:86: /operators/0/edit/set_field/field: \"run\" cannot be set (argvs have their own "
            "steps; the name is the mutant's)");
  EXPECT_EQ(Error(OneOperator(R"({"set_field": {"field": "timeout_seconds", "from": 1}})")),
            "ops.json:2:76: /operators/0/edit/set_field/to: missing (the field's value before and after)");
  EXPECT_EQ(Error(OneOperator(R"({"set_field": {"field": "a", "from": 1, "to": 1}})")),
            "ops.json:2:108: /operators/0/edit/set_field/to: equals \"from\": the step would change nothing");
  EXPECT_EQ(Error(OneOperator(R"([])")), "ops.json:2:62: /operators/0/edit: must not be empty");
  EXPECT_EQ(Error(OneOperator(R"("--pid host")")),
            "ops.json:2:62: /operators/0/edit: expected a step (object) or an array of steps, got string");
  EXPECT_EQ(Error(OneOperator(R"({"remove": {"flag": "-a"}})", R"("host_values": {"1x": ["true"]}, )")),
            "ops.json:2:70: /operators/0/host_values/1x: a variable name must match [A-Za-z_][A-Za-z0-9_]*");
  EXPECT_EQ(Error(OneOperator(R"({"remove": {"flag": "-a"}})", R"("requires": [[]], )")).substr(0, 44),
            "ops.json:2:67: /operators/0/requires/0: argv");
}

TEST(MutationOperatorsTest, RefusesBadFilesAsAWhole) {
  EXPECT_EQ(Error(R"({"name": "x", "description": "d", "backends": ["dockr"], "operators": []})"),
            "ops.json:1:48: /backends/0: unknown backend \"dockr\" (known: host, bwrap, docker, podman, firejail, "
            "gvisor, other)");
  EXPECT_EQ(Error(R"({"name": "x", "description": "d", "backends": ["bwrap", "bwrap"], "operators": []})"),
            "ops.json:1:57: /backends/1: \"bwrap\" is listed twice");
  EXPECT_EQ(Error(R"({"name": "x", "description": "d", "backends": ["bwrap"], "operators": []})"),
            "ops.json:1:71: /operators: must not be empty");
  EXPECT_EQ(Error(R"({"name": "x", "description": "d", "backends": ["bwrap"], "operators": [
      {"name": "a", "description": "d", "edit": {"remove": {"flag": "-a"}}},
      {"name": "a", "description": "d", "edit": {"remove": {"flag": "-b"}}}]})"),
            "ops.json:3:16: /operators/1/name: duplicate operator name \"a\" (also at /operators/0)");
  EXPECT_EQ(Error(R"({"name": "x", "description": "d", "backends": ["bwrap"], "operators": [], "extra": 1})"),
            "ops.json:1:75: /extra: unknown key (known: name, description, backends, operators)");
}

// The shipped files load, and each has the operators the issue asks for at least.
TEST(MutationOperatorsTest, ShippedFilesLoad) {
  const std::string dir = SANDPROBE_SOURCE_DIR "/sandboxes/mutations";
  StatusOr<MutationOperatorFile> docker = FindMutationOperators(dir, Backend::kDocker);
  ASSERT_TRUE(docker.ok()) << docker.status().message();
  EXPECT_GE(docker->operators.size(), 20u);
  StatusOr<MutationOperatorFile> gvisor = FindMutationOperators(dir, Backend::kGvisor);
  ASSERT_TRUE(gvisor.ok()) << gvisor.status().message();
  EXPECT_EQ(gvisor->source_path, docker->source_path);
  StatusOr<MutationOperatorFile> bwrap = FindMutationOperators(dir, Backend::kBwrap);
  ASSERT_TRUE(bwrap.ok()) << bwrap.status().message();
  EXPECT_GE(bwrap->operators.size(), 12u);
  StatusOr<MutationOperatorFile> firejail = FindMutationOperators(dir, Backend::kFirejail);
  ASSERT_TRUE(firejail.ok()) << firejail.status().message();
}

class OperatorDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sp-opdir-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& backends) {
    std::ofstream(dir_ + "/" + name) << R"({"name": "x", "description": "d", "backends": )" << backends
                                     << R"(, "operators": [{"name": "a", "description": "d", "edit": {"remove": {"flag": "-a"}}}]})";
  }
  std::string dir_;
};

TEST_F(OperatorDirTest, PicksTheFileOfTheProfilesBackend) {
  Write("a.json", R"(["docker"])");
  Write("b.json", R"(["bwrap"])");
  StatusOr<MutationOperatorFile> file = FindMutationOperators(dir_, Backend::kBwrap);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->source_path, dir_ + "/b.json");
  StatusOr<MutationOperatorFile> none = FindMutationOperators(dir_, Backend::kFirejail);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "no mutation operators for backend \"firejail\" in " + dir_ +
                                         " (it has operators for: bwrap, docker)");
}

TEST_F(OperatorDirTest, RefusesTwoFilesForOneBackendAndABrokenFile) {
  Write("a.json", R"(["docker"])");
  Write("b.json", R"(["docker", "podman"])");
  StatusOr<MutationOperatorFile> file = FindMutationOperators(dir_, Backend::kDocker);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(), "mutation operators: backend \"docker\" is served by both " + dir_ + "/a.json and " +
                                         dir_ + "/b.json");
  std::ofstream(dir_ + "/c.json") << "{";
  EXPECT_FALSE(FindMutationOperators(dir_, Backend::kBwrap).ok());
}

}  // namespace

TEST(MutationOperatorsTest, ReadsEquivalenceClaimsAndRefusesLooseOnes) {
  StatusOr<MutationOperatorFile> file = Parse(OneOperator(R"({"remove": {"flag": "-a"}})",
      R"("equivalent": [{"profile": "p", "holds_while": [["--user", "1000"]], "why": "no caps"}], )"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->operators[0].equivalences.size(), 1u);
  const EquivalenceClaim& claim = file->operators[0].equivalences[0];
  EXPECT_EQ(claim.profile, "p");
  EXPECT_EQ(claim.holds_while, (std::vector<std::vector<std::string>>{{"--user", "1000"}}));
  EXPECT_EQ(claim.why, "no caps");
  EXPECT_EQ(claim.where, "ops.json:2:69");
  auto with = [](const std::string& equivalent) {
    return Error(OneOperator(R"({"remove": {"flag": "-a"}})", R"("equivalent": )" + equivalent + ", "));
  };
  EXPECT_EQ(with(R"([{"profile": "p", "holds_while": [], "why": "w"}])"),
            "ops.json:2:101: /operators/0/equivalent/0/holds_while: must not be empty: name the profile's arguments the claim rests on");
  EXPECT_EQ(with(R"([{"profile": "p", "holds_while": [["a"]], "why": ""}])").substr(0, 52),
            "ops.json:2:117: /operators/0/equivalent/0/why: must ");
  EXPECT_EQ(with(R"([{"profile": "p", "holds_while": [["a"]]}])").substr(0, 52),
            "ops.json:2:69: /operators/0/equivalent/0/why: missin");
  EXPECT_EQ(with(R"([])"), "ops.json:2:68: /operators/0/equivalent: must not be empty (leave the key out)");
  EXPECT_EQ(with(R"([{"profile": "p", "holds_while": [["a"]], "why": "w"}, {"profile": "p", "holds_while": [["a"]], "why": "w"}])"),
            "ops.json:2:135: /operators/0/equivalent/1/profile: profile \"p\" has a claim already (at ops.json:2:69)");
}

}  // namespace sandprobe
