#include "recorded/infer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "reports/json_report_read.h"
#include "load/json_document.h"
#include "load/policy.h"

namespace sandprobe {
namespace {

using nlohmann::json;

// What a verdict against a policy field says about the field.
enum class Edit {
  kMoveToOpposite,  // a list item the sandbox treats the other way: into `opposite`
  kFlip,            // a switch: `strict` <-> `loose`; a third value (network.dns "filtered")
                    // becomes the side the verdict's direction points to
  kDrop,            // a promise that may be absent: out of the policy
  kMeasured,        // a limit: the value the sandbox enforced instead, else dropped
};

// One kind of policy field. `pointer` names the field (a list's items are pointer/N).
struct FieldRule {
  const char* pointer;
  bool list_item;
  Edit edit;
  const char* opposite = "";  // kMoveToOpposite
  json strict = nullptr;      // kFlip: the default-deny value (also the value when absent)
  json loose = nullptr;
};

const std::vector<FieldRule>& FieldRules() {
  static const std::vector<FieldRule> kRules = {
      {"/filesystem/readable", true, Edit::kMoveToOpposite, "/filesystem/unreadable"},
      {"/filesystem/unreadable", true, Edit::kMoveToOpposite, "/filesystem/readable"},
      {"/filesystem/writable", true, Edit::kMoveToOpposite, "/filesystem/unwritable"},
      {"/filesystem/unwritable", true, Edit::kMoveToOpposite, "/filesystem/writable"},
      {"/network/allow", true, Edit::kDrop},  // an untested entry (a skip) is dropped too
      {"/network/proxy", false, Edit::kDrop},
      {"/persistence/survives", true, Edit::kDrop},
      {"/persistence/survives_turns", true, Edit::kDrop},
      {"/persistence/ephemeral", true, Edit::kDrop},
      {"/network/egress", false, Edit::kFlip, "", "deny", "allow"},
      {"/network/dns", false, Edit::kFlip, "", "deny", "allow"},
      {"/network/unix_sockets", false, Edit::kFlip, "", "deny", "allow"},
      {"/host/pid_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/network_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/mount_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/ipc_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/uts_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/cgroup_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/user_namespace", false, Edit::kFlip, "", "isolated", "shared"},
      {"/host/env_secrets", false, Edit::kFlip, "", "hidden", "visible"},
      {"/host/runtime_sockets", false, Edit::kFlip, "", "hidden", "visible"},
      {"/privileges/root", false, Edit::kFlip, "", false, true},
      {"/privileges/no_new_privs", false, Edit::kFlip, "", true, false},
      {"/privileges/seccomp", false, Edit::kFlip, "", "required", "optional"},
      {"/privileges/user_namespaces", false, Edit::kFlip, "", "deny", "allow"},
      {"/limits/pids", false, Edit::kMeasured},
      {"/limits/memory_mib", false, Edit::kMeasured},
      {"/limits/cpus", false, Edit::kMeasured},
      {"/limits/wall_seconds", false, Edit::kMeasured},
      {"/limits/tmp_mib", false, Edit::kMeasured},
      {"/limits/open_files", false, Edit::kMeasured},
  };
  return kRules;
}

// The policy pointer a check's reference names ("p.json:7:20 /filesystem/readable/1",
// "p.json /host/env_secrets"), or "" when it names none ("the suite's fs.mounts entry").
std::string ReferencePointer(const std::string& reference) {
  std::optional<PolicyRef> ref = ParsePolicyRef(reference);
  // A note on the value ("/persistence: not listed (ephemeral)") is no promise of its own.
  return ref && ref->words.empty() ? ref->pointer : "";
}

// The value a limit's judge measured the sandbox enforcing instead of the declared one
// (evidence.enforced_instead); nullopt when the limit was not enforced at all ("not enforced up
// to 257 tasks"), and in reports of sandprobe before the key existed: their limit is dropped,
// never set from the words of `observed`.
std::optional<double> EnforcedInstead(const json& check) {
  const json& evidence = check.value("evidence", json::object());
  auto value = evidence.find("enforced_instead");
  if (value == evidence.end() || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

struct Target {
  const FieldRule* rule = nullptr;
  std::optional<std::size_t> item;  // list items only
};

std::optional<Target> FindTarget(const std::string& pointer) {
  for (const FieldRule& rule : FieldRules()) {
    const std::string base = rule.pointer;
    if (!rule.list_item && pointer == base) return Target{&rule, std::nullopt};
    if (!rule.list_item || pointer.rfind(base + "/", 0) != 0) continue;
    const std::string index = pointer.substr(base.size() + 1);
    if (index.empty() || !std::all_of(index.begin(), index.end(), ::isdigit)) continue;
    return Target{&rule, static_cast<std::size_t>(std::stoul(index))};
  }
  return std::nullopt;
}

// The inference under way: edits are collected per field first (several checks judge the same
// path: fs.read and each fs.alias variant), then applied once.
class Inference {
 public:
  explicit Inference(json policy) : policy_(std::move(policy)) {}

  void Take(const json& check) {
    const std::string verdict = check.at("verdict").get<std::string>();
    const std::string pointer = ReferencePointer(check.at("reference").get<std::string>());
    checked_.insert(pointer);
    if (verdict == "pass") return;
    const std::string id = check.at("id").get<std::string>();
    std::optional<Target> target = FindTarget(pointer);
    const std::string why = fmt::format("{} was {}: {}", id, verdict, check.at("observed").get<std::string>());
    if (!target) {
      notes_.push_back(fmt::format("no policy field can say what the sandbox did: {}", why));
      return;
    }
    const bool decided = verdict == "fail";
    const std::string key = pointer;
    if (target->rule->edit == Edit::kFlip && !decided) {
      notes_.push_back(fmt::format("{} kept as declared, not decided by the run: {}", pointer, why));
      return;
    }
    // A list item the run could not decide is dropped, never moved: infer claims nothing
    // it did not observe. A decided one moves, unless another check of it was undecided.
    std::optional<double> measured;
    if (target->rule->edit == Edit::kMeasured && decided) {
      measured = EnforcedInstead(check);
    }
    const json direction = check.value("direction", json());
    const bool too_restrictive = direction.is_string() && direction.get<std::string>() == "too-restrictive";
    auto [at, inserted] = edits_.emplace(key, PendingEdit{*target, decided, measured, too_restrictive});
    if (!inserted) at->second.decided = at->second.decided && decided;
    if (inserted) notes_.push_back(fmt::format("{}: {}", Describe(pointer, at->second), why));
  }

  // Promises no check of the run looked at: a limit or a path (which may be absent) is
  // dropped, a switch (absent means its strict default) is kept and named.
  void Unchecked(const std::string& suite) {
    for (const FieldRule& rule : FieldRules()) {
      const json::json_pointer field(rule.pointer);
      if (!policy_.contains(field)) continue;
      const bool path_list = std::string(rule.pointer).rfind("/filesystem/", 0) == 0;
      if (rule.list_item && path_list) {
        std::string dropped;
        for (std::size_t i = 0; i < policy_[field].size(); ++i) {
          std::string item = fmt::format("{}/{}", rule.pointer, i);
          if (checked_.count(item) || edits_.count(item)) continue;
          edits_.emplace(item, PendingEdit{Target{&rule, i}, false});
          dropped += (dropped.empty() ? "" : ", ") + policy_[field][i].dump();
        }
        if (!dropped.empty()) {
          notes_.push_back(fmt::format("{} dropped {}: suite {} checked no promise of them", rule.pointer, dropped, suite));
        }
      } else if (!rule.list_item && rule.edit == Edit::kMeasured && !checked_.count(rule.pointer)) {
        edits_.emplace(rule.pointer, PendingEdit{Target{&rule, std::nullopt}, true});
        notes_.push_back(fmt::format("{} dropped: suite {} measured no such limit", rule.pointer, suite));
      } else if (!rule.list_item && !checked_.count(rule.pointer)) {
        unchecked_.push_back(rule.pointer);
      }
    }
    if (!unchecked_.empty()) {
      std::string list;
      for (const std::string& p : unchecked_) list += (list.empty() ? "" : ", ") + p;
      notes_.push_back(fmt::format("kept as declared, not checked by suite {}: {}", suite, list));
    }
  }

  InferredPolicy Finish() && {
    std::map<std::string, std::vector<std::size_t>, std::greater<>> removals;  // per list
    for (const auto& [pointer, edit] : edits_) Apply(edit, removals);
    for (auto& [list, indexes] : removals) {
      std::sort(indexes.rbegin(), indexes.rend());
      json& items = policy_[json::json_pointer(list)];
      for (std::size_t i : indexes) {
        if (i < items.size()) items.erase(i);
      }
    }
    for (const auto& [list, added] : additions_) {
      json& items = policy_[json::json_pointer(list)];
      if (!items.is_array()) items = json::array();
      for (const json& item : added) {
        if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
      }
    }
    return {std::move(policy_), std::move(notes_)};
  }

 private:
  struct PendingEdit {
    Target target;
    bool decided;
    std::optional<double> measured = std::nullopt;  // kMeasured: what the sandbox enforced
    bool too_restrictive = false;  // kFlip of a third value: the sandbox denied what it allows
  };

  static std::string Describe(const std::string& pointer, const PendingEdit& e) {
    const Target& t = e.target;
    if (!e.decided) return fmt::format("{} dropped, not decided by the run", pointer);
    switch (t.rule->edit) {
      case Edit::kMoveToOpposite: return fmt::format("{} moved to {}", pointer, t.rule->opposite);
      case Edit::kFlip: return fmt::format("{} flipped", pointer);
      case Edit::kDrop: return fmt::format("{} dropped (not enforced as declared)", pointer);
      case Edit::kMeasured:
        return e.measured ? fmt::format("{} set to the enforced {}", pointer, *e.measured)
                          : fmt::format("{} dropped (not enforced)", pointer);
    }
    return pointer;
  }

  void Apply(const PendingEdit& e, std::map<std::string, std::vector<std::size_t>, std::greater<>>& removals) {
    const FieldRule& rule = *e.target.rule;
    const json::json_pointer field(rule.pointer);
    if (rule.list_item) {
      if (!policy_.contains(field) || *e.target.item >= policy_[field].size()) return;
      removals[rule.pointer].push_back(*e.target.item);
      if (e.decided && rule.edit == Edit::kMoveToOpposite) {
        additions_[rule.opposite].push_back(policy_[field][*e.target.item]);
      }
      return;
    }
    switch (rule.edit) {
      case Edit::kFlip: {
        const json current = policy_.contains(field) ? policy_[field] : rule.strict;
        if (current == rule.strict || current == rule.loose) {
          policy_[field] = current == rule.strict ? rule.loose : rule.strict;
        } else {
          policy_[field] = e.too_restrictive ? rule.strict : rule.loose;
        }
        return;
      }
      case Edit::kMeasured:
        if (e.decided && e.measured) {
          // Whole units for every limit but cpus (the loader wants integers there).
          policy_[field] = rule.pointer == std::string("/limits/cpus") ? json(*e.measured)
                                                                       : json(static_cast<std::int64_t>(*e.measured + 0.5));
          return;
        }
        [[fallthrough]];
      case Edit::kDrop:
      case Edit::kMoveToOpposite:
        if (policy_.contains(field)) policy_[field.parent_pointer()].erase(field.back());
        return;
    }
  }

  json policy_;
  std::map<std::string, PendingEdit> edits_;
  std::map<std::string, std::vector<json>> additions_;
  std::vector<std::string> notes_;
  std::set<std::string> checked_;         // policy pointers some check of the run referenced
  std::vector<std::string> unchecked_;    // switches no check looked at
};

}  // namespace

StatusOr<InferredPolicy> InferPolicy(const json& report, const std::string& file, const std::string& name) {
  StatusOr<RunReport> facts = ReadJsonReportFacts(report, file);
  if (!facts.ok()) return facts.status();
  if (!facts->policy.is_object() || facts->policy.empty() || !report.contains("checks")) {
    return Status::Error(fmt::format("{}: the report holds no policy it was judged against (a harness failure?)", file));
  }
  Inference inference(facts->policy);
  try {
    for (const json& check : report.at("checks")) inference.Take(check);
    inference.Unchecked(facts->suite_name);
  } catch (const json::exception& e) {
    return Status::Error(fmt::format("{}: read the checks: {}", file, e.what()));
  }
  InferredPolicy out = std::move(inference).Finish();
  out.policy["name"] = name.empty() ? facts->profile_name + "-inferred" : name;
  out.policy["description"] = fmt::format(
      "What sandbox {} enforced in run {} ({}), inferred by sandprobe infer from its verdicts "
      "against policy {}.",
      facts->profile_name, facts->run_id,
      facts->started_at ? Rfc3339(*facts->started_at) : "at an unrecorded time", facts->policy_name);
  // What `run --policy` will load: an inferred policy that does not load is a bug here.
  StatusOr<JsonDocument> doc = JsonDocument::Parse(out.policy.dump(), "inferred policy");
  if (!doc.ok()) return doc.status().AsHarnessError();
  if (StatusOr<Policy> loaded = ParsePolicy(*doc); !loaded.ok()) {
    return loaded.status().WithContext("the inferred policy does not load").AsHarnessError();
  }
  return out;
}

}  // namespace sandprobe
