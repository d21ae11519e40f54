// persist: what survives from one launch to the next — files in the usual writable places and
// the policy's own paths, and a detached background process.
//
// One suite entry becomes up to three launches, in order (one exclusive family, so nothing else
// runs in between):
//   plant    persist.plant: the token into every location, and a background process;
//            check persist.host:background-process (the process must not be left on the host)
//   turn     persist.check --keep, same sandbox instance (session profiles only): an agent's
//            next command; checks persist.turn.{survives,ephemeral}:<location>
//   session  persist.check, in a fresh instance: persist.session.{survives,ephemeral}:<location>
// Both directions: a location the policy says survives and that lost the token is
// too-restrictive; one that kept it against the policy is too-permissive. A location the
// policy does not name is ephemeral (default-deny).

#include <fmt/format.h>

#include "families/family.h"
#include "model/policy_enums.h"
#include "model/check_id.h"

namespace sandprobe {
namespace {

constexpr char kBackground[] = "background-process";
// Long enough to be alive at the turn check; the run's witness ends it anyway at the end.
constexpr char kBackgroundSeconds[] = "120";
// Where tokens go besides the policy's paths ("@home"/"@cwd": as the sandbox sets them).
const char* const kStandardLocations[] = {"/tmp", "@home", "/dev/shm", "/var/tmp", "@cwd"};

enum class Scope { kNone, kTurns, kSessions };

struct Location {
  std::string arg;     // what the probe gets: a path or @home/@cwd
  std::string target;  // the policy's text, placeholders kept
  Scope survives = Scope::kNone;
  PolicyRef reference;
};

StatusOr<std::vector<Location>> Locations(const ExpandInput& in) {
  std::vector<Location> out;
  const PersistencePolicy& p = in.policy.persistence;
  for (const auto& [list, scope] : {std::pair{&p.survives, Scope::kSessions},
                                    std::pair{&p.survives_turns, Scope::kTurns},
                                    std::pair{&p.ephemeral, Scope::kNone}}) {
    for (const PolicyPath& path : *list) {
      StatusOr<std::string> resolved = ResolvePolicyPath(path, in);
      if (!resolved.ok()) return resolved.status();
      out.push_back({NormalizedPath(*resolved), path.path, scope, path.ref});
    }
  }
  for (const char* standard : kStandardLocations) {
    bool listed = false;
    for (const Location& l : out) listed = listed || l.arg == standard;
    if (!listed) {
      PolicyRef not_listed = in.policy.Ref("/persistence");
      not_listed.words = "not listed (ephemeral)";
      out.push_back({standard, standard, Scope::kNone, std::move(not_listed)});
    }
  }
  return out;
}

Scope BackgroundScope(BackgroundProcesses declared) {
  switch (declared) {
    case BackgroundProcesses::kSurvive: return Scope::kSessions;
    case BackgroundProcesses::kSurviveTurns: return Scope::kTurns;
    case BackgroundProcesses::kDie: return Scope::kNone;
  }
  return Scope::kNone;
}

// A check of one location (or the background process) in the turn or session launch.
Check LocationCheck(const Location& l, const std::string& when) {
  Check check;
  check.family = "persist";
  bool survives = when == "turn" ? l.survives != Scope::kNone : l.survives == Scope::kSessions;
  // "persist.session.ephemeral:/tmp", "persist.turn.survives:workspace"
  check.id = PlaceholderFreeId(fmt::format("persist.{}.{}:{}", when, survives ? "survives" : "ephemeral", l.target));
  check.variant = when;
  check.expect = survives ? Expectation::kAllowed : Expectation::kDenied;
  check.target = l.target;
  check.resolved_target = l.arg;
  check.reference = l.reference;
  check.severity = Severity::kMedium;
  return check;
}

void AddCheckArgs(BatchBuilder& batch, const std::string& family, const std::string& token,
                  const std::vector<Location>& locations, bool keep) {
  std::vector<std::string>& args = batch.Invocation(family).args;
  args.insert(args.end(), {"--token", token});
  if (keep) args.push_back("--keep");
  if (family == "persist.plant") args.insert(args.end(), {"--background-seconds", kBackgroundSeconds});
  for (const Location& l : locations) args.push_back(l.arg);
}

// persist.host: the planted background process must not be left on the host after the launch
// — unless the policy keeps background processes AND shares the host's pid namespace (a plain
// shell session on the host): then being on the host is what it declared, and the check only
// asks that a background process could be started at all (it is the plant launch's check).
Status AddHostCheck(const ExpandInput& in, BatchBuilder& batch) {
  const bool on_host_by_design =
      in.policy.persistence.background_processes != BackgroundProcesses::kDie &&
      in.policy.host.pid_namespace == NamespaceSharing::kShared;
  Check host;
  host.family = "persist";
  host.id = "persist.host:background-process";
  host.variant = "host";
  host.expect = on_host_by_design ? Expectation::kAllowed : Expectation::kDenied;
  host.target = kBackground;
  host.resolved_target = kBackground;
  host.reference = in.policy.persistence.background_processes == BackgroundProcesses::kDie
                       ? PolicyRef::InWords("a background process must stay inside the sandbox")
                       : in.policy.Ref("/host/pid_namespace");
  host.severity = Severity::kHigh;
  return batch.AddCheck(std::move(host));
}

Status ExpandPersist(const ExpandInput& in, BatchBuilder& batch) {
  auto token = in.context.values.find("persist.token");
  if (token == in.context.values.end()) {
    return Status::Error("persist: the run started no persistence witness (no token)");
  }
  StatusOr<std::vector<Location>> locations = Locations(in);
  if (!locations.ok()) return locations.status();
  Location background{kBackground, kBackground,
                      BackgroundScope(in.policy.persistence.background_processes),
                      in.policy.Ref("/persistence/background_processes")};

  AddCheckArgs(batch, "persist.plant", token->second, *locations, false);
  const BackgroundProcesses declared = in.policy.persistence.background_processes;
  // Where the policy says the background process outlives the launch, the launcher must not
  // end it (it would, as any leftover): the later launches judge whether it survived.
  if (declared != BackgroundProcesses::kDie) batch.current().spare_processes_with_arg = token->second;
  if (Status s = AddHostCheck(in, batch); !s.ok()) return s;
  // One-shot: each launch is an instance of its own, so the plant and its check may run beside
  // other launches, one after the other (a session's fresh instance closes the shared one).
  if (!in.context.session) batch.current().overlap_chain = "persist";

  std::vector<std::string> phases;
  if (in.context.session) phases.push_back("turn");
  phases.push_back("session");
  for (const std::string& when : phases) {
    if (Status s = batch.StartLaunch(/*fresh_instance=*/when == "session"); !s.ok()) return s;
    AddCheckArgs(batch, "persist.check", token->second, *locations, when == "turn");
    for (const Location& l : *locations) {
      if (Status s = batch.AddCheck(LocationCheck(l, when)); !s.ok()) return s;
    }
    if (Status s = batch.AddCheck(LocationCheck(background, when)); !s.ok()) return s;
  }
  return Status::Ok();
}

// The plant launch (the first launch that ran persist.plant) and its facts.
const LaunchFacts* PlantLaunch(const JudgeInput& in) {
  if (in.launches == nullptr) return nullptr;
  for (const LaunchFacts& launch : *in.launches) {
    for (const ProbeInvocation& inv : launch.batch.invocations) {
      if (inv.family == "persist.plant") return &launch;
    }
  }
  return nullptr;
}

std::string Token(const JudgeInput& in) {
  auto it = in.witnesses.observed.find("persist");
  return it != in.witnesses.observed.end() ? it->second.value("token", "") : "";
}

// The planted background process runs the probe binary itself ("<...>/sandprobe-probe --nonce N
// persist.plant --token T ..."). A sandbox wrapper whose own argv holds the probe's arguments
// (bwrap, caught while its pid namespace is torn down) is not it.
bool IsPlantedProcess(const std::string& argv, const std::string& token) {
  std::string program = argv.substr(0, argv.find(' '));
  bool is_probe = program.size() >= 15 && program.compare(program.size() - 15, 15, "sandprobe-probe") == 0;
  return is_probe && !token.empty() && argv.find(" persist.plant ") != std::string::npos &&
         argv.find(" " + token) != std::string::npos;
}

// The fix for a background process that outlives the sandbox, per backend label (the profile's
// `backend`, recorded by the persist witness); a backend not listed gets the generic text.
struct BackgroundFix {
  Backend backend;
  const char* fix;
};
constexpr BackgroundFix kBackgroundFixes[] = {
    {Backend::kBwrap, "bwrap --unshare-pid --die-with-parent: the sandbox's own pid namespace, whose processes "
              "the kernel ends with its init"},
    {Backend::kDocker, "keep the container's own pid namespace (no --pid host), so docker ends every process "
               "with the container"},
    {Backend::kPodman, "keep the container's own pid namespace (no --pid host), so podman ends every process "
               "with the container"},
    {Backend::kGvisor, "keep the container's own pid namespace (no --pid host), so the sandbox's processes end "
               "with it"},
    {Backend::kFirejail, "firejail --deterministic-shutdown: end the sandbox's orphans when its first child exits "
                 "(without it, firejail waits for every process inside)"},
};
constexpr const char* kGenericBackgroundFix =
    "give the sandbox its own pid namespace that ends every process in it when the sandboxed "
    "command exits, not the host's";

std::string BackgroundRemedy(const JudgeInput& in) {
  auto it = in.witnesses.observed.find("persist");
  const std::optional<Backend> backend =
      ValueOf<Backend>(it != in.witnesses.observed.end() ? it->second.value("backend", "") : "");
  for (const BackgroundFix& f : kBackgroundFixes) {
    if (backend == f.backend) return f.fix;
  }
  return kGenericBackgroundFix;
}

// The policy keeps background processes in the host's own pid namespace: one must start.
Verdict JudgeHostBackgroundByDesign(const JudgeInput& in, Verdict v) {
  v.expected = "a background process starts and may stay on the host (host pid namespace shared, "
               "background processes kept)";
  v.remediation = "let the sandboxed command start a background process, or declare "
                  "persistence.background_processes \"die\"";
  std::optional<int> planted = in.facts.Find("persist.plant", kBackground);
  if (!planted) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no background process";
    return v;
  }
  v.evidence.frame_indexes.push_back(*planted);
  const nlohmann::json& fact = in.facts.Fact(*planted);
  v.observed = FactOk(fact) ? fmt::format("started (pid {}); left running as the policy declares", fact.value("pid", 0))
                            : "no background process could be started (" + DescribeFailure(fact) + ")";
  Judge(v, FactOk(fact), Direction::kTooRestrictive);
  return v;
}

Verdict JudgeHostBackground(const JudgeInput& in, Verdict v) {
  if (in.check.expect == Expectation::kAllowed) return JudgeHostBackgroundByDesign(in, std::move(v));
  v.expected = "the background process ends with the sandbox, never left running on the host";
  v.remediation = BackgroundRemedy(in);
  const std::string token = Token(in);
  std::vector<std::string> found;
  for (const std::string& argv : in.result.leftover_processes) {
    if (IsPlantedProcess(argv, token)) {
      found.push_back("left running after the launch, killed by the harness: " + argv);
    }
  }
  // A sandbox that waits for everything inside it (firejail) keeps the launch alive while the
  // background process lives; the harness's timeout ends both, and the sandbox's teardown kills
  // the process before any after-launch scan. The tree the launcher read at the timeout is the
  // host's own proof that it outlived the probe.
  const bool probe_finished = in.result.frames.done;
  for (const std::string& argv : in.result.alive_at_timeout) {
    if (probe_finished && IsPlantedProcess(argv, token)) {
      found.push_back("still running at the harness's timeout after the probe had finished, keeping "
                      "the sandbox alive: " + argv);
    }
  }
  auto seen = in.witnesses.observed.find("persist");
  if (seen != in.witnesses.observed.end() && seen->second.contains("processes")) {
    for (const nlohmann::json& p : seen->second["processes"]) {
      if (p.value("after_launch", "") == in.result.launch_id && p.value("host_pid_namespace", false) &&
          IsPlantedProcess(p.value("argv", ""), token)) {
        found.push_back(fmt::format("pid {} in the host's pid namespace after the launch ended",
                                    p.value("pid", 0)));
      }
    }
  }
  v.evidence.witness_facts = found;
  std::optional<int> planted = in.facts.Find("persist.plant", kBackground);
  if (!found.empty()) {
    v.observed = fmt::format("{}", fmt::join(found, "; "));
    Judge(v, false, Direction::kTooPermissive);
    return v;
  }
  if (!planted) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no background process";
    return v;
  }
  v.evidence.frame_indexes.push_back(*planted);
  const nlohmann::json& fact = in.facts.Fact(*planted);
  v.observed = FactOk(fact) ? fmt::format("started (pid {} inside); not on the host after the launch",
                                          fact.value("pid", 0))
                            : "no background process could be started (" + DescribeFailure(fact) + ")";
  Judge(v, true, Direction::kNone);
  return v;
}

