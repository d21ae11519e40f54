#include "mutate/mutant_setup.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mutate/profile_mutation.h"

namespace sandprobe {
namespace {

// A host command an operator needs is quick; this bounds a hung one.
constexpr std::chrono::seconds kHostCommandTimeout{30};

// Why `operators` do not serve `profile`'s backend, or "" when they do.
std::string WrongClass(const Profile& profile, const MutationOperatorFile& operators) {
  const std::vector<Backend>& serves = operators.backends;
  if (std::find(serves.begin(), serves.end(), profile.backend) != serves.end()) return "";
  std::vector<std::string> served;
  for (Backend b : serves) served.emplace_back(NameOf(b));
  return fmt::format("the operators are for {} profiles; this one's backend is {}", fmt::join(served, ", "),
                     NameOf(profile.backend));
}

// `run` stands in a row somewhere in `argv`.
bool HoldsRun(const nlohmann::json& argv, const std::vector<std::string>& run) {
  if (!argv.is_array() || run.empty() || argv.size() < run.size()) return false;
  for (std::size_t at = 0; at + run.size() <= argv.size(); ++at) {
    bool all = true;
    for (std::size_t i = 0; i < run.size() && all; ++i) all = argv[at + i].is_string() && argv[at + i] == run[i];
    if (all) return true;
  }
  return false;
}

}  // namespace

void ApplyEquivalenceClaim(const Profile& profile, const MutationOperator& op, MutantSetup& setup) {
  for (const EquivalenceClaim& claim : op.equivalences) {
    if (claim.profile != profile.name) continue;
    const nlohmann::json& argv = profile.raw.value(profile.raw.contains("run") ? "run" : "start", nlohmann::json());
    for (const std::vector<std::string>& run : claim.holds_while) {
      if (!HoldsRun(argv, run)) {
        setup.claim_lapsed = fmt::format("the equivalence claim at {} does not hold: the profile's argv lacks \"{}\"",
                                         claim.where, fmt::join(run, " "));
        return;
      }
    }
    setup.equivalent_because = claim.why;
    return;
  }
}

StatusOr<std::string> HostCommands::FirstLine(const std::vector<std::string>& argv) {
  auto known = done_.find(argv);
  if (known != done_.end()) return known->second;
  StatusOr<std::string> answer = Status::Error("not run");
  StatusOr<LaunchResult> result = launcher_.Launch(LaunchSpec{.argv = argv, .timeout = kHostCommandTimeout});
  if (!result.ok()) {
    answer = result.status();
  } else if (result->exit_code != 0 || result->timed_out) {
    answer = Status::Error(fmt::format("{}: {}", FormatArgv(argv), DescribeExit(*result)));
  } else {
    answer = result->out.substr(0, result->out.find('\n'));
  }
  return done_.emplace(argv, std::move(answer)).first->second;
}

MutantSetup SetUpMutant(const Profile& profile, const MutationOperatorFile& operators, const MutationOperator& op,
                        HostCommands& host) {
  MutantSetup m;
  m.result.name = op.name;
  m.result.description = op.description;
  m.result.edit = op.edit;
  auto decide = [&m](MutantStatus status, std::string why) {
    m.decided = status;
    m.result.status = status;
    m.result.why = std::move(why);
    return m;
  };
  if (std::string why = WrongClass(profile, operators); !why.empty()) return decide(MutantStatus::kNotApplicable, why);
  for (const std::vector<std::string>& argv : op.requirements) {
    StatusOr<std::string> ok = host.FirstLine(argv);
    if (!ok.ok()) return decide(MutantStatus::kNotApplicable, "requires " + ok.status().message());
  }
  std::map<std::string, std::string> values;
  for (const auto& [name, argv] : op.host_values) {
    StatusOr<std::string> value = host.FirstLine(argv);
    if (!value.ok()) {
      return decide(MutantStatus::kNotApplicable, fmt::format("host value {}: {}", name, value.status().message()));
    }
    values[name] = *value;
  }
  StatusOr<ProfileMutation> mutation = MutateProfileJson(profile.raw, op, values);
  if (!mutation.ok()) return decide(MutantStatus::kInvalid, mutation.status().message());
  if (mutation->profile.is_null()) return decide(MutantStatus::kNotApplicable, mutation->not_applicable);
  m.result.applied = mutation->applied;
  StatusOr<Profile> mutant = ParseMutant(mutation->profile, profile.source_path, op.name);
  if (!mutant.ok()) return decide(MutantStatus::kInvalid, mutant.status().message());
  m.profile = std::move(*mutant);
  ApplyEquivalenceClaim(profile, op, m);
  return m;
}

}  // namespace sandprobe
