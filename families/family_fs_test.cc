// Judges of the filesystem families with hand-made facts: a canary's hash anywhere fails the
// canary checks; a decoy over a denied path passes and says so, while the host's own content
// or object fails; mount_root hits are weighed the same way; fs.mounts flags a host root or
// host disk bound in, but not docker's single-file binds or a sandbox whose "/" is the host's;
// fs.write never calls a mount read-write when a source says ro.
#include <gtest/gtest.h>

#include "families/evaluate.h"
#include "families/family_fs.h"
#include "families/test_policies.h"

namespace sandprobe {
namespace {

using nlohmann::json;

const std::string kCanary = "/var/tmp/sp/canary.txt";
const std::string kCanarySha(64, 'c');
const std::string kShadowSha(64, 's');
const std::string kEmptySha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Plan FsPlan(std::map<std::string, std::string> values = {}) {
  Policy policy = testing::TierLowPolicy();
  policy.filesystem.unreadable = testing::Paths({"/etc/shadow", "/root", "{host_canary}"}, "unreadable");
  Suite suite = testing::SuiteOf({"fs.read", "fs.write", "fs.alias", "fs.mounts"});
  PlanContext context{kCanary, "/workspace", std::move(values)};
  auto plan = ExpandChecks(policy, suite, context);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : Plan{};
}

json Denied(const std::string& family, const std::string& path, const std::string& variant = "") {
  json f = {{"family", family}, {"path", path}, {"ok", false}, {"step", "open"}, {"errno", "EACCES"}};
  if (!variant.empty()) f["variant"] = variant;
  return f;
}

json Mount(int id, const std::string& point, const std::string& dev, const std::string& root,
           const std::string& source = "/dev/vda", const std::string& kind = "dir") {
  return {{"family", "fs.mounts"}, {"variant", "id:" + std::to_string(id)}, {"path", point},
          {"mount_id", id}, {"dev", dev}, {"root", root}, {"source", source},
          {"mount_options", "rw"}, {"super_options", "rw"}, {"fstype", "ext4"}, {"kind", kind}, {"ino", 1000 + id}};
}

// A sandbox that shows nothing denied: overlay root, docker's /etc/hosts bind from the host disk.
std::vector<json> TightFacts() {
  std::vector<json> f;
  for (const char* p : {"/workspace", "/tmp"}) {
    f.push_back({{"family", "fs.read"}, {"path", p}, {"ok", true}, {"kind", "dir"}, {"entries", 0}, {"sha256", kEmptySha}});
    f.push_back({{"family", "fs.write"}, {"path", p}, {"ok", true}, {"ro_mount", false}});
  }
  for (const std::string& p : {std::string("/etc/shadow"), std::string("/root"), kCanary}) {
    f.push_back(Denied("fs.read", p));
    for (const char* v : {"symlink", "dotdot", "proc_root"}) f.push_back(Denied("fs.alias", p, v));
    f.push_back({{"family", "fs.alias"}, {"path", p}, {"variant", "mount_root"}, {"ok", false},
                 {"tried", 4}, {"mounts", 3}, {"hits", json::array()}});
  }
  f.push_back({{"family", "fs.write"}, {"path", "/etc"}, {"ok", false}, {"step", "open"}, {"errno", "EROFS"}, {"ro_mount", true}});
  f.push_back(Mount(1, "/", "0:50", "/", "overlay"));
  f.push_back(Mount(2, "/etc/hosts", "254:0", "/var/lib/docker/containers/abc/hosts", "/dev/vda", "file"));
  f.push_back(Mount(3, "/workspace", "254:0", "/var/tmp/sandprobe-x/workspace"));
  f.back()["ino"] = 70;  // the workspace the harness handed in
  f.push_back({{"family", "fs.mounts"}, {"variant", "summary"}, {"path", ""}, {"ok", true}, {"mounts", 3}, {"truncated", false},
               {"exe_dev", "254:0"}, {"exe_ino", 77}});
  return f;
}

// The host's mount table as the host_mounts witness records it: its root and /var/lib/docker on
// 254:0, /boot on its own disk, /proc and a tmpfs; the probe handed in as inode 77.
json HostMounts() {
  json mounts = json::array({{{"id", 27}, {"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"fstype", "ext4"}},
                             {{"id", 42}, {"dev", "254:0"}, {"root", "/var/lib/docker"}, {"mount_point", "/var/lib/docker"}, {"fstype", "ext4"}},
                             {{"id", 50}, {"dev", "259:1"}, {"root", "/"}, {"mount_point", "/boot"}, {"fstype", "vfat"}},
                             {{"id", 22}, {"dev", "0:21"}, {"root", "/"}, {"mount_point", "/proc"}, {"fstype", "proc"}},
                             {{"id", 51}, {"dev", "0:25"}, {"root", "/"}, {"mount_point", "/dev/shm"}, {"fstype", "tmpfs"}}});
  json critical = json::object();
  int ino = 100;
  for (const CriticalHostDir& dir : CriticalHostDirs()) {
    critical[dir.path] = {{"ok", true}, {"kind", "dir"}, {"dev", std::string(dir.path) == "/proc" ? "0:21" : "254:0"},
                          {"ino", ino++}, {"entries", 12}, {"truncated", false},
                          {"sha256", std::string(64, static_cast<char>('a' + ino % 16))}};
  }
  json handed = json::array({{{"what", "workspace"}, {"path", "/var/tmp/sandprobe-x/workspace"}, {"kind", "dir"}, {"dev", "254:0"}, {"ino", 70}},
                             {{"what", "probe_dir"}, {"path", "/build/probe"}, {"kind", "dir"}, {"dev", "254:0"}, {"ino", 76}},
                             {{"what", "probe"}, {"path", "/build/probe/sandprobe-probe"}, {"kind", "file"}, {"dev", "254:0"}, {"ino", 77}}});
  return {{"mounts", mounts}, {"unstable", 0}, {"critical", critical}, {"handed_in", handed}};
}

WitnessFacts Witness() {
  WitnessFacts w{kCanary, kCanarySha, std::string(64, 'e')};
  w.observed["host_paths"] = {
      {"paths", {{"/etc/shadow", {{"ok", true}, {"kind", "file"}, {"bytes", 631}, {"sha256", kShadowSha}, {"dev", "254:0"}, {"ino", 11}}},
                 {"/root", {{"ok", true}, {"kind", "dir"}, {"entries", 0}, {"sha256", kEmptySha}, {"dev", "254:0"}, {"ino", 12}}}}},
      {"root", {{"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"source", "/dev/vda"}}},
      {"block_mounts", json::array({{{"dev", "254:0"}, {"root", "/"}, {"mount_point", "/"}, {"source", "/dev/vda"}},
                                    {{"dev", "259:1"}, {"root", "/"}, {"mount_point", "/boot"}, {"source", "/dev/nvme0n1p1"}}})}};
  w.observed["host_mounts"] = HostMounts();
  return w;
}

BatchResult Ran(std::vector<json> facts) {
  // The probe's mount summary counts the mount lines it listed (list_counts.h): tests add and
  // remove lines, the count follows them.
  int mounts = 0;
  for (const json& f : facts) mounts += f.value("family", "") == "fs.mounts" && f.value("variant", "") != "summary";
  for (json& f : facts) {
    if (f.value("family", "") == "fs.mounts" && f.value("variant", "") == "summary") f["mounts"] = mounts;
  }
  BatchResult r;
  r.state = BatchResult::State::kRan;
  r.launch_id = "L1";
  r.frames.facts = std::move(facts);
  r.frames.done = true;
  r.complete = true;
  return r;
}

json& FactOf(std::vector<json>& facts, const std::string& family, const std::string& path,
             const std::string& variant = "") {
  for (json& f : facts) {
    if (f["family"] == family && f.value("path", "") == path && f.value("variant", "") == variant) return f;
  }
  ADD_FAILURE() << "no fact " << family << " " << path << " " << variant;
  static json none;
  return none;
}

Verdict Judged(const std::vector<json>& facts, const std::string& id, const WitnessFacts& w = Witness(),
               const Plan& plan = FsPlan()) {
  for (const Verdict& v : Evaluate(plan, {Ran(facts)}, w)) {
    if (v.check.id == id) return v;
  }
  ADD_FAILURE() << "no verdict " << id;
  return {};
}

TEST(FamilyFsTest, TightSandboxPassesEveryCheck) {
  for (const Verdict& v : Evaluate(FsPlan(), {Ran(TightFacts())}, Witness())) {
    EXPECT_EQ(v.outcome, Outcome::kPass) << v.check.id << ": " << v.observed;
  }
}

TEST(FamilyFsTest, CanaryHashInAnotherFactFailsEveryCanaryCheck) {
  auto facts = TightFacts();
  // A lying sandbox (or a probe of another family) prints the real canary hash elsewhere.
  facts.push_back({{"family", "env.secret"}, {"note", "x " + kCanarySha}});
  int index = static_cast<int>(facts.size()) - 1;
  for (const char* id : {"fs.read.denied:host-canary", "fs.alias.denied:host-canary[symlink]",
                         "fs.alias.denied:host-canary[mount_root]"}) {
    Verdict v = Judged(facts, id);
    EXPECT_EQ(v.outcome, Outcome::kFail) << id << ": " << v.observed;
    EXPECT_EQ(v.direction, Direction::kTooPermissive);
    EXPECT_NE(v.observed.find("frame " + std::to_string(index)), std::string::npos) << v.observed;
    EXPECT_NE(std::find(v.evidence.frame_indexes.begin(), v.evidence.frame_indexes.end(), index),
              v.evidence.frame_indexes.end());
  }
  EXPECT_EQ(Judged(facts, "fs.read.denied:/etc/shadow").outcome, Outcome::kPass);
}

TEST(FamilyFsTest, CanaryHashInASecondFactForTheSameKeyFails) {
  auto facts = TightFacts();
  json second = {{"family", "fs.read"}, {"path", kCanary}, {"ok", true}, {"kind", "file"}, {"bytes", 55}, {"sha256", kCanarySha}};
  facts.push_back(second);
  EXPECT_EQ(Judged(facts, "fs.read.denied:host-canary").outcome, Outcome::kFail);
}

TEST(FamilyFsTest, CanaryHashInAnotherLaunchFails) {
  Plan plan = FsPlan();
  SplitSharedLaunch(plan, 1);
  LaunchBatch other{.id = "B9"};
  plan.batches.push_back(other);
  BatchResult leak = Ran({{{"family", "x"}, {"sha256", kCanarySha}}});
  leak.launch_id = "L9";
  for (const Verdict& v : Evaluate(plan, {Ran(TightFacts()), leak}, Witness())) {
    if (v.check.id != "fs.read.denied:host-canary") continue;
    EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
    EXPECT_NE(v.observed.find("launch B9"), std::string::npos) << v.observed;
  }
}

// The host's own watch of its canary (witness_canary_watch.h) decides over the probe's word.
WitnessFacts Watched(json opens, json changes, bool watched = true) {
  WitnessFacts w = Witness();
  w.observed["canary_watch"] = {{"path", kCanary}, {"watched", watched}, {"opens", std::move(opens)},
                                {"changes", std::move(changes)}, {"verified", 3}};
  if (!watched) w.observed["canary_watch"]["error"] = "inotify_init1: Too many open files";
  return w;
}

TEST(FamilyFsTest, AnOpenTheHostSawFailsTheCanaryWhateverTheProbeSaid) {
  // The probe (or a launcher rewriting its frames) reports EACCES for every canary path.
  const WitnessFacts w = Watched({{{"after_launch", "L1"}, {"count", 1}}}, json::array());
  for (const char* id : {"fs.read.denied:host-canary", "fs.alias.denied:host-canary[symlink]"}) {
    Verdict v = Judged(TightFacts(), id, w);
    EXPECT_EQ(v.outcome, Outcome::kFail) << id << ": " << v.observed;
    EXPECT_EQ(v.direction, Direction::kTooPermissive);
    EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
    EXPECT_NE(v.observed.find("the host saw its canary opened: after launch L1: 1 open(s)"), std::string::npos)
        << v.observed;
  }
  EXPECT_EQ(Judged(TightFacts(), "fs.read.denied:/etc/shadow", w).outcome, Outcome::kPass);
}

TEST(FamilyFsTest, AChangedCanaryIsACriticalWriteToTheHost) {
  const WitnessFacts w = Watched(json::array(), {{{"after_launch", "L1"}, {"what", "gone from its path"}}});
  Verdict v = Judged(TightFacts(), "fs.read.denied:host-canary", w);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kCritical);
  EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
  EXPECT_NE(v.observed.find("after launch L1: gone from its path: a write to the host"), std::string::npos)
      << v.observed;
}

TEST(FamilyFsTest, ADenialTheWatchConfirmsIsWitnessedAndOneWithoutAWatchIsReported) {
  Verdict v = Judged(TightFacts(), "fs.read.denied:host-canary", Watched(json::array(), json::array()));
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
  EXPECT_NE(v.observed.find("saw no open of its canary and re-verified it intact 3 times"), std::string::npos);
  v = Judged(TightFacts(), "fs.read.denied:host-canary");  // an older report: no watch
  EXPECT_EQ(v.outcome, Outcome::kPass);
  EXPECT_EQ(v.tier(), EvidenceTier::kReported);
  v = Judged(TightFacts(), "fs.read.denied:host-canary", Watched(json::array(), json::array(), false));
  EXPECT_EQ(v.outcome, Outcome::kPass);
  EXPECT_EQ(v.tier(), EvidenceTier::kReported);
  EXPECT_NE(v.observed.find("the host could not watch its canary (inotify_init1"), std::string::npos);
}

// A canary planted in a host directory the profile mounts (canaries_in) is watched too: its
// watch rides in the mounted_canaries witness, found by the check's label.
TEST(FamilyFsTest, AMountedCanaryIsJudgedByItsOwnWatch) {
  Policy policy = testing::TierLowPolicy();
  PlanContext context{kCanary, "/workspace", {{"mounted_canaries.count", "1"},
                                              {"mounted_canaries.0.label", "/srv/data"},
                                              {"mounted_canaries.0.inside", "/data/sandprobe-canary-x"}}};
  StatusOr<Plan> plan = ExpandChecks(policy, testing::SuiteOf({"fs.read"}), context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto facts = TightFacts();
  facts.push_back({{"family", "fs.read"}, {"path", "/data/sandprobe-canary-x"}, {"ok", false}, {"step", "open"}, {"errno", "EACCES"}});
  auto judged = [&](const json& watch) {
    WitnessFacts w = Witness();
    w.observed["mounted_canaries"] = json::array({{{"label", "/srv/data"}, {"host_path", "/srv/data/sandprobe-canary-x"},
                                                   {"inside_path", "/data/sandprobe-canary-x"},
                                                   {"sha256", std::string(64, 'c')}, {"watch", watch}}});
    for (Verdict& v : Evaluate(*plan, {Ran(facts)}, w)) {
      if (v.check.id == "fs.read.denied:mounted-canary:/srv/data") return v;
    }
    ADD_FAILURE() << "no mounted canary check";
    return Verdict{};
  };
  json quiet = {{"watched", true}, {"opens", json::array()}, {"changes", json::array()}, {"verified", 2}};
  Verdict v = judged(quiet);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed << " tier " << static_cast<int>(v.tier());
  EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
  json opened = quiet;
  opened["opens"] = json::array({{{"after_launch", "L1"}, {"count", 2}}});
  v = judged(opened);
  EXPECT_EQ(v.outcome, Outcome::kFail) << "the probe said EACCES; the host saw the open: " << v.observed;
  EXPECT_EQ(v.tier(), EvidenceTier::kWitnessed);
  json changed = quiet;
  changed["changes"] = json::array({{{"after_launch", "L1"}, {"what", "gone from its path"}}});
  v = judged(changed);
  EXPECT_EQ(v.check.severity, Severity::kCritical) << v.observed;
}

TEST(FamilyFsTest, ZeroByteDecoyOverShadowPassesAndSaysDecoy) {
  auto facts = TightFacts();
  FactOf(facts, "fs.read", "/etc/shadow") = {{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", true},
                                              {"kind", "file"}, {"bytes", 0}, {"sha256", kEmptySha}, {"dev", "0:99"}, {"ino", 5}};
  Verdict v = Judged(facts, "fs.read.denied:/etc/shadow");
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("decoy"), std::string::npos) << v.observed;
}

TEST(FamilyFsTest, HostContentOrHostObjectFails) {
  auto facts = TightFacts();
  json& shadow = FactOf(facts, "fs.read", "/etc/shadow");
  shadow = {{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", true}, {"kind", "file"}, {"bytes", 631}, {"sha256", kShadowSha}};
  Verdict v = Judged(facts, "fs.read.denied:/etc/shadow");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("matches the host's content"), std::string::npos) << v.observed;
  // Other bytes, but the very host inode: the host's object (e.g. read mid-rewrite) -> fail.
  shadow["sha256"] = std::string(64, '0');
  shadow["dev"] = "254:0";
  shadow["ino"] = 11;
  EXPECT_EQ(Judged(facts, "fs.read.denied:/etc/shadow").outcome, Outcome::kFail);
}

TEST(FamilyFsTest, EmptyTmpfsOverAnEmptyHostDirIsToldApartByDevice) {
  auto facts = TightFacts();
  json& root = FactOf(facts, "fs.read", "/root");
  root = {{"family", "fs.read"}, {"path", "/root"}, {"ok", true}, {"kind", "dir"}, {"entries", 0},
          {"sha256", kEmptySha}, {"dev", "0:77"}, {"ino", 1}};
  Verdict v = Judged(facts, "fs.read.denied:/root");
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("decoy"), std::string::npos);
  // The host's own (empty) directory: the same object -> fail.
  root["dev"] = "254:0";
  root["ino"] = 12;
  EXPECT_EQ(Judged(facts, "fs.read.denied:/root").outcome, Outcome::kFail);
  // Nothing to tell them apart: a weak match still fails, and says it is weak.
  root.erase("dev");
  root.erase("ino");
  v = Judged(facts, "fs.read.denied:/root");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.observed.find("weak"), std::string::npos) << v.observed;
}

TEST(FamilyFsTest, PathTheHostLacksIsTheSandboxsOwn) {
  auto facts = TightFacts();
  WitnessFacts w = Witness();
  w.observed["host_paths"]["paths"]["/etc/shadow"] = {{"ok", false}, {"step", "open"}, {"errno", "ENOENT"}};
  FactOf(facts, "fs.read", "/etc/shadow") = {{"family", "fs.read"}, {"path", "/etc/shadow"}, {"ok", true},
                                              {"kind", "file"}, {"bytes", 9}, {"sha256", kShadowSha}};
  Verdict v = Judged(facts, "fs.read.denied:/etc/shadow", w);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  // Without any host witness the read counts, as before.
  w.observed.erase("host_paths");
  EXPECT_EQ(Judged(facts, "fs.read.denied:/etc/shadow", w).outcome, Outcome::kFail);
}

TEST(FamilyFsTest, MountRootHitWithTheCanaryFails) {
  auto facts = TightFacts();
  FactOf(facts, "fs.alias", kCanary, "mount_root") = {
      {"family", "fs.alias"}, {"path", kCanary}, {"variant", "mount_root"}, {"ok", true}, {"tried", 6}, {"mounts", 3},
      {"hits", json::array({{{"via", "/host" + kCanary}, {"ok", true}, {"kind", "file"}, {"bytes", 55}, {"sha256", kCanarySha}}})}};
  Verdict v = Judged(facts, "fs.alias.denied:host-canary[mount_root]");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.observed.find("/host" + kCanary), std::string::npos) << v.observed;
  // And, the hash being anywhere, the direct read of the canary fails with it.
  EXPECT_EQ(Judged(facts, "fs.read.denied:host-canary").outcome, Outcome::kFail);
}

TEST(FamilyFsTest, MountRootHitOfTheSandboxsOwnFileIsNotALeak) {
  auto facts = TightFacts();
  FactOf(facts, "fs.alias", "/etc/shadow", "mount_root") = {
      {"family", "fs.alias"}, {"path", "/etc/shadow"}, {"variant", "mount_root"}, {"ok", true}, {"tried", 6}, {"mounts", 3},
      {"hits", json::array({{{"via", "/tmp/etc/shadow"}, {"ok", true}, {"kind", "file"}, {"bytes", 3}, {"sha256", std::string(64, '1')}}})}};
  Verdict v = Judged(facts, "fs.alias.denied:/etc/shadow[mount_root]");
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("decoy"), std::string::npos) << v.observed;
}

TEST(FamilyFsTest, HostRootBoundElsewhereIsCritical) {
  auto facts = TightFacts();
  facts.insert(facts.end() - 1, Mount(9, "/host", "254:0", "/"));
  Verdict v = Judged(facts, "fs.mounts.host-root-bind");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kCritical);
  EXPECT_NE(v.observed.find("/host"), std::string::npos);
  EXPECT_EQ(Judged(facts, "fs.mounts.host-block-device").outcome, Outcome::kPass);
}

TEST(FamilyFsTest, SandboxWhoseRootIsTheHostsIsNotABind) {
  auto facts = TightFacts();
  FactOf(facts, "fs.mounts", "/", "id:1") = Mount(1, "/", "254:0", "/");
  facts.insert(facts.end() - 1, Mount(8, "/boot", "259:1", "/"));  // the host's own /boot, inherited
  Verdict v = Judged(facts, "fs.mounts.host-root-bind");
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("is the host's own"), std::string::npos) << v.observed;
  EXPECT_EQ(Judged(facts, "fs.mounts.host-block-device").outcome, Outcome::kPass);
}

TEST(FamilyFsTest, HostDiskBoundElsewhereFails) {
  auto facts = TightFacts();
  facts.insert(facts.end() - 1, Mount(9, "/data", "259:1", "/", "/dev/whatever"));
  Verdict v = Judged(facts, "fs.mounts.host-block-device");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("/dev/nvme0n1p1"), std::string::npos) << v.observed;  // the host's name
  // A subdirectory of that disk is a directory bind, not the disk.
  FactOf(facts, "fs.mounts", "/data", "id:9")["root"] = "/grub";
  EXPECT_EQ(Judged(facts, "fs.mounts.host-block-device").outcome, Outcome::kPass);
}

TEST(FamilyFsTest, MountsWithoutHostTableOrProbeTableAreInconclusive) {
  WitnessFacts w = Witness();
  w.observed.erase("host_paths");
  EXPECT_EQ(Judged(TightFacts(), "fs.mounts.host-root-bind", w).outcome, Outcome::kInconclusive);
  auto facts = TightFacts();
  facts.pop_back();  // no summary
  EXPECT_EQ(Judged(facts, "fs.mounts.host-root-bind").outcome, Outcome::kInconclusive);
}

// A language runtime's permission model (Deno, Node) refusing the mount table is no mount
// namespace to judge: the fs.mounts checks skip and say why. The kernel's own EACCES (a
// mount namespace hiding /proc) stays inconclusive.
TEST(FamilyFsTest, AMountTableTheRuntimeRefusedIsNotExpressibleButTheKernelsRefusalIsInconclusive) {
  auto facts = TightFacts();
  json& summary = FactOf(facts, "fs.mounts", "", "summary");
  summary = {{"family", "fs.mounts"}, {"variant", "summary"}, {"path", ""}, {"ok", false}, {"step", "open"},
             {"errno", "EACCES"}, {"denied_by", "runtime-permission"}, {"runtime_error", "NotCapable"}};
  for (const char* id : {"fs.mounts.host-root-bind", "fs.mounts.host-dir:/etc", "fs.mounts.host-dirs"}) {
    Verdict v = Judged(facts, id);
    EXPECT_EQ(v.outcome, Outcome::kSkip) << id << ": " << v.observed;
    EXPECT_NE(v.observed.find("runtime's permission model refused /proc/self/mountinfo to the code it runs (NotCapable)"),
              std::string::npos) << v.observed;
  }
  summary.erase("denied_by");
  summary.erase("runtime_error");
  for (const char* id : {"fs.mounts.host-root-bind", "fs.mounts.host-dir:/etc", "fs.mounts.host-dirs"}) {
    EXPECT_EQ(Judged(facts, id).outcome, Outcome::kInconclusive) << id;
  }
}

TEST(FamilyFsTest, WriteWordingNeverCallsARoMountReadWrite) {
  auto facts = TightFacts();
  json& etc = FactOf(facts, "fs.write", "/etc");
  etc["ro_mount"] = false;
  etc["mountinfo_ro"] = true;
  etc["mount_point"] = "/";
  Verdict v = Judged(facts, "fs.write.denied:/etc");
  EXPECT_EQ(v.observed.find("mount is read-write"), std::string::npos) << v.observed;
  EXPECT_NE(v.observed.find("read-only mount: statvfs: read-write; mountinfo /: ro"), std::string::npos) << v.observed;
  etc["mountinfo_ro"] = false;
  EXPECT_NE(Judged(facts, "fs.write.denied:/etc").observed.find("mount is read-write"), std::string::npos);
}

TEST(FamilyFsTest, MountedCanaryIsJudgedByItsOwnHash) {
  const std::string inside = "/mnt/home/sandprobe-canary-00.txt";
  Plan plan = FsPlan({{"mounted_canaries.count", "1"}, {"mounted_canaries.0.label", "/root"},
                      {"mounted_canaries.0.inside", inside}});
  WitnessFacts w = Witness();
  w.observed["mounted_canaries"] = json::array({{{"label", "/root"}, {"inside_path", inside}, {"sha256", std::string(64, 'm')}}});
  auto facts = TightFacts();
  facts.push_back({{"family", "fs.read"}, {"path", inside}, {"ok", true}, {"kind", "file"}, {"bytes", 60}, {"sha256", std::string(64, 'm')}});
  Verdict v = Judged(facts, "fs.read.denied:mounted-canary:/root", w, plan);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  facts.back()["sha256"] = std::string(64, '2');  // another file at that path: not the canary
  EXPECT_EQ(Judged(facts, "fs.read.denied:mounted-canary:/root", w, plan).outcome, Outcome::kPass);
  w.observed.erase("mounted_canaries");  // no record of the canary's hash
  EXPECT_EQ(Judged(facts, "fs.read.denied:mounted-canary:/root", w, plan).outcome, Outcome::kInconclusive);
}

TEST(FamilyFsTest, CanaryThePolicyDeclaresReadableStaysAllowedWhenRead) {
  Policy policy = testing::TierLowPolicy();
  policy.filesystem.readable = testing::Paths({"{workspace}", "/tmp", "{host_canary}"}, "readable");
  policy.filesystem.unreadable = testing::Paths({"/etc/shadow", "/root"}, "unreadable");
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.read"}), PlanContext{kCanary, "/workspace", {}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto facts = TightFacts();
  FactOf(facts, "fs.read", kCanary) = {{"family", "fs.read"}, {"path", kCanary}, {"ok", true},
                                       {"kind", "file"}, {"bytes", 55}, {"sha256", kCanarySha}};
  // The canary's hash is in the launch (the read itself): what the policy promised, a pass.
  Verdict v = Judged(facts, "fs.read.allowed:host-canary", Witness(), *plan);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  // Unreadable although declared readable: too restrictive, as for any allowed path.
  FactOf(facts, "fs.read", kCanary) = Denied("fs.read", kCanary);
  v = Judged(facts, "fs.read.allowed:host-canary", Witness(), *plan);
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooRestrictive);
}

