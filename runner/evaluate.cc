#include "runner/evaluate.h"

#include <map>
#include <optional>

#include <fmt/format.h>

namespace sandprobe {
namespace {

using nlohmann::json;

// The facts of one launch, indexed the way checks look them up.
class FactIndex {
 public:
  explicit FactIndex(const ProbeFrames& frames) : frames_(frames) {
    for (std::size_t i = 0; i < frames.facts.size(); ++i) {
      const json& fact = frames.facts[i];
      if (!fact.is_object()) continue;
      std::string family = fact.value("family", "");
      if (family == "env.secret") {
        env_secret_.push_back(static_cast<int>(i));
        continue;
      }
      std::string path = fact.contains("path") && fact["path"].is_string() ? fact["path"].get<std::string>() : "";
      std::string variant = fact.contains("variant") && fact["variant"].is_string() ? fact["variant"].get<std::string>() : "";
      by_key_.emplace(Key(family, path, variant), static_cast<int>(i));  // first fact wins
    }
  }

  std::optional<int> Find(const std::string& family, const std::string& path,
                          const std::string& variant) const {
    auto it = by_key_.find(Key(family, path, variant));
    if (it == by_key_.end()) return std::nullopt;
    return it->second;
  }
  const json& Fact(int index) const { return frames_.facts[static_cast<std::size_t>(index)]; }
  const std::vector<int>& EnvSecretFacts() const { return env_secret_; }

