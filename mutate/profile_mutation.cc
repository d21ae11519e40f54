#include "mutate/profile_mutation.h"

#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "load/json_document.h"

namespace sandprobe {
namespace {

using Argv = std::vector<std::string>;

// What one step did (nullopt: it did not apply, and `why_not` says why).
using StepResult = std::optional<std::string>;

// The argv being edited, its JSON key ("run" / "start") and the whole profile (for set_field).
struct EditTarget {
  Argv argv;
  std::string key;
  nlohmann::json& profile;
  std::string why_not;  // the last step's reason for not applying
};

bool Matches(const std::string& glob, const std::string& value) {
  return glob.empty() || ::fnmatch(glob.c_str(), value.c_str(), 0) == 0;
}

std::string Quoted(const Argv& args) { return fmt::format("{}", fmt::join(args, " ")); }

// An occurrence of `flag` at argv[at]: `F V...` (the values follow) or `F=V` (the first value
// inline). `value_at` is where the first value is, `inline_value` whether it is after '='.
struct FlagUse {
  std::size_t at;
  bool inline_value;
};

std::optional<FlagUse> FlagAt(const Argv& argv, std::size_t i, const std::string& flag, int values) {
  if (argv[i] == flag) {
    if (i + static_cast<std::size_t>(values) >= argv.size()) return std::nullopt;  // its values are missing
    return FlagUse{i, false};
  }
  if (argv[i].starts_with(flag + "=")) return FlagUse{i, true};
  return std::nullopt;
}

std::string FirstValue(const Argv& argv, const FlagUse& use, const std::string& flag) {
  return use.inline_value ? argv[use.at].substr(flag.size() + 1) : argv[use.at + 1];
}

StepResult Apply(EditTarget& t, const InsertArgs& step) {
  auto anchor = std::find(t.argv.begin(), t.argv.end(), step.anchor);
  if (anchor == t.argv.end()) {
    t.why_not = fmt::format("no \"{}\" in {}", step.anchor, t.key);
    return std::nullopt;
  }
  if (std::search(t.argv.begin(), t.argv.end(), step.args.begin(), step.args.end()) != t.argv.end()) {
    t.why_not = fmt::format("{} already has {}", t.key, Quoted(step.args));
    return std::nullopt;
  }
  t.argv.insert(step.before ? anchor : anchor + 1, step.args.begin(), step.args.end());
  return fmt::format("inserted {} {} {}", Quoted(step.args), step.before ? "before" : "after", step.anchor);
}

StepResult Apply(EditTarget& t, const RemoveFlag& step) {
  std::vector<std::string> removed;
  for (std::size_t i = 0; i < t.argv.size();) {
    std::optional<FlagUse> use = FlagAt(t.argv, i, step.flag, step.values);
    if (!use || (step.values > 0 && !Matches(step.match, FirstValue(t.argv, *use, step.flag)))) {
      ++i;
      continue;
    }
    // `F V1 V2` is 1 + values elements; `F=V1 V2` one fewer; `F=x` of a flag without values one.
    std::size_t count = use->inline_value ? std::max(step.values, 1) : static_cast<std::size_t>(step.values) + 1;
    count = std::min(count, t.argv.size() - i);
    removed.push_back(Quoted(Argv(t.argv.begin() + i, t.argv.begin() + i + count)));
    t.argv.erase(t.argv.begin() + i, t.argv.begin() + i + count);
  }
  if (removed.empty()) {
    t.why_not = step.match.empty() ? fmt::format("no {} in {}", step.flag, t.key)
                                   : fmt::format("no {} {} in {}", step.flag, step.match, t.key);
    return std::nullopt;
  }
  return fmt::format("removed {}", fmt::join(removed, ", "));
}

// Sets the value of every use of `flag` whose value `rewrite` changes (returns nullopt to leave
// it); "F old -> new" for each.
template <typename Rewrite>
std::vector<std::string> RewriteFlagValues(Argv& argv, const std::string& flag, Rewrite rewrite) {
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::optional<FlagUse> use = FlagAt(argv, i, flag, 1);
    if (!use) continue;
    std::string old_value = FirstValue(argv, *use, flag);
    std::optional<std::string> new_value = rewrite(old_value);
    if (!new_value || *new_value == old_value) continue;
    if (use->inline_value) {
      argv[i] = flag + "=" + *new_value;
    } else {
      argv[i + 1] = *new_value;
      ++i;
    }
    changed.push_back(fmt::format("{} {} -> {}", flag, old_value, *new_value));
  }
  return changed;
}

StepResult Apply(EditTarget& t, const ReplaceValue& step) {
  std::vector<std::string> changed = RewriteFlagValues(t.argv, step.flag, [&](const std::string& value) {
    return Matches(step.match, value) ? std::optional<std::string>(step.to) : std::nullopt;
  });
  if (changed.empty()) {
    t.why_not = fmt::format("no {}{} with another value than {} in {}", step.flag,
                            step.match.empty() ? "" : " " + step.match, step.to, t.key);
    return std::nullopt;
  }
  return fmt::format("set {}", fmt::join(changed, ", "));
}

StepResult Apply(EditTarget& t, const RewriteValue& step) {
  std::vector<std::string> changed = RewriteFlagValues(t.argv, step.flag, [&](const std::string& value) {
    if (!std::regex_search(value, step.regex)) return std::optional<std::string>();
    return std::optional<std::string>(std::regex_replace(value, step.regex, step.to));
  });
  if (changed.empty()) {
    t.why_not = fmt::format("no {} whose value matches /{}/ in {}", step.flag, step.regex_text, t.key);
    return std::nullopt;
  }
  return fmt::format("rewrote {}", fmt::join(changed, ", "));
}

StepResult Apply(EditTarget& t, const ReplaceArg& step) {
  std::size_t count = 0;
  for (auto it = std::find(t.argv.begin(), t.argv.end(), step.arg); it != t.argv.end();
       it = std::find(it, t.argv.end(), step.arg)) {
    it = t.argv.erase(it);
    it = t.argv.insert(it, step.with.begin(), step.with.end()) + static_cast<std::ptrdiff_t>(step.with.size());
    ++count;
  }
  if (count == 0) {
    t.why_not = fmt::format("no {} in {}", step.arg, t.key);
    return std::nullopt;
  }
  return fmt::format("replaced {} with [{}]", step.arg, Quoted(step.with));
}

StepResult Apply(EditTarget& t, const RemoveSpan& step) {
  auto from = std::find(t.argv.begin(), t.argv.end(), step.from);
  auto until = from == t.argv.end() ? t.argv.end() : std::find(from + 1, t.argv.end(), step.until);
  if (until == t.argv.end()) {
    t.why_not = fmt::format("no {} followed by {} in {}", step.from, step.until, t.key);
    return std::nullopt;
  }
  std::string removed = Quoted(Argv(from, until));
  t.argv.erase(from, until);
  return fmt::format("removed {} (up to {})", removed, step.until);
}

StepResult Apply(EditTarget& t, const SetField& step) {
  auto field = t.profile.find(step.field);
  if (field == t.profile.end() || *field != step.from) {
    t.why_not = fmt::format("\"{}\" is not {}", step.field, step.from.dump());
    return std::nullopt;
  }
  *field = step.to;
  return fmt::format("set \"{}\" {} -> {}", step.field, step.from.dump(), step.to.dump());
}

// The argv that makes the sandbox: a oneshot's run, a session's start.
std::string SandboxArgvKey(const nlohmann::json& profile) { return profile.contains("run") ? "run" : "start"; }

}  // namespace