// ---- host directories (fs.mounts.host-dir:*, fs.mounts.host-dirs) ----

std::vector<json> WithMount(json mount) {
  auto facts = TightFacts();
  facts.insert(facts.end() - 1, std::move(mount));
  return facts;
}

TEST(FamilyFsTest, HostEtcBoundAnywhereFailsItsOwnCheck) {
  json etc = Mount(9, "/somewhere", "254:0", "/etc");
  etc["mount_options"] = "ro";
  auto facts = WithMount(etc);
  Verdict v = Judged(facts, "fs.mounts.host-dir:/etc");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kHigh);
  EXPECT_NE(v.observed.find("visible at /somewhere (a bind of host directory /etc"), std::string::npos) << v.observed;
  // Counted once, under /etc; the other checks hold.
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dirs").outcome, Outcome::kPass);
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/").outcome, Outcome::kPass);
  // A subdirectory of the host's /var holds /var/lib/docker: that check fails, where it appears.
  facts = WithMount(Mount(9, "/data", "254:0", "/var"));
  v = Judged(facts, "fs.mounts.host-dir:/var/lib/docker");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("/data/lib/docker"), std::string::npos) << v.observed;
}

TEST(FamilyFsTest, AnyOtherHostDirectoryNeedsTheReadableList) {
  // The host's /run (docker.sock's directory) at a path no list names: medium, high when rw.
  json run = Mount(9, "/anything", "254:0", "/run");
  run["mount_options"] = "ro,relatime";
  Verdict v = Judged(WithMount(run), "fs.mounts.host-dirs");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.check.severity, Severity::kMedium);
  EXPECT_NE(v.observed.find("/anything (a bind of host directory /run"), std::string::npos) << v.observed;
  run["mount_options"] = "rw";
  EXPECT_EQ(Judged(WithMount(run), "fs.mounts.host-dirs").check.severity, Severity::kHigh);
  // Under a path the policy declares readable (/tmp): declared, a pass. A named volume inside
  // the host's /var/lib/docker at the workspace too.
  EXPECT_EQ(Judged(WithMount(Mount(9, "/tmp/data", "254:0", "/srv/data")), "fs.mounts.host-dirs").outcome, Outcome::kPass);
  EXPECT_EQ(Judged(WithMount(Mount(9, "/workspace", "254:0", "/var/lib/docker/volumes/ws/_data")),
                   "fs.mounts.host-dirs").outcome, Outcome::kPass);
  EXPECT_EQ(Judged(WithMount(Mount(9, "/workspace", "254:0", "/var/lib/docker/volumes/ws/_data")),
                   "fs.mounts.host-dir:/var/lib/docker").outcome, Outcome::kPass);
}