 private:
  static std::string Key(const std::string& family, const std::string& path,
                         const std::string& variant) {
    return family + '\0' + path + '\0' + variant;
  }
  const ProbeFrames& frames_;
  std::map<std::string, int> by_key_;
  std::vector<int> env_secret_;
};

// Whether the probe showed it can do the allowed thing at all: deny results mean nothing when
// even allowed reads (writes) fail.
enum class Control { kPassed, kFailed, kAbsent };

struct BatchView {
  const BatchResult& result;
  const FactIndex& facts;
  Control read_control;
  Control write_control;
  const WitnessFacts& witnesses;
};

bool FactOk(const json& fact) { return fact.value("ok", false) == true; }

std::string DescribeFailure(const json& fact) {
  return fmt::format("{}: {}", fact.value("step", "open"), fact.value("errno", "unknown error"));
}

std::string DescribeRead(const json& fact, const WitnessFacts& witnesses) {
  if (!FactOk(fact)) return "read failed: " + DescribeFailure(fact);
  std::string sha = fact.value("sha256", "");
  if (fact.value("kind", "") == "dir") {
    return fmt::format("listed a directory of {} entries", fact.value("entries", 0));
  }
  if (!witnesses.canary_sha256.empty() && sha == witnesses.canary_sha256) {
    return fmt::format("read {} bytes whose sha256 matches the host canary", fact.value("bytes", 0));
  }
  return fmt::format("read {} bytes (sha256 {})", fact.value("bytes", 0), sha.substr(0, 16));
}

Verdict Start(const Check& check, const BatchResult& result) {
  Verdict v;
  v.check = check;
  v.evidence.launch_id = result.launch_id;
  return v;
}

void Judge(Verdict& v, bool as_promised, Direction if_not) {
  v.outcome = as_promised ? Outcome::kPass : Outcome::kFail;
  v.direction = as_promised ? Direction::kNone : if_not;
}

// A deny result only proves something when the probe could do the allowed counterpart.
void ApplyControl(Verdict& v, Control control, const char* what) {
  if (v.outcome != Outcome::kPass || v.check.expect != Expectation::kDenied) return;
  if (control == Control::kPassed) return;
  v.outcome = Outcome::kInconclusive;
  v.observed += control == Control::kFailed
                    ? fmt::format("; but no path the policy declares {} could be {} either, so "
                                  "the denial proves nothing", what, what)
                    : fmt::format("; but the policy declares no {} path, so nothing shows the "
                                  "probe could have succeeded", what);
}

std::string AccessRemediation(const Check& check, bool write) {
  if (check.expect == Expectation::kDenied) {
    return write ? fmt::format("make {} read-only inside the sandbox (read-only root or ro bind, "
                               "no write permission for the sandbox user)", check.target)
                 : fmt::format("do not mount or bind {} into the sandbox (expose only the paths "
                               "the workload needs)", check.target);
  }
  return fmt::format("{} {} for the sandbox, or drop it from the policy's filesystem.{} list",
                     write ? "mount writable" : "expose", check.target,
                     write ? "writable" : "readable");
}

Verdict JudgeRead(const Check& check, const BatchView& view) {
  Verdict v = Start(check, view.result);
  v.expected = fmt::format("read {}", ExpectationName(check.expect));
  v.remediation = AccessRemediation(check, false);
  std::optional<int> index = view.facts.Find("fs.read", check.resolved_target, "");
  if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no fact for this path";
    return v;
  }
  const json& fact = view.facts.Fact(*index);
  v.evidence.frame_indexes.push_back(*index);
  v.observed = DescribeRead(fact, view.witnesses);
  bool read = FactOk(fact);
  if (check.target == "{host_canary}" && read) {
    // Only the canary's hash proves the host file leaked; another file at that path did not.
    read = fact.value("sha256", "") == view.witnesses.canary_sha256;
    v.evidence.witness_facts.push_back("host canary sha256 " + view.witnesses.canary_sha256);
    if (!read) v.observed += "; not the host canary's content";
  }
  bool allowed = check.expect == Expectation::kAllowed;
  Judge(v, read == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  ApplyControl(v, view.read_control, "readable");
  return v;
}

Verdict JudgeWrite(const Check& check, const BatchView& view) {
  Verdict v = Start(check, view.result);
  v.expected = fmt::format("write {}", ExpectationName(check.expect));
  v.remediation = AccessRemediation(check, true);
  std::optional<int> index = view.facts.Find("fs.write", check.resolved_target, "");
  if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no fact for this directory";
    return v;
  }
  const json& fact = view.facts.Fact(*index);
  v.evidence.frame_indexes.push_back(*index);
  bool wrote = FactOk(fact);
  v.observed = wrote ? "created and removed a file" : "create failed: " + DescribeFailure(fact);
  if (fact.contains("ro_mount") && fact["ro_mount"].is_boolean()) {
    v.observed += fact["ro_mount"].get<bool>() ? " (read-only mount)" : " (mount is read-write)";
  }
  bool allowed = check.expect == Expectation::kAllowed;
  Judge(v, wrote == allowed, allowed ? Direction::kTooRestrictive : Direction::kTooPermissive);
  ApplyControl(v, view.write_control, "writable");
  return v;
}

Verdict JudgeAlias(const Check& check, const BatchView& view) {
  Verdict v = Start(check, view.result);
  v.expected = fmt::format("read through a {} alias denied", check.variant);
  v.remediation = fmt::format("{} is reachable through a {} alias: remove the mount that holds "
                              "it; path-based filters do not stop aliases", check.target,
                              check.variant);
  std::optional<int> index = view.facts.Find("fs.alias", check.resolved_target, check.variant);
  if (!index) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no fact for this alias";
    return v;
  }
  const json& fact = view.facts.Fact(*index);
  v.evidence.frame_indexes.push_back(*index);
  v.observed = fmt::format("via {}: {}", fact.value("via", "?"), DescribeRead(fact, view.witnesses));
  bool read = FactOk(fact);
  if (check.target == "{host_canary}" && read) {
    read = fact.value("sha256", "") == view.witnesses.canary_sha256;
    v.evidence.witness_facts.push_back("host canary sha256 " + view.witnesses.canary_sha256);
  }
  Judge(v, !read, Direction::kTooPermissive);
  ApplyControl(v, view.read_control, "readable");
  return v;
}

Verdict JudgeEnvSecret(const Check& check, const BatchView& view) {
  Verdict v = Start(check, view.result);
  bool hidden = check.expect == Expectation::kDenied;
  v.expected = hidden ? "canary env secret not visible" : "canary env secret visible";
  v.remediation = hidden ? "do not pass the harness's environment into the sandbox: start the "
                           "sandbox itself under env -i (bwrap --clearenv alone leaves it in "
                           "/proc/1/environ, bwrap's own pid 1), no docker -e/--env-file of host "
                           "variables"
                         : "pass the environment into the sandbox, or declare env_secrets hidden";
  bool scanned = false;
  std::vector<std::string> seen_in;
  for (int index : view.facts.EnvSecretFacts()) {
    const json& fact = view.facts.Fact(index);
    if (fact.value("summary", false) == true) {
      scanned = true;
      v.evidence.frame_indexes.push_back(index);
    } else if (fact.value("sha256", "") == view.witnesses.env_secret_sha256) {
      seen_in.push_back(fact.value("source", "?"));
      v.evidence.frame_indexes.push_back(index);
    }
  }
  v.evidence.witness_facts.push_back("canary env secret sha256 " + view.witnesses.env_secret_sha256);
  if (seen_in.empty() && !scanned) {
    v.outcome = Outcome::kInconclusive;
    v.observed = "the probe reported no environment scan";
    return v;
  }
  v.observed = seen_in.empty() ? "the canary secret's value was in no readable environment"
                               : "the canary secret's value was found in " + fmt::format("{}", fmt::join(seen_in, ", "));
  Judge(v, seen_in.empty() == hidden, hidden ? Direction::kTooPermissive : Direction::kTooRestrictive);
  return v;
}

