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

}  // namespace

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
  return m;
}

}  // namespace sandprobe