TEST(FamilyFsTest, FilesHandedInDirsCgroupfsAndUnknownDevicesAreNoHostDirectories) {
  // A single host file (docker's /etc/hosts is one), the probe directory (by inode), the
  // sandbox's own cgroup subtree, a device the host's table does not hold (at both reads).
  for (json m : {Mount(9, "/x", "254:0", "/etc/shadow", "/dev/vda", "file"), Mount(9, "/opt/sandprobe", "254:0", "/elsewhere/probe"),
                 Mount(9, "/sys/fs/cgroup/pids", "0:36", "/docker/abc"), Mount(9, "/data", "0:99", "/")}) {
    if (m["path"] == "/opt/sandprobe") m["ino"] = 76;
    if (m["path"] == "/sys/fs/cgroup/pids") m["fstype"] = "cgroup";
    for (const char* id : {"fs.mounts.host-dirs", "fs.mounts.host-dir:/etc", "fs.mounts.host-dir:/"}) {
      Verdict v = Judged(WithMount(m), id);
      EXPECT_EQ(v.outcome, Outcome::kPass) << m.dump() << " " << id << ": " << v.observed;
    }
  }
}

TEST(FamilyFsTest, HostRootAtItsOwnPathFollowsTheReadableList) {
  auto facts = TightFacts();
  FactOf(facts, "fs.mounts", "/", "id:1") = Mount(1, "/", "254:0", "/");
  json proc = Mount(4, "/proc", "0:77", "/");  // the sandbox's own proc covers the host's
  proc["fstype"] = "proc";
  facts.insert(facts.end() - 1, proc);
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/").outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/etc").outcome, Outcome::kFail);
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/proc").outcome, Outcome::kPass);
  // A policy that declares / readable (srt, codex): the host's root at / is what it promised;
  // the same root at /host is not.
  Policy policy = testing::TierLowPolicy();
  policy.filesystem.readable = testing::Paths({"/", "{workspace}"}, "readable");
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.read", "fs.mounts"}), PlanContext{kCanary, "/workspace", {}});
  ASSERT_TRUE(plan.ok());
  Verdict v = Judged(facts, "fs.mounts.host-dir:/etc", Witness(), *plan);
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.observed;
  EXPECT_NE(v.observed.find("as the policy declares"), std::string::npos) << v.observed;
  facts.insert(facts.end() - 1, Mount(9, "/host", "254:0", "/"));
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/etc", Witness(), *plan).outcome, Outcome::kFail);
}

