#include "mutate/mutation_operators.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "load/json_source.h"

namespace sandprobe {
namespace {

namespace fs = std::filesystem;

// The step kinds, as the one key of a step object.
constexpr std::string_view kStepKinds[] = {"insert",      "remove",      "replace_value", "rewrite_value",
                                           "replace_arg", "remove_span", "set_field"};

// Fields a set_field step may not touch: the argvs have their own steps, and the name is what
// the mutant is called by.
constexpr std::string_view kFieldsNotToSet[] = {"name", "run", "start", "exec", "stop"};

bool IsVariableName(const std::string& name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

void RequireNonEmpty(ObjectReader& r, const std::string& key, const std::string& value) {
  if (r.ok() && value.empty()) r.FailAt(r.PointerTo(key), "must not be empty");
}

InsertArgs ReadInsert(ObjectReader& r) {
  InsertArgs step;
  std::optional<std::string> after = r.String("after", Presence::kOptional);
  std::optional<std::string> before = r.String("before", Presence::kOptional);
  if (r.ok() && after.has_value() == before.has_value()) {
    r.FailAt(r.pointer(), "needs exactly one of \"after\" and \"before\" (the anchor element)");
  }
  step.before = before.has_value();
  step.anchor = after.value_or(before.value_or(""));
  RequireNonEmpty(r, step.before ? "before" : "after", step.anchor);
  step.args = r.StringList("args", Presence::kRequired).value_or(step.args);
  if (r.ok() && step.args.empty()) r.FailAt(r.PointerTo("args"), "must not be empty");
  return step;
}

RemoveFlag ReadRemove(ObjectReader& r) {
  RemoveFlag step;
  step.flag = r.String("flag", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "flag", step.flag);
  step.values = static_cast<int>(r.Int("values", Presence::kOptional, 0, 3).value_or(0));
  step.match = r.String("match", Presence::kOptional).value_or("");
  if (r.ok() && r.Has("match") && step.values == 0) {
    r.FailAt(r.PointerTo("match"), "a flag without values has nothing to match (set \"values\")");
  }
  if (r.ok() && r.Has("match")) RequireNonEmpty(r, "match", step.match);
  return step;
}

ReplaceValue ReadReplaceValue(ObjectReader& r) {
  ReplaceValue step;
  step.flag = r.String("flag", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "flag", step.flag);
  step.to = r.String("to", Presence::kRequired).value_or("");
  step.match = r.String("match", Presence::kOptional).value_or("");
  if (r.ok() && r.Has("match")) RequireNonEmpty(r, "match", step.match);
  return step;
}

RewriteValue ReadRewriteValue(ObjectReader& r) {
  RewriteValue step;
  step.flag = r.String("flag", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "flag", step.flag);
  step.regex_text = r.String("regex", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "regex", step.regex_text);
  step.to = r.String("to", Presence::kRequired).value_or("");
  if (!r.ok()) return step;
  try {
    step.regex = std::regex(step.regex_text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    r.FailAt(r.PointerTo("regex"), fmt::format("not an ECMAScript regex: {}", e.what()));
  }
  return step;
}

ReplaceArg ReadReplaceArg(ObjectReader& r) {
  ReplaceArg step;
  step.arg = r.String("arg", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "arg", step.arg);
  step.with = r.StringList("with", Presence::kRequired).value_or(step.with);
  return step;
}

RemoveSpan ReadRemoveSpan(ObjectReader& r) {
  RemoveSpan step;
  step.from = r.String("from", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "from", step.from);
  step.until = r.String("until", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "until", step.until);
  return step;
}

SetField ReadSetField(ObjectReader& r) {
  SetField step;
  step.field = r.String("field", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "field", step.field);
  if (r.ok() && std::find(std::begin(kFieldsNotToSet), std::end(kFieldsNotToSet), step.field) !=
                    std::end(kFieldsNotToSet)) {
    r.FailAt(r.PointerTo("field"),
             fmt::format("\"{}\" cannot be set (argvs have their own steps; the name is the mutant's)", step.field));
  }
  for (const char* key : {"from", "to"}) {
    if (r.ok() && !r.Has(key)) r.FailAtKey(r.pointer(), key, "missing (the field's value before and after)");
  }
  if (r.ok()) {
    step.from = r.doc().root().at(r.PointerTo("from"));
    step.to = r.doc().root().at(r.PointerTo("to"));
    if (step.from == step.to) r.FailAt(r.PointerTo("to"), "equals \"from\": the step would change nothing");
  }
  return step;
}

// One step object: exactly one key, the kind, whose value holds the step's fields.
std::optional<EditStep> ReadStep(ObjectReader& parent, const JsonPointer& ptr) {
  ObjectReader kinds(parent.doc(), ptr, std::vector<std::string>(std::begin(kStepKinds), std::end(kStepKinds)));
  std::string kind;
  for (std::string_view k : kStepKinds) {
    if (!kinds.Has(std::string(k))) continue;
    if (!kind.empty()) {
      kinds.FailAtKey(ptr, std::string(k), fmt::format("one kind per step, and this one is \"{}\" already", kind));
    }
    kind = k;
  }
  if (kinds.ok() && kind.empty()) {
    kinds.FailAt(ptr, fmt::format("a step is an object with one key, its kind: {}", fmt::join(kStepKinds, ", ")));
  }
  parent.Fail(kinds.status());
  if (!parent.ok()) return std::nullopt;
  const JsonPointer body = ptr / kind;
  std::optional<EditStep> step;
  auto read = [&](std::vector<std::string> keys, auto reader) {
    ObjectReader r(parent.doc(), body, std::move(keys));
    if (r.ok()) step = reader(r);
    parent.Fail(r.status());
  };
  if (kind == "insert") read({"after", "before", "args"}, ReadInsert);
  if (kind == "remove") read({"flag", "values", "match"}, ReadRemove);
  if (kind == "replace_value") read({"flag", "to", "match"}, ReadReplaceValue);
  if (kind == "rewrite_value") read({"flag", "regex", "to"}, ReadRewriteValue);
  if (kind == "replace_arg") read({"arg", "with"}, ReadReplaceArg);
  if (kind == "remove_span") read({"from", "until"}, ReadRemoveSpan);
  if (kind == "set_field") read({"field", "from", "to"}, ReadSetField);
  if (!parent.ok()) return std::nullopt;
  return step;
}

// "edit": one step object or a non-empty array of them.
std::vector<EditStep> ReadEdit(ObjectReader& r) {
  std::vector<EditStep> steps;
  if (!r.ok()) return steps;
  if (!r.Has("edit")) {
    r.FailAtKey(r.pointer(), "edit", "missing (one step, or an array of steps)");
    return steps;
  }
  const JsonPointer ptr = r.PointerTo("edit");
  const nlohmann::json& edit = r.doc().root().at(ptr);
  if (edit.is_object()) {
    if (std::optional<EditStep> step = ReadStep(r, ptr)) steps.push_back(std::move(*step));
    return steps;
  }
  if (!edit.is_array()) {
    r.FailAt(ptr, fmt::format("expected a step (object) or an array of steps, got {}", JsonTypeName(edit)));
    return steps;
  }
  if (edit.empty()) r.FailAt(ptr, "must not be empty");
  for (std::size_t i = 0; i < edit.size() && r.ok(); ++i) {
    if (!edit[i].is_object()) {
      r.FailAt(ptr / i, fmt::format("expected a step (object), got {}", JsonTypeName(edit[i])));
    } else if (std::optional<EditStep> step = ReadStep(r, ptr / i)) {
      steps.push_back(std::move(*step));
    }
  }
  return steps;
}

void ReadHostValues(ObjectReader& parent, MutationOperator& op) {
  if (!parent.Has("host_values")) return;
  const JsonPointer ptr = parent.PointerTo("host_values");
  const nlohmann::json& values = parent.doc().root().at(ptr);
  if (!values.is_object()) return parent.FailAt(ptr, fmt::format("expected object, got {}", JsonTypeName(values)));
  std::vector<std::string> names;
  for (const auto& [name, value] : values.items()) names.push_back(name);
  ObjectReader r(parent.doc(), ptr, names);
  for (const std::string& name : names) {
    if (!r.ok()) break;
    if (!IsVariableName(name)) {
      r.FailAtKey(ptr, name, "a variable name must match [A-Za-z_][A-Za-z0-9_]*");
      break;
    }
    if (std::optional<std::vector<std::string>> argv = r.Argv(name, Presence::kRequired)) op.host_values[name] = *argv;
  }
  parent.Fail(r.status());
}

void ReadEquivalences(ObjectReader& parent, MutationOperator& op) {
  if (!parent.Has("equivalent")) return;
  const JsonPointer ptr = parent.PointerTo("equivalent");
  const nlohmann::json& list = parent.doc().root().at(ptr);
  if (!list.is_array()) return parent.FailAt(ptr, fmt::format("expected array, got {}", JsonTypeName(list)));
  if (list.empty()) return parent.FailAt(ptr, "must not be empty (leave the key out)");
  for (std::size_t i = 0; i < list.size() && parent.ok(); ++i) {
    if (!list[i].is_object()) return parent.FailAt(ptr / i, fmt::format("expected object, got {}", JsonTypeName(list[i])));
    ObjectReader r(parent.doc(), ptr / i, {"profile", "holds_while", "why"});
    EquivalenceClaim claim;
    claim.where = parent.doc().Where(ptr / i);
    claim.profile = r.String("profile", Presence::kRequired).value_or("");
    RequireNonEmpty(r, "profile", claim.profile);
    claim.why = r.String("why", Presence::kRequired).value_or("");
    RequireNonEmpty(r, "why", claim.why);
    claim.holds_while = r.ArgvList("holds_while", Presence::kRequired).value_or(claim.holds_while);
    // A claim that rests on nothing in the profile would outlive any change to it.
    if (r.ok() && claim.holds_while.empty()) r.FailAt(r.PointerTo("holds_while"), "must not be empty: name the profile's arguments the claim rests on");
    for (const EquivalenceClaim& other : op.equivalences) {
      if (r.ok() && other.profile == claim.profile) {
        r.FailAt(r.PointerTo("profile"), fmt::format("profile \"{}\" has a claim already (at {})", claim.profile, other.where));
      }
    }
    parent.Fail(r.status());
    if (parent.ok()) op.equivalences.push_back(std::move(claim));
  }
}

std::optional<MutationOperator> ReadOperator(ObjectReader& parent, const JsonPointer& ptr) {
  ObjectReader r(parent.doc(), ptr, {"name", "description", "edit", "requires", "host_values", "equivalent"});
  MutationOperator op;
  op.where = parent.doc().Where(ptr);
  op.name = r.Name("name", Presence::kRequired).value_or("");
  op.description = r.String("description", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "description", op.description);
  op.steps = ReadEdit(r);
  if (r.ok()) op.edit = r.doc().root().at(r.PointerTo("edit"));
  op.requirements = r.ArgvList("requires", Presence::kOptional).value_or(op.requirements);
  ReadHostValues(r, op);
  if (r.ok()) ReadEquivalences(r, op);
  parent.Fail(r.status());
  if (!parent.ok()) return std::nullopt;
  return op;
}

void ReadBackends(ObjectReader& r, MutationOperatorFile& file) {
  std::vector<std::string_view> names;
  for (const NamedValue<Backend>& named : kBackendNames) names.push_back(named.name);
  std::vector<std::string> listed = r.StringList("backends", Presence::kRequired).value_or(std::vector<std::string>{});
  if (r.ok() && listed.empty()) r.FailAt(r.PointerTo("backends"), "must not be empty");
  for (std::size_t i = 0; i < listed.size() && r.ok(); ++i) {
    std::optional<Backend> backend = ValueOf<Backend>(listed[i]);
    if (!backend) {
      r.FailAt(r.PointerTo("backends") / i,
               fmt::format("unknown backend \"{}\" (known: {})", listed[i], fmt::join(names, ", ")));
    } else if (std::find(file.backends.begin(), file.backends.end(), *backend) != file.backends.end()) {
      r.FailAt(r.PointerTo("backends") / i, fmt::format("\"{}\" is listed twice", listed[i]));
    } else {
      file.backends.push_back(*backend);
    }
  }
}

}  // namespace

StatusOr<MutationOperatorFile> ParseMutationOperators(const JsonDocument& doc) {
  ObjectReader r(doc, JsonPointer(), {"name", "description", "backends", "operators"});
  MutationOperatorFile file;
  file.source_path = doc.file_name();
  file.name = r.Name("name", Presence::kRequired).value_or("");
  file.description = r.String("description", Presence::kRequired).value_or("");
  RequireNonEmpty(r, "description", file.description);
  ReadBackends(r, file);
  if (r.ok() && !r.Has("operators")) r.FailAtKey(r.pointer(), "operators", "missing");
  if (!r.ok()) return r.status();
  const JsonPointer ptr = r.PointerTo("operators");
  const nlohmann::json& list = doc.root().at(ptr);
  if (!list.is_array()) return doc.ErrorAt(ptr, fmt::format("expected array, got {}", JsonTypeName(list)));
  if (list.empty()) return doc.ErrorAt(ptr, "must not be empty");
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    std::optional<MutationOperator> op = ReadOperator(r, ptr / i);
    if (!op) break;
    if (auto [it, fresh] = seen.emplace(op->name, i); !fresh) {
      r.FailAt(ptr / i / "name", fmt::format("duplicate operator name \"{}\" (also at {})", op->name,
                                             (ptr / it->second).to_string()));
    }
    file.operators.push_back(std::move(*op));
  }
  if (!r.ok()) return r.status();
  return file;
}

StatusOr<MutationOperatorFile> LoadMutationOperators(const std::string& path) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  return ParseMutationOperators(*doc);
}

StatusOr<MutationOperatorFile> FindMutationOperators(const std::string& dir, Backend backend) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  }
  if (ec) return Status::Error(fmt::format("mutation operators: reading {}: {}", dir, ec.message()));
  std::sort(paths.begin(), paths.end());
  std::optional<MutationOperatorFile> found;
  std::set<std::string> served;
  for (const fs::path& path : paths) {
    StatusOr<MutationOperatorFile> file = LoadMutationOperators(path.string());
    if (!file.ok()) return file.status();
    for (Backend b : file->backends) served.insert(std::string(NameOf(b)));
    if (std::find(file->backends.begin(), file->backends.end(), backend) == file->backends.end()) continue;
    if (found) {
      return Status::Error(fmt::format("mutation operators: backend \"{}\" is served by both {} and {}",
                                       NameOf(backend), found->source_path, file->source_path));
    }
    found = std::move(*file);
  }
  if (!found) {
    return Status::Error(fmt::format("no mutation operators for backend \"{}\" in {} (it has operators for: {})",
                                     NameOf(backend), dir, served.empty() ? "none" : fmt::format("{}", fmt::join(served, ", "))));
  }
  return std::move(*found);
}

}  // namespace sandprobe