StatusOr<ProfileMutation> MutateProfileJson(const nlohmann::json& profile, const MutationOperator& op,
                                            const std::map<std::string, std::string>& host_values) {
  nlohmann::json mutant = profile;
  EditTarget target{.argv = {}, .key = SandboxArgvKey(profile), .profile = mutant};
  auto argv_json = mutant.find(target.key);
  if (argv_json == mutant.end() || !argv_json->is_array()) {
    return ProfileMutation{.not_applicable = "the profile has neither run nor start"};
  }
  target.argv = argv_json->get<Argv>();
  ProfileMutation out;
  std::vector<std::string> reasons;
  for (const EditStep& step : op.steps) {
    StepResult did = std::visit([&](const auto& s) { return Apply(target, s); }, step);
    if (did) {
      out.applied.push_back(*did);
    } else {
      reasons.push_back(target.why_not);
    }
  }
  mutant[target.key] = target.argv;
  if (out.applied.empty() || mutant == profile) {
    out.not_applicable = fmt::format("{}", fmt::join(reasons, "; "));
    out.applied.clear();
    return out;
  }
  for (const auto& [name, value] : host_values) {
    nlohmann::json& vars = mutant["vars"];
    if (!vars.is_object()) vars = nlohmann::json::object();
    if (vars.contains(name) && vars[name] != value) {
      return Status::Error(fmt::format("operator {} ({}): host value {} would replace the profile's variable of that name",
                                       op.name, op.where, name));
    }
    vars[name] = value;
  }
  out.profile = std::move(mutant);
  return out;
}

StatusOr<Profile> ParseMutant(const nlohmann::json& mutant, const std::string& source_path,
                              const std::string& operator_name) {
  nlohmann::json named = mutant;
  named["name"] = mutant.value("name", std::string("profile")) + "." + operator_name;
  // Named after the original (its directory resolves "policy"), marked as the mutant so a
  // position in a message is not taken for one in the original file.
  StatusOr<JsonDocument> doc = JsonDocument::Parse(named.dump(2), source_path + " (mutant " + operator_name + ")");
  if (!doc.ok()) return doc.status();
  StatusOr<Profile> profile = ParseProfile(*doc);
  if (!profile.ok()) return profile.status();
  profile->source_path = source_path;
  return profile;
}

}  // namespace sandprobe