TEST(FamilyFsTest, AnotherKernelsDeviceNumbersCountOnlyByListing) {
  // The probe's executable is not the host's file, nor is the workspace: gVisor, a VM.
  auto facts = WithMount(Mount(9, "/somewhere", "254:0", "/etc"));
  FactOf(facts, "fs.mounts", "", "summary")["exe_ino"] = 5;
  FactOf(facts, "fs.mounts", "/workspace", "id:3")["ino"] = 6;
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dir:/etc").outcome, Outcome::kPass);
  Verdict v = Judged(facts, "fs.mounts.host-dir:/");
  EXPECT_EQ(v.outcome, Outcome::kSkip) << v.observed;
  EXPECT_EQ(Judged(facts, "fs.mounts.host-dirs").outcome, Outcome::kSkip);
  // The same listing as the host's /etc is the host's /etc, whatever the device says.
  FactOf(facts, "fs.mounts", "/somewhere", "id:9")["sha256"] = HostMounts()["critical"]["/etc"]["sha256"];
  v = Judged(facts, "fs.mounts.host-dir:/etc");
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_NE(v.observed.find("the same 12 names as the host's /etc"), std::string::npos) << v.observed;
}

TEST(FamilyFsTest, HostDirChecksWithoutTheHostTableAreInconclusive) {
  WitnessFacts w = Witness();
  w.observed.erase("host_mounts");
  EXPECT_EQ(Judged(TightFacts(), "fs.mounts.host-dir:/etc", w).outcome, Outcome::kInconclusive);
  w.observed["host_mounts"] = HostMounts();
  w.observed["host_mounts"]["mountinfo_error"] = "EACCES";
  EXPECT_EQ(Judged(TightFacts(), "fs.mounts.host-dirs", w).outcome, Outcome::kInconclusive);
}