Control ComputeControl(const Plan& plan, const LaunchBatch& batch, const FactIndex& facts,
                       const std::string& family) {
  Control control = Control::kAbsent;
  for (std::size_t i : batch.check_indexes) {
    const Check& check = plan.checks[i];
    if (check.family != family || check.expect != Expectation::kAllowed) continue;
    control = Control::kFailed;
    std::optional<int> index = facts.Find(family, check.resolved_target, "");
    if (index && FactOk(facts.Fact(*index))) return Control::kPassed;
  }
  return control;
}

Verdict JudgeCheck(const Check& check, const BatchView& view) {
  if (check.family == "fs.read") return JudgeRead(check, view);
  if (check.family == "fs.write") return JudgeWrite(check, view);
  if (check.family == "fs.alias") return JudgeAlias(check, view);
  if (check.family == "env.secret") return JudgeEnvSecret(check, view);
  Verdict v = Start(check, view.result);
  v.outcome = Outcome::kError;
  v.observed = "no judge for family " + check.family;
  return v;
}

Verdict NotRun(const Check& check, const BatchResult& result) {
  Verdict v = Start(check, result);
  switch (result.state) {
    case BatchResult::State::kSkipped:
      v.outcome = Outcome::kSkip;
      v.observed = result.reason;
      break;
    case BatchResult::State::kLaunchFailed:
      v.outcome = Outcome::kError;
      v.observed = result.reason;
      break;
    case BatchResult::State::kInterrupted:
      v.outcome = Outcome::kError;
      v.observed = "interrupted" + (result.reason.empty() ? "" : ": " + result.reason);
      break;
    case BatchResult::State::kRan:
      break;
  }
  return v;
}

}  // namespace

std::vector<Verdict> Evaluate(const Plan& plan, const std::vector<BatchResult>& results,
                              const WitnessFacts& witnesses) {
  std::vector<Verdict> verdicts(plan.checks.size());
  std::vector<bool> judged(plan.checks.size(), false);
  for (std::size_t b = 0; b < plan.batches.size(); ++b) {
    const LaunchBatch& batch = plan.batches[b];
    static const BatchResult kMissing{.state = BatchResult::State::kLaunchFailed,
                                      .reason = "the harness recorded no result for this launch"};
    const BatchResult& result = b < results.size() ? results[b] : kMissing;
    FactIndex facts(result.frames);
    BatchView view{result, facts, ComputeControl(plan, batch, facts, "fs.read"),
                   ComputeControl(plan, batch, facts, "fs.write"), witnesses};
    for (std::size_t i : batch.check_indexes) {
      const Check& check = plan.checks[i];
      judged[i] = true;
      if (result.state != BatchResult::State::kRan) {
        verdicts[i] = NotRun(check, result);
        continue;
      }
      Verdict v = JudgeCheck(check, view);
      // Garbage is never a pass: a pass needs a launch that finished cleanly. A proven leak
      // stays a fail whatever happened after it.
      if (!result.complete && v.outcome != Outcome::kFail) {
        v.outcome = Outcome::kError;
        v.direction = Direction::kNone;
        v.observed = "probe launch incomplete (" + result.reason + "); partial: " + v.observed;
      }
      verdicts[i] = std::move(v);
    }
  }
  for (std::size_t i = 0; i < plan.checks.size(); ++i) {
    if (judged[i]) continue;
    verdicts[i].check = plan.checks[i];
    verdicts[i].outcome = Outcome::kError;
    verdicts[i].observed = "the plan put this check in no launch";
  }
  return verdicts;
}

int ExitCodeFor(const std::vector<Verdict>& verdicts, Severity fail_on) {
  bool unsure = false;
  for (const Verdict& v : verdicts) {
    switch (v.outcome) {
      case Outcome::kFail:
        if (AtLeast(v.check.severity, fail_on)) return 1;
        break;
      case Outcome::kError:
      case Outcome::kInconclusive:
        unsure = true;
        break;
      case Outcome::kPass:
      case Outcome::kSkip:
        break;
    }
  }
  return unsure ? 3 : 0;
}

}  // namespace sandprobe
