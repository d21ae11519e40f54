// fs.storage's judge with hand-made facts: a write that went through counts by what the mount
// is (the host's directory, the sandbox's own layer), never by its path; the sandbox's private
// memory filesystems and the declared-writable directories never count; a table or walk cut at
// its ceiling leaves a pass unproven.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/family_fs.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

constexpr const char* kId = "fs.storage.undeclared-writable";

Plan StoragePlan(const Policy& policy = testing::TierLowPolicy()) {
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.storage"}),
                           PlanContext{"/var/tmp/sp/canary.txt", "/workspace", {}});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : Plan{};
}

json Tried(int id, const std::string& point, const std::string& dev, const std::string& fstype, const std::string& root = "/") {
  return {{"family", "fs.storage"}, {"variant", "id:" + std::to_string(id)}, {"mount_id", id}, {"dev", dev},
          {"mountinfo_ro", false}, {"path", point}, {"root", root}, {"fstype", fstype},
          {"ok", false}, {"errno", "EACCES"}, {"tried", 1}, {"walk_truncated", false}};
}

json Wrote(json fact, const std::string& at) {
  fact["ok"] = true;
  fact["at"] = at;
  fact.erase("errno");
  return fact;
}

json Summary(bool truncated = false) {
  return {{"family", "fs.storage"}, {"variant", "summary"}, {"path", ""}, {"ok", true}, {"mounts", 4},
          {"tried", 9}, {"truncated", truncated}, {"exe_dev", "254:0"}, {"exe_ino", 77}};
}

// docker-hardened: read-only overlay root, private tmpfs /dev/shm (writable), declared /tmp.
std::vector<json> Hardened() {
  json root = Tried(1, "/", "0:39", "overlay");
  root["errno"] = "EROFS";
  root["mountinfo_ro"] = true;
  json tmp = {{"family", "fs.storage"}, {"variant", "id:3"}, {"mount_id", 3}, {"dev", "0:48"}, {"mountinfo_ro", false},
              {"path", "/tmp"}, {"root", "/"}, {"fstype", "tmpfs"}, {"skipped", "declared-writable"}};
  return {root, Tried(2, "/dev", "0:43", "tmpfs"), Wrote(Tried(4, "/dev/shm", "0:47", "tmpfs"), "/dev/shm"), tmp, Summary()};
}

// The host's own mounts (host_mounts witness): its root and /srv/data on 254:0, its /dev/shm
// tmpfs, and the probe handed in as 254:0 inode 77.
WitnessFacts Witness() {
  WitnessFacts w{"/var/tmp/sp/canary.txt", std::string(64, 'c'), std::string(64, 'e')};
  json mounts = json::array({{{"id", 27}, {"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"fstype", "ext4"}},
                             {{"id", 51}, {"dev", "0:25"}, {"root", "/"}, {"mount_point", "/dev/shm"}, {"fstype", "tmpfs"}}});
  json handed = json::array({{{"what", "probe"}, {"path", "/build/probe/sandprobe-probe"}, {"kind", "file"}, {"dev", "254:0"}, {"ino", 77}}});
  w.observed["host_mounts"] = {{"mounts", mounts}, {"unstable", 0}, {"critical", json::object()}, {"handed_in", handed}};
  return w;
}

Verdict Judged(const std::vector<json>& facts, const WitnessFacts& w = Witness(), const Plan& plan = StoragePlan()) {
  // The summary counts the mount lines listed (list_counts.h): tests add lines, the count follows.
  int mounts = 0;
  for (const json& f : facts) mounts += f.value("variant", "") != "summary";
  BatchResult r;
  r.state = BatchResult::State::kRan;
  r.launch_id = "L1";
  r.frames.facts = facts;
  for (json& f : r.frames.facts) {
    if (f.value("variant", "") == "summary") f["mounts"] = mounts;
  }
  r.frames.done = true;
  r.complete = true;
  for (const Verdict& v : Evaluate(plan, {r}, w)) {
    if (v.check.id == kId) return v;
  }
  ADD_FAILURE() << "no verdict " << kId;
  return {};
}

TEST(FamilyFsStorageTest, PlansOneCheckWithTheWritableListAsArguments) {
  Plan plan = StoragePlan();
  ASSERT_EQ(plan.checks.size(), 1u);
  EXPECT_EQ(plan.checks[0].id, kId);
  EXPECT_EQ(plan.checks[0].resolved_target, "/workspace\n/tmp");
}

TEST(FamilyFsStorageTest, PrivateMemoryFilesystemsDoNotCount) {
  Verdict v = Judged(Hardened());
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("/dev/shm (mount /dev/shm, tmpfs dev 0:47): the sandbox's own memory filesystem"),
            std::string::npos) << v.observed;
}

TEST(FamilyFsStorageTest, TheSandboxsOwnRootLayerCountsWhereverTheWriteLanded) {
  auto facts = Hardened();
  facts[0] = Wrote(Tried(1, "/", "0:39", "overlay"), "/var/tmp");
  Verdict v = Judged(facts);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.direction, Direction::kTooPermissive);
  EXPECT_EQ(v.check.severity, Severity::kMedium);
  EXPECT_NE(v.observed.find("/var/tmp (mount /, overlay dev 0:39): the sandbox's own storage"), std::string::npos)
      << v.observed;
  // A tmpfs is told apart by its type, not its path: the same write at /var/tmp on a private
  // tmpfs does not count; nor on a VM's initramfs root (rootfs: a ramfs or tmpfs instance).
  facts[0]["fstype"] = "tmpfs";
  EXPECT_EQ(Judged(facts).outcome, Outcome::kPass);
  facts[0]["fstype"] = "rootfs";
  EXPECT_EQ(Judged(facts).outcome, Outcome::kPass);
  facts[0]["fstype"] = "9p";  // gVisor's gofer root, a VM's host share: storage
  EXPECT_EQ(Judged(facts).outcome, Outcome::kFail);
}