// ---- identity, not path ----

TEST(FamilyFsTest, AReadOfTheHostsObjectUnderAnotherNameFails) {
  // /etc/shadow's host copy is missing (ENOENT), but what was read is the host's /etc itself.
  WitnessFacts w = Witness();
  const json etc = HostMounts()["critical"]["/etc"];
  const json missing = {{"ok", false}, {"step", "open"}, {"errno", "ENOENT"}};
  json got = {{"ok", true}, {"kind", "dir"}, {"entries", 3}, {"sha256", std::string(64, '9')}, {"dev", "254:0"}, {"ino", etc["ino"]}};
  ReadWeight weight = WeighRead(got, &missing, &w);
  EXPECT_TRUE(weight.leak) << weight.why;
  EXPECT_NE(weight.why.find("the host's /etc itself"), std::string::npos) << weight.why;
  // Without the witnesses: the old rule, the sandbox's own.
  EXPECT_FALSE(WeighRead(got, &missing).leak);
  // Another object with the host's /etc listing: the host's content.
  got["ino"] = 999999;
  got["sha256"] = etc["sha256"];
  got["entries"] = 12;
  weight = WeighRead(got, &missing, &w);
  EXPECT_TRUE(weight.leak) << weight.why;
  EXPECT_NE(weight.why.find("the same content as the host's /etc"), std::string::npos) << weight.why;
  // The host's /etc/shadow bytes under another name.
  json file = {{"ok", true}, {"kind", "file"}, {"bytes", 631}, {"sha256", kShadowSha}, {"dev", "0:99"}, {"ino", 4}};
  EXPECT_TRUE(WeighRead(file, &missing, &w).leak);
  // An empty file matches nothing.
  file["sha256"] = kEmptySha;
  file["bytes"] = 0;
  EXPECT_FALSE(WeighRead(file, &missing, &w).leak);
}