Verdict JudgePersist(const JudgeInput& in) {
  Verdict v = StartVerdict(in);
  if (in.check.variant == "host") return JudgeHostBackground(in, std::move(v));
  const bool survives = in.check.expect == Expectation::kAllowed;
  const bool turn = in.check.variant == "turn";
  const bool background = in.check.resolved_target == kBackground;
  const std::string next = turn ? "the next turn (same instance)" : "a fresh instance";
  v.expected = fmt::format("{} {} in {}", background ? "background process" : "token file",
                           survives ? (background ? "alive" : "present") : "gone",
                           next);
  v.remediation = survives ? "keep this location across launches (e.g. a volume or bind mount), "
                             "or declare it ephemeral"
                           : background ? "end every process of a launch with it (one container "
                                          "per command, or stop the session's container)"
                                        : "give each launch (session) a fresh filesystem here "
                                          "(tmpfs, a new container), or declare that it survives";
  std::optional<int> mine = in.facts.Find("persist.check", in.check.resolved_target);
  if (!mine) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the check launch reported nothing for " + in.check.resolved_target;
    return v;
  }
  v.evidence.frame_indexes.push_back(*mine);
  const nlohmann::json& fact = in.facts.Fact(*mine);
  if (fact.contains("same_as")) {
    v.outcome = Outcome::kSkip;
    v.observed = fmt::format("{} is the same directory as {}; judged there",
                             in.check.resolved_target, fact.value("same_as", "?"));
    return v;
  }
  const LaunchFacts* plant = PlantLaunch(in);
  std::optional<int> planted =
      plant ? plant->facts.Find("persist.plant", in.check.resolved_target) : std::nullopt;
  if (!planted) {
    v.outcome = plant && plant->result.state != BatchResult::State::kRan ? Outcome::kError
                                                                          : Outcome::kInconclusive;
    v.observed = "the plant launch reported nothing for " + in.check.resolved_target +
                 (plant && !plant->result.reason.empty() ? " (" + plant->result.reason + ")" : "");
    return v;
  }
  const nlohmann::json& plant_fact = plant->facts.Fact(*planted);
  v.evidence.witness_facts.push_back(
      fmt::format("plant launch {}: {}", plant->result.launch_id,
                  FactOk(plant_fact) ? "planted" : DescribeFailure(plant_fact)));
  if (!FactOk(plant_fact)) {
    // Nothing could be put there: nothing can survive, and a promise to keep it is broken.
    v.observed = "could not be planted (" + DescribeFailure(plant_fact) + ")";
    Judge(v, !survives, Direction::kTooRestrictive);
    return v;
  }
  const bool present = fact.value("present", false);
  std::string where = fact.value("resolved", "");
  v.observed = fmt::format("{}{} in {}", present ? (background ? "alive" : "present") : "gone",
                           where.empty() ? "" : " (" + where + ")", next);
  if (background && present) v.observed += fmt::format(", pids {}", fact.value("pids", nlohmann::json::array()).dump());
  Judge(v, present == survives, survives ? Direction::kTooRestrictive : Direction::kTooPermissive);
  return v;
}

}  // namespace

std::vector<FamilyRow> PersistenceFamilies() {
  return {{"persist", ExpandPersist, JudgePersist, /*exclusive=*/true}};
}

}  // namespace sandprobe