TEST(FamilyFsStorageTest, WhereContentIsPromisedToSurviveIsDeclaredWritable) {
  Policy policy = testing::TierLowPolicy();
  policy.persistence.survives_turns = testing::Paths({"/var/tmp", "/tmp"}, "survives_turns");
  Plan plan = StoragePlan(policy);
  ASSERT_EQ(plan.checks.size(), 1u);
  EXPECT_EQ(plan.checks[0].resolved_target, "/workspace\n/tmp\n/var/tmp");  // once each
  auto facts = Hardened();
  facts[0] = Wrote(Tried(1, "/", "0:39", "overlay"), "/var/tmp");
  EXPECT_EQ(Judged(facts, Witness(), plan).outcome, Outcome::kPass);
  EXPECT_EQ(Judged(facts).outcome, Outcome::kFail);
}

TEST(FamilyFsStorageTest, AHostDirectoryCountsHighEvenWhenItIsATmpfs) {
  auto facts = Hardened();
  facts.insert(facts.end() - 1, Wrote(Tried(7, "/cache", "254:0", "ext4", "/srv/data"), "/cache/x"));
  Verdict v = Judged(facts);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kHigh);
  EXPECT_NE(v.observed.find("the host's directory /srv/data"), std::string::npos) << v.observed;
  // The host's own /dev/shm bound in: a tmpfs, but the host's (same device as the host's mount).
  facts = Hardened();
  facts[2]["dev"] = "0:25";
  v = Judged(facts);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("the host's directory /dev/shm"), std::string::npos) << v.observed;
  // Device numbers another kernel reports name no host mount: the same facts are the sandbox's
  // own tmpfs when the probe's executable is not the host's file.
  facts.back()["exe_ino"] = 78;
  EXPECT_EQ(Judged(facts).outcome, Outcome::kPass);
}

TEST(FamilyFsStorageTest, AWriteUnderTheWritableListNeverCounts) {
  auto facts = Hardened();
  facts[0] = Wrote(Tried(1, "/", "0:39", "overlay"), "/workspace/sub");
  EXPECT_EQ(Judged(facts).outcome, Outcome::kPass);
}

TEST(FamilyFsStorageTest, AMountLineTheSummaryCountsButTheListLacksIsAnError) {
  auto facts = Hardened();
  facts.erase(facts.begin());  // the root's line (its write) dropped from the stream
  BatchResult r;
  r.state = BatchResult::State::kRan;
  r.launch_id = "L1";
  r.frames.facts = facts;
  r.frames.done = true;
  r.complete = true;
  const std::vector<Verdict> verdicts = Evaluate(StoragePlan(), {r}, Witness());
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome, Outcome::kError) << verdicts[0].observed;
  EXPECT_NE(verdicts[0].observed.find("mount lines"), std::string::npos) << verdicts[0].observed;
}

TEST(FamilyFsStorageTest, ACutTableOrWalkOrNoTableIsInconclusive) {
  auto facts = Hardened();
  facts.back() = Summary(/*truncated=*/true);
  EXPECT_EQ(Judged(facts).outcome, Outcome::kInconclusive);
  facts = Hardened();
  facts[1]["walk_truncated"] = true;
  Verdict v = Judged(facts);
  EXPECT_EQ(v.outcome, Outcome::kInconclusive);
  EXPECT_NE(v.observed.find("cut at its ceiling in /dev"), std::string::npos) << v.observed;
  facts = Hardened();
  facts.pop_back();
  EXPECT_EQ(Judged(facts).outcome, Outcome::kInconclusive);
  // A counted write is a fail whatever was left unseen.
  facts = Hardened();
  facts[0] = Wrote(Tried(1, "/", "0:39", "overlay"), "/var/tmp");
  facts.back() = Summary(/*truncated=*/true);
  EXPECT_EQ(Judged(facts).outcome, Outcome::kFail);
}

}  // namespace
}  // namespace sandprobe