TEST(FamilyFsTest, DeniedPathShowingAHostDirectoryFailsTheRead) {
  Policy policy = testing::TierLowPolicy();
  policy.filesystem.unreadable = testing::Paths({"/hostetc", "{host_canary}"}, "unreadable");
  auto plan = ExpandChecks(policy, testing::SuiteOf({"fs.read"}), PlanContext{kCanary, "/workspace", {}});
  ASSERT_TRUE(plan.ok());
  WitnessFacts w = Witness();
  w.observed["host_paths"]["paths"]["/hostetc"] = {{"ok", false}, {"step", "open"}, {"errno", "ENOENT"}};
  auto facts = TightFacts();
  facts.push_back({{"family", "fs.read"}, {"path", "/hostetc"}, {"ok", true}, {"kind", "dir"}, {"entries", 12},
                   {"sha256", std::string(64, '7')}, {"dev", "254:0"}, {"ino", HostMounts()["critical"]["/etc"]["ino"]}});
  Verdict v = Judged(facts, "fs.read.denied:/hostetc", w, *plan);
  EXPECT_EQ(v.outcome, Outcome::kFail) << v.observed;
  EXPECT_EQ(v.observed.find("the sandbox's own"), std::string::npos) << v.observed;
}

// The harness's own disk: a workspace write that failed with ENOSPC while the harness's statvfs
// of the run root says full is an error, not "fail too-restrictive"; with room left, or for a
// path outside the workspace, the sandbox's verdict stands.
TEST(FamilyFsTest, AWorkspaceWriteFailingOnTheHarnesssFullDiskIsAnError) {
  auto facts = TightFacts();
  json& ws = FactOf(facts, "fs.write", "/workspace");
  ws["ok"] = false;
  ws["step"] = "write";
  ws["errno"] = "ENOSPC";
  WitnessFacts w = Witness();
  w.observed["run_root"] = {{"path", "/var/tmp/sandprobe-x/workspace"}, {"bytes_free", 0}, {"inodes_free", 10},
                            {"read_only", false}, {"full", true}, {"workspace_inside", "/workspace"}};
  Verdict v = Judged(facts, "fs.write.allowed:workspace", w);
  EXPECT_EQ(v.outcome, Outcome::kError) << v.observed;
  EXPECT_NE(v.observed.find("the harness's run root is full (/var/tmp/sandprobe-x/workspace: 0 bytes"),
            std::string::npos) << v.observed;
  EXPECT_NE(v.remediation.find("free space"), std::string::npos) << v.remediation;
  ws["errno"] = "EDQUOT";
  EXPECT_EQ(Judged(facts, "fs.write.allowed:workspace", w).outcome, Outcome::kError);
  // A sandbox's read-only workspace on a host filesystem that is not: the sandbox's fail.
  ws["errno"] = "EROFS";
  EXPECT_EQ(Judged(facts, "fs.write.allowed:workspace", w).outcome, Outcome::kFail);
  w.observed["run_root"]["read_only"] = true;
  EXPECT_EQ(Judged(facts, "fs.write.allowed:workspace", w).outcome, Outcome::kError);
  // Room on the run root: ENOSPC there is the sandbox's (its own small mount over /workspace).
  ws["errno"] = "ENOSPC";
  w.observed["run_root"]["full"] = false;
  v = Judged(facts, "fs.write.allowed:workspace", w);
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.direction, Direction::kTooRestrictive);
  // A full run root says nothing about /tmp.
  w.observed["run_root"]["full"] = true;
  json& tmp = FactOf(facts, "fs.write", "/tmp");
  tmp["ok"] = false;
  tmp["errno"] = "ENOSPC";
  EXPECT_EQ(Judged(facts, "fs.write.allowed:/tmp", w).outcome, Outcome::kFail);
}

}  // namespace
}  // namespace sandprobe
