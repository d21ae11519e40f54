// Mutation operators: named one-variable edits of a sandbox profile that weaken the sandbox the
// way real configurations do (`--pid host`, a dropped `--cap-drop ALL`, a bwrap without
// `--unshare-net`). Data, one file per backend class: sandboxes/mutations/docker.json serves the
// profiles whose "backend" is docker, podman or gvisor, bwrap.json the bwrap ones, ...
// (docs/mutation-operators.schema.json). `sandprobe mutate` runs the audit of a profile and of
// each mutant, and lists the mutants no verdict told apart from the profile (mutate/mutate.h).
//
// An edit is a short list of typed steps over the argv that makes the sandbox (a oneshot
// profile's `run`, a session profile's `start`) or over one top-level profile field; applying
// them is profile_mutation.h. The loader checks everything it can before a run: unknown keys,
// kinds and backends, empty names, duplicate operator names, a regex that does not compile,
// each error with file:line:col and the JSON pointer, like every loader in load/.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/json_document.h"
#include "model/policy_enums.h"
#include "model/status.h"

namespace sandprobe {

// JSON {"insert": {"after" | "before": ANCHOR, "args": [...]}}: `args` go right after (before)
// the first argv element equal to ANCHOR (the template text, e.g. "run", "bwrap", "{probe}").
// Does not apply when the anchor is absent or `args` already stand there in a row.
struct InsertArgs {
  std::string anchor;
  bool before = false;
  std::vector<std::string> args;
};

// JSON {"remove": {"flag": F, "values": N, "match": GLOB}}: every `F V1..VN` (N from 0 to 3,
// default 0) and every `F=V1` goes; with `match`, only those whose first value matches the
// fnmatch(3) glob (`--security-opt` with "no-new-privileges*").
struct RemoveFlag {
  std::string flag;
  int values = 0;
  std::string match;  // "" = any
};

// JSON {"replace_value": {"flag": F, "to": V, "match": GLOB}}: the value of every `F X` / `F=X`
// (whose X matches `match`, when given) becomes V.
struct ReplaceValue {
  std::string flag;
  std::string to;
  std::string match;  // "" = any
};

// JSON {"rewrite_value": {"flag": F, "regex": R, "to": S}}: within the value of every `F X`,
// each match of the ECMAScript regex R is replaced by S ($& and $1 allowed):
// `--tmpfs /tmp:size=100m` with "size=[^,]*" -> "size=1g". Applies only where R matches.
struct RewriteValue {
  std::string flag;
  std::string regex_text;
  std::regex regex;
  std::string to;
};

// JSON {"replace_arg": {"arg": A, "with": [...]}}: every element equal to A becomes the list
// (bwrap's `--unshare-all` becomes the namespaces it stands for, less one).
struct ReplaceArg {
  std::string arg;
  std::vector<std::string> with;
};

// JSON {"remove_span": {"from": A, "until": B}}: the elements from the first A up to, not
// including, the first B after it (a `setpriv ... bwrap` wrapper, leaving bwrap).
struct RemoveSpan {
  std::string from;
  std::string until;
};

// JSON {"set_field": {"field": K, "from": X, "to": Y}}: the top-level profile field K becomes Y
// where it is X now (bwrap's "environment": "empty" -> "inherit"). K may not be an argv field
// or the profile's name: the edit language has its own steps for those.
struct SetField {
  std::string field;
  nlohmann::json from;
  nlohmann::json to;
};

using EditStep = std::variant<InsertArgs, RemoveFlag, ReplaceValue, RewriteValue, ReplaceArg, RemoveSpan, SetField>;

// JSON "equivalent" (optional) items: {"profile": NAME, "holds_while": [[ARGS...], ...], "why":
// TEXT}. On the profile named NAME the operator's mutant is an equivalent mutant: no process in
// that sandbox could use what the edit adds, for the reason `why` gives (it must name what stops
// every process: the uid, no_new_privs, the filter...). The claim rests on parts of the
// profile, so it holds only while each `holds_while` run of elements stands in a row in the
// profile's sandbox argv (`run`, or a session's `start`): drop one (`--user 1000:1000`) and the
// mutant is judged again like any other. A mutant with a claim is still audited, and a kill
// wins: a claim the checks contradict is a wrong claim. Only a survivor becomes "equivalent",
// and it leaves the score's denominator.
struct EquivalenceClaim {
  std::string profile;
  std::vector<std::vector<std::string>> holds_while;  // non-empty, each run non-empty
  std::string why;                                    // non-empty
  std::string where;                                  // "docker.json:24:7"
};

struct MutationOperator {
  // [a-z0-9][a-z0-9-]*, unique within its file: "pid-host", "cap-add-sys-admin".
  std::string name;
  // How real configurations end up weakened this way, and what a check should see.
  std::string description;
  // JSON "edit": one step or an array of steps, applied in order; a step that does not apply
  // is passed over. The mutant is the profile with every step that applies; when none does,
  // the operator is not applicable to the profile.
  std::vector<EditStep> steps;
  nlohmann::json edit;  // "edit" as written, for the report
  // JSON "requires" (optional): argvs that must all exit 0 on this host for the mutant to be a
  // weakening at all (apparmor=unconfined where docker uses no AppArmor changes nothing). A
  // failing one makes the operator not applicable, saying which.
  std::vector<std::vector<std::string>> requirements;
  // JSON "host_values" (optional): profile variables the edit's args may use, each the first
  // line of an argv's stdout on this host (the docker socket's group: "stat -c %g
  // /var/run/docker.sock"). They are added to the mutant's "vars"; a command that fails makes
  // the operator not applicable.
  std::map<std::string, std::vector<std::string>> host_values;
  // JSON "equivalent" (optional): per profile, why its mutant is equivalent (EquivalenceClaim).
  // At most one claim per profile name.
  std::vector<EquivalenceClaim> equivalences;
  std::string where;  // "docker.json:12:5", for messages
};

struct MutationOperatorFile {
  std::string name;         // [a-z0-9][a-z0-9._-]*
  std::string description;  // required, non-empty
  std::string source_path;
  // JSON "backends": the profile "backend" values whose profiles these operators edit (a
  // profile's backend picks its file: FindMutationOperators). Non-empty, no duplicates.
  std::vector<Backend> backends;
  std::vector<MutationOperator> operators;  // non-empty
};

StatusOr<MutationOperatorFile> ParseMutationOperators(const JsonDocument& doc);
StatusOr<MutationOperatorFile> LoadMutationOperators(const std::string& path);

// The one file among `dir`'s *.json whose "backends" names `backend`. Every file there is
// loaded (a broken one is an error, as is a backend two files claim); none for the backend is
// invalid input that names the backends the directory serves.
StatusOr<MutationOperatorFile> FindMutationOperators(const std::string& dir, Backend backend);

}  // namespace sandprobe
