#include "load/profile.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "load/path_text.h"

namespace sandprobe {
namespace {

// [A-Za-z_][A-Za-z0-9_]*
bool IsVariableName(const std::string& name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}
constexpr std::string_view kProbeArgs = "{probe_args...}";

// Placeholders every argv may use; {probe_args...}, {probe} and {id} have their own rules.
// {canary_env} is the name of the run's canary env secret, for a sandbox that passes named
// variables through (`docker run -e NAME`), as a mutation operator does.
bool IsCommonPlaceholder(std::string_view name) {
  return name == "run_id" || name == "instance" || name == "probe_dir" || name == "workspace" ||
         name == "canary_env" || name == "lab_network" || name == "lab_dns" || name == "lab_internal_network" ||
         name == "lab_gateway_ip" || name == "lab_resolv_conf";
}

// Only a "docker-gateway" profile's run has these (CheckLabPlaceholders); the last two only with
// an internal network (LabGatewaySpec).
constexpr std::string_view kLabPlaceholders[] = {"{lab_network}", "{lab_dns}", "{lab_resolv_conf}",
                                                 "{lab_internal_network}", "{lab_gateway_ip}"};
constexpr std::string_view kInternalNetworkPlaceholders[] = {"{lab_internal_network}", "{lab_gateway_ip}"};

// Which of the restricted placeholders the field being checked may use.
struct PlaceholderRules {
  bool probe = true;       // {probe}: not in probe_path itself
  bool probe_args = false;  // {probe_args...}: only run / exec, as a whole element
  bool id = false;          // {id}: only sweep.remove
};

// Checks every `{name}` in `text`, reading it the way ExpandString (placeholders.cc) will:
// `{` up to the next `}` is a placeholder (even `{}`); a `{` with no `}` after it is literal.
void CheckPlaceholders(ObjectReader& r, const JsonPointer& ptr, const std::string& text,
                       const PlaceholderRules& rules,
                       const std::map<std::string, std::string>& vars) {
  for (std::size_t open = text.find('{'); open != std::string::npos && r.ok();
       open = text.find('{', open)) {
    std::size_t close = text.find('}', open);
    if (close == std::string::npos) return;
    std::string name = text.substr(open + 1, close - open - 1);
    open = close + 1;
    if (name == "probe_args...") {
      if (!rules.probe_args) {
        r.FailAt(ptr, "{probe_args...} is only allowed in run and exec");
      } else if (text != kProbeArgs) {
        r.FailAt(ptr, "{probe_args...} must be a whole argv element");
      }
    } else if (name == "probe") {
      if (!rules.probe) r.FailAt(ptr, "{probe} is not allowed here");
    } else if (name == "id") {
      if (!rules.id) r.FailAt(ptr, "{id} is only allowed in sweep.remove");
    } else if (!IsCommonPlaceholder(name) && !vars.contains(name)) {
      r.FailAt(ptr, fmt::format("unknown placeholder {{{}}}", name));
    }
  }
}

void CheckArgv(ObjectReader& r, const JsonPointer& ptr, const std::vector<std::string>& argv,
               const PlaceholderRules& rules, const std::map<std::string, std::string>& vars) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    CheckPlaceholders(r, ptr / i, argv[i], rules, vars);
  }
}

// `run` and `exec` start the probe: they must name it and pass its arguments through.
void CheckLaunchArgv(ObjectReader& r, const std::string& key,
                     const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& vars) {
  CheckArgv(r, r.PointerTo(key), argv, {.probe_args = true}, vars);
  bool has_probe = false;
  int probe_args = 0;
  for (const std::string& arg : argv) {
    has_probe = has_probe || arg.find("{probe}") != std::string::npos;
    probe_args += arg == kProbeArgs ? 1 : 0;
  }
  if (!has_probe) r.FailAt(r.PointerTo(key), "must contain {probe} (the probe's path inside)");
  if (probe_args != 1) {
    r.FailAt(r.PointerTo(key), "must contain the element {probe_args...} exactly once");
  }
}

// Where the probe is inside the sandbox: absolute, or under {probe_dir} (a host-path
// injection), never relative (it would resolve against whatever directory the sandbox starts
// in), and without invisible characters (a path that looks like the probe's but is not).
void CheckProbePath(ObjectReader& r, const Profile& p) {
  if (!r.ok()) return;
  constexpr std::string_view kProbeDir = "{probe_dir}/";
  if (!p.probe_path.starts_with('/') && !p.probe_path.starts_with(kProbeDir)) {
    r.FailAt(r.PointerTo("probe_path"),
             fmt::format("must be absolute or start with {{probe_dir}}/, got \"{}\"", p.probe_path));
  }
  for (auto [key, value] : {std::pair{"probe_path", &p.probe_path}, std::pair{"workspace_path", &p.workspace_path}}) {
    if (!r.ok()) return;
    if (std::optional<std::string> problem = InvisibleCharacterProblem(*value)) r.FailAt(r.PointerTo(key), *problem);
  }
}

// The policy's {workspace} paths resolve under workspace_path, so it must be absolute: "/..."
// or "{workspace}" (the run's host workspace, an absolute path) followed by nothing or "/...".
// The run expands only {workspace} here; any other placeholder would fail the run, not load.
void CheckWorkspacePath(ObjectReader& r, const std::string& path) {
  if (!r.ok()) return;
  constexpr std::string_view kWorkspace = "{workspace}";
  std::string_view rest = path;
  if (rest.starts_with(kWorkspace)) rest.remove_prefix(kWorkspace.size());
  if (rest.size() == path.size() && !rest.starts_with('/')) {
    r.FailAt(r.PointerTo("workspace_path"),
             fmt::format("must be absolute or start with {{workspace}}, got \"{}\"", path));
  } else if (!rest.empty() && !rest.starts_with('/')) {
    r.FailAt(r.PointerTo("workspace_path"), "{workspace} must be followed by nothing or \"/\"");
  } else if (rest.find_first_of("{}") != std::string_view::npos) {
    r.FailAt(r.PointerTo("workspace_path"), "only {workspace} is allowed, at the start");
  }
}

void ReadVars(ObjectReader& r, Profile& p) {
  p.vars = r.StringMap("vars", Presence::kOptional).value_or(p.vars);
  for (const auto& [name, value] : p.vars) {
    if (!IsVariableName(name)) {
      r.FailAtKey(r.PointerTo("vars"), name, "variable name must match [A-Za-z_][A-Za-z0-9_]*");
    } else if (IsCommonPlaceholder(name) || name == "probe" || name == "id") {
      r.FailAtKey(r.PointerTo("vars"), name, "variable shadows a built-in placeholder");
    }
  }
}

// run / start / exec / stop: which are required and which forbidden depends on the lifecycle.
void ReadLifecycleArgvs(ObjectReader& r, Profile& p) {
  const char* lifecycle = p.lifecycle == Lifecycle::kOneShot ? "oneshot" : "session";
  auto forbid = [&](const std::string& key, std::string_view instead) {
    if (r.Has(key)) {
      r.FailAtKey(r.pointer(), key,
                  fmt::format("not allowed with lifecycle \"{}\" (use {})", lifecycle, instead));
    }
  };
  switch (p.lifecycle) {
    case Lifecycle::kOneShot:
      for (const char* key : {"start", "exec", "stop"}) forbid(key, "run");
      p.run = r.Argv("run", Presence::kRequired).value_or(p.run);
      if (r.ok()) CheckLaunchArgv(r, "run", p.run, p.vars);
      break;
    case Lifecycle::kSession:
      forbid("run", "start, exec and stop");
      p.start = r.Argv("start", Presence::kRequired).value_or(p.start);
      p.exec = r.Argv("exec", Presence::kRequired).value_or(p.exec);
      p.stop = r.Argv("stop", Presence::kRequired).value_or(p.stop);
      CheckArgv(r, r.PointerTo("start"), p.start, {}, p.vars);
      if (r.ok()) CheckLaunchArgv(r, "exec", p.exec, p.vars);
      CheckArgv(r, r.PointerTo("stop"), p.stop, {}, p.vars);
      break;
  }
}

SweepSpec ReadOneSweep(ObjectReader& parent, const JsonPointer& ptr, const Profile& p) {
  ObjectReader r(parent.doc(), ptr, {"list", "remove"});
  SweepSpec sweep;
  sweep.list = r.Argv("list", Presence::kRequired).value_or(sweep.list);
  sweep.remove = r.Argv("remove", Presence::kRequired).value_or(sweep.remove);
  CheckArgv(r, r.PointerTo("list"), sweep.list, {}, p.vars);
  CheckArgv(r, r.PointerTo("remove"), sweep.remove, {.id = true}, p.vars);
  bool uses_id = false;
  for (const std::string& arg : sweep.remove) {
    uses_id = uses_id || arg.find("{id}") != std::string::npos;
  }
  if (r.ok() && !uses_id) r.FailAt(r.PointerTo("remove"), "must contain {id}");
  parent.Fail(r.status());
  return sweep;
}

// "sweep": one {list, remove} object, or an array of them (e.g. containers and volumes).
void ReadSweep(ObjectReader& parent, Profile& p) {
  if (!parent.Has("sweep")) return;
  JsonPointer ptr = parent.PointerTo("sweep");
  const nlohmann::json& value = parent.doc().root().at(ptr);
  if (!value.is_array()) {
    p.sweeps.push_back(ReadOneSweep(parent, ptr, p));
    return;
  }
  if (value.empty()) parent.FailAt(ptr, "must not be empty");
  for (std::size_t i = 0; i < value.size() && parent.ok(); ++i) {
    p.sweeps.push_back(ReadOneSweep(parent, ptr / i, p));
  }
}

// "teardown": argvs run once at the end of a run, after the last instance's cleanup (e.g.
// removing a named volume that outlives the session instances by design).
void ReadTeardown(ObjectReader& r, Profile& p) {
  p.teardown = r.ArgvList("teardown", Presence::kOptional).value_or(p.teardown);
  for (std::size_t i = 0; i < p.teardown.size(); ++i) {
    CheckArgv(r, r.PointerTo("teardown") / i, p.teardown[i], {}, p.vars);
  }
}

// "settle": {"while": {"exit_code": 137, "oom_killed": false}, "tries": 20, "every_ms": 100}.
// Each name in "while" is one of the readings, its value a JSON scalar; at most 5 s of waiting.
InspectSettle ReadInspectSettle(ObjectReader& parent, const InspectSpec& inspect) {
  ObjectReader r(parent.doc(), parent.PointerTo("settle"), {"while", "tries", "every_ms"});
  InspectSettle settle;
  settle.tries = static_cast<int>(r.Int("tries", Presence::kRequired, 1, 50).value_or(0));
  settle.every_ms = static_cast<int>(r.Int("every_ms", Presence::kRequired, 1, 1000).value_or(0));
  if (r.ok() && settle.tries * settle.every_ms > 5000) {
    r.FailAtKey(r.pointer(), "tries", "tries × every_ms must be at most 5000 (ms of waiting)");
  }
  const JsonPointer while_ptr = r.PointerTo("while");
  if (r.ok() && !r.Has("while")) r.FailAt(r.pointer(), "missing required key \"while\"");
  if (r.ok()) {
    const nlohmann::json& value = r.doc().root().at(while_ptr);
    if (!value.is_object() || value.empty()) {
      r.FailAt(while_ptr, "must be a non-empty object: reading name -> the value that means \"not settled yet\"");
    } else {
      for (const auto& [name, expected] : value.items()) {
        if (!inspect.readings.count(name)) {
          r.FailAtKey(while_ptr, name, "is not one of this inspect's readings");
        } else if (!expected.is_primitive() || expected.is_null()) {
          r.FailAtKey(while_ptr, name, "must be a string, number or boolean");
        } else {
          settle.while_readings[name] = expected;
        }
        if (!r.ok()) break;
      }
    }
  }
  parent.Fail(r.status());
  return settle;
}

void ReadInspect(ObjectReader& parent, Profile& p) {
  if (!parent.Has("inspect")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("inspect"), {"argv", "readings", "settle"});
  // settle's own keys first, so an unknown one there is named whatever else is missing.
  if (r.ok() && r.Has("settle")) {
    ObjectReader keys(r.doc(), r.PointerTo("settle"), {"while", "tries", "every_ms"});
    if (!keys.ok()) return parent.Fail(keys.status());
  }
  InspectSpec inspect;
  inspect.argv = r.Argv("argv", Presence::kRequired).value_or(inspect.argv);
  CheckArgv(r, r.PointerTo("argv"), inspect.argv, {}, p.vars);
  inspect.readings = r.StringMap("readings", Presence::kRequired).value_or(inspect.readings);
  for (const auto& [name, pointer] : inspect.readings) {
    if (r.ok() && !pointer.empty() && pointer[0] != '/') {
      r.FailAtKey(r.PointerTo("readings"), name, "must be a JSON pointer (\"/0/State/OOMKilled\")");
    }
  }
  if (r.ok() && r.Has("settle")) inspect.settle = ReadInspectSettle(r, inspect);
  p.inspect = std::move(inspect);
  parent.Fail(r.status());
}

// Runtimes whose start reserves a large address range (V8's heap cage: Deno and Node abort
// under a 2 GiB RLIMIT_AS), where an address-space limit stops the runtime, not a runaway probe.
constexpr ProbeRuntime kReservesAddressSpace[] = {ProbeRuntime::kJs};

void ReadEnvelope(ObjectReader& parent, Profile& p) {
  if (!parent.Has("envelope")) return;
  const JsonPointer ptr = parent.PointerTo("envelope");
  const nlohmann::json& value = parent.doc().root().at(ptr);
  if (value.is_object() && value.contains("memory_mib")) {
    return parent.FailAtKey(ptr, "memory_mib",
                            "renamed address_space_mib: it sets RLIMIT_AS, the address space a process "
                            "may map, not the memory it uses");
  }
  ObjectReader r(parent.doc(), ptr,
                 {"address_space_mib", "open_files", "file_size_mib", "cpu_seconds", "pids"});
  // Ranges as documented in EnvelopeSpec; 2^40 MiB in bytes still fits an rlim_t.
  constexpr std::int64_t kMaxMib = 1LL << 40;
  EnvelopeSpec e;
  e.address_space_mib = r.Int("address_space_mib", Presence::kOptional, 1, kMaxMib);
  const bool reserves = p.probe.file.empty() &&
                        std::find(std::begin(kReservesAddressSpace), std::end(kReservesAddressSpace),
                                  p.probe.runtime) != std::end(kReservesAddressSpace);
  if (r.ok() && e.address_space_mib && reserves) {
    r.FailAt(r.PointerTo("address_space_mib"),
             fmt::format("the {} probe's runtime reserves a large address range at start (V8's heap "
                         "cage: it aborts under 2 GiB); leave address_space_mib out (pids and the resource "
                         "probes' own ceilings still bound a runaway probe)",
                         ProbeRuntimeName(p.probe.runtime)));
  }
  e.open_files = r.Int("open_files", Presence::kOptional, 16, 2147483584);  // nr_open's max
  e.file_size_mib = r.Int("file_size_mib", Presence::kOptional, 1, kMaxMib);
  e.cpu_seconds = r.Int("cpu_seconds", Presence::kOptional, 1, 365LL * 24 * 3600);  // a year
  e.pids = r.Int("pids", Presence::kOptional, 1, 1LL << 22);  // PID_MAX_LIMIT
  p.envelope = e;
  parent.Fail(r.status());
}

void ReadWorkspaceOwner(ObjectReader& parent, Profile& p) {
  if (!parent.Has("workspace_owner")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("workspace_owner"), {"uid", "gid"});
  constexpr std::int64_t kMaxId = 4294967294LL;  // (uid_t)-1 means "unchanged" to chown
  std::optional<std::int64_t> uid = r.Int("uid", Presence::kRequired, 0, kMaxId);
  std::optional<std::int64_t> gid = r.Int("gid", Presence::kRequired, 0, kMaxId);
  if (uid && gid) p.workspace_owner = WorkspaceOwner{static_cast<std::uint32_t>(*uid), static_cast<std::uint32_t>(*gid)};
  parent.Fail(r.status());
}

// "canaries_in": a string or {"host", "inside"} per entry; only profile vars as placeholders (a
// run's own directories hold no user data to prove anything about).
void ReadCanariesIn(ObjectReader& parent, Profile& p) {
  if (!parent.Has("canaries_in")) return;
  constexpr std::size_t kMaxCanaryDirs = 16;
  JsonPointer ptr = parent.PointerTo("canaries_in");
  const nlohmann::json& list = parent.doc().root().at(ptr);
  if (!list.is_array()) return parent.FailAt(ptr, "expected array");
  if (list.size() > kMaxCanaryDirs) return parent.FailAt(ptr, "at most 16 directories");
  for (std::size_t i = 0; i < list.size() && parent.ok(); ++i) {
    CanaryDir dir{.where = parent.doc().Where(ptr / i) + " " + (ptr / i).to_string()};
    JsonPointer host_ptr = ptr / i, inside_ptr = ptr / i;
    if (list[i].is_string()) {
      dir.host = dir.inside = parent.StringAt(ptr / i, list[i]).value_or("");
    } else if (list[i].is_object()) {
      ObjectReader r(parent.doc(), ptr / i, {"host", "inside"});
      dir.host = r.String("host", Presence::kRequired).value_or("");
      dir.inside = r.String("inside", Presence::kOptional).value_or(dir.host);
      host_ptr = r.PointerTo("host");
      inside_ptr = r.Has("inside") ? r.PointerTo("inside") : host_ptr;
      parent.Fail(r.status());
    } else {
      parent.FailAt(ptr / i, "expected a directory (string) or {\"host\", \"inside\"}");
    }
    for (const auto& [value, at] : {std::pair{dir.host, host_ptr}, std::pair{dir.inside, inside_ptr}}) {
      if (!parent.ok()) break;
      if (value.empty() || (value[0] != '/' && value[0] != '{')) {
        parent.FailAt(at, "must be an absolute path");
        break;
      }
      for (std::size_t open = value.find('{'); open != std::string::npos; open = value.find('{', open + 1)) {
        std::size_t close = value.find('}', open);
        if (close == std::string::npos) break;
        std::string name = value.substr(open + 1, close - open - 1);
        if (!p.vars.contains(name)) {
          parent.FailAt(at, fmt::format("unknown placeholder {{{}}} (only profile vars may be used here)", name));
          break;
        }
      }
    }
    p.canaries_in.push_back(std::move(dir));
  }
}

// "probe": a runtime name or a file path (ProbeChoice); the file is resolved against the
// profile's directory, as "policy" is.
void ReadProbe(ObjectReader& r, Profile& p) {
  std::optional<std::string> probe = r.String("probe", Presence::kOptional);
  if (!probe) return;
  if (std::optional<ProbeRuntime> runtime = ParseProbeRuntime(*probe)) {
    p.probe.runtime = *runtime;
    return;
  }
  if (probe->find('/') == std::string::npos) {
    std::vector<std::string_view> names;
    for (const ProbeRuntimeRow& row : ProbeRuntimes()) names.push_back(row.name);
    return r.FailAt(r.PointerTo("probe"),
                    fmt::format("unknown probe \"{}\": a runtime ({}) or a probe file's path (with a '/')",
                                *probe, fmt::join(names, ", ")));
  }
  std::filesystem::path dir = std::filesystem::path(r.doc().file_name()).parent_path();
  p.probe.file = (dir / *probe).lexically_normal().string();
}

bool Mentions(const std::vector<std::string>& argv, std::string_view placeholder) {
  return std::any_of(argv.begin(), argv.end(),
                     [placeholder](const std::string& arg) { return arg.find(placeholder) != std::string::npos; });
}

// The probe that runs must be the one the run injects: unless the image carries it, the
// injection must take it from {probe_dir}, or whatever file is at probe_path inside the
// sandbox (an image's own) would answer in its place.
void CheckInjection(ObjectReader& r, const Profile& p) {
  if (!r.ok() || p.injection == "image") return;
  constexpr std::string_view kProbeDir = "{probe_dir}";
  const bool host_path = p.injection == "host-path";
  const bool injected = host_path ? p.probe_path.find(kProbeDir) != std::string::npos
                                  : Mentions(p.run, kProbeDir) || Mentions(p.start, kProbeDir) ||
                                        Mentions(p.exec, kProbeDir);
  if (injected) return;
  const char* where = host_path ? "probe_path" : (p.lifecycle == Lifecycle::kOneShot ? "run" : "start and exec");
  r.FailAt(r.PointerTo("injection"),
           fmt::format("\"{}\", but {} never uses {{probe_dir}}: the sandbox would run whatever file is at "
                       "probe_path instead of the probe this run injects; {} {{probe_dir}} there, or say "
                       "\"image\" if the image carries the probe",
                       p.injection, where, host_path ? "start probe_path with" : "bind or copy"));
}

Lifecycle ParseLifecycle(std::string_view name) {
  return name == "session" ? Lifecycle::kSession : Lifecycle::kOneShot;
}

// JSON "lab" (LabMode): "join" for sandboxes the launcher's own child becomes, "docker-gateway"
// for containers docker starts.
void ReadLab(ObjectReader& r, Profile& p) {
  const std::string mode = r.Enum("lab", Presence::kOptional, {"join", "docker-gateway"}).value_or("");
  if (mode.empty()) return;
  p.lab = mode == "join" ? LabMode::kJoin : LabMode::kDockerGateway;
  bool container = false;
  switch (p.backend) {
    case Backend::kHost:
    case Backend::kBwrap:
    case Backend::kFirejail:
    case Backend::kOther:
      break;
    case Backend::kDocker:
    case Backend::kPodman:
    case Backend::kGvisor:
      container = true;
      break;
  }
  if (p.lab == LabMode::kJoin && container) {
    r.FailAt(r.PointerTo("lab"),
             fmt::format("\"join\" is for process sandboxes: a {} container is started by its daemon, not in the "
                         "launcher's lab namespace; a docker or gvisor profile says \"docker-gateway\" and runs its "
                         "containers with --network {{lab_network}}",
                         NameOf(p.backend)));
  } else if (p.lab == LabMode::kDockerGateway && !container) {
    r.FailAt(r.PointerTo("lab"), fmt::format("\"docker-gateway\" is for docker, podman and gvisor (through docker) "
                                             "profiles, not {}: a process sandbox says \"join\"",
                                             NameOf(p.backend)));
  }
}

// JSON "lab_gateway" (LabGatewaySpec), for a "docker-gateway" profile only.
// The object's own keys are checked first: a typo in it is named whatever the lab mode.
void ReadLabGateway(ObjectReader& parent, Profile& p) {
  if (!parent.Has("lab_gateway")) return;
  ObjectReader r(parent.doc(), parent.PointerTo("lab_gateway"), {"internal_network", "services"});
  p.lab_gateway.internal_network = r.Bool("internal_network", Presence::kOptional).value_or(false);
  p.lab_gateway.services = r.ArgvList("services", Presence::kOptional).value_or(p.lab_gateway.services);
  for (std::size_t i = 0; i < p.lab_gateway.services.size(); ++i) {
    CheckArgv(r, r.PointerTo("services") / i, p.lab_gateway.services[i], {}, p.vars);
  }
  parent.Fail(r.status());
  if (p.lab != LabMode::kDockerGateway) {
    parent.FailAt(parent.PointerTo("lab_gateway"), "needs \"lab\": \"docker-gateway\"");
  } else if (p.lab_gateway.internal_network && p.backend == Backend::kPodman) {
    // run/run_lab_gateway.cc LabGatewayEngineFor: podman's row makes no internal network.
    parent.FailAt(parent.PointerTo("lab_gateway") / "internal_network",
                  "is for docker and gvisor profiles: podman's gateway makes no --internal network (its `network "
                  "create` prints a name, not an id, and makes a CNI bridge, not docker's internal network)");
  }
}

// The lab placeholders have a value only in a "docker-gateway" profile's run, and the internal
// network's only with "internal_network": true.
void CheckLabPlaceholders(ObjectReader& r, const Profile& p) {
  std::vector<std::pair<std::string_view, const char*>> missing;  // placeholder, what it needs
  if (p.lab != LabMode::kDockerGateway) {
    for (std::string_view placeholder : kLabPlaceholders) missing.emplace_back(placeholder, "\"lab\": \"docker-gateway\"");
  } else if (!p.lab_gateway.internal_network) {
    for (std::string_view placeholder : kInternalNetworkPlaceholders) {
      missing.emplace_back(placeholder, "\"lab_gateway\": {\"internal_network\": true}");
    }
  }
  std::vector<std::pair<std::string, const std::vector<std::string>*>> argvs = {
      {"run", &p.run}, {"start", &p.start}, {"exec", &p.exec}, {"stop", &p.stop}};
  const std::pair<const char*, const std::vector<std::vector<std::string>>*> lists[] = {
      {"requires", &p.requirements}, {"cleanup", &p.cleanup}, {"teardown", &p.teardown},
      {"lab_gateway", &p.lab_gateway.services}};
  for (const auto& [key, list] : lists) {
    for (const std::vector<std::string>& argv : *list) argvs.emplace_back(key, &argv);
  }
  for (const auto& [key, argv] : argvs) {
    for (const auto& [placeholder, needs] : missing) {
      if (!Mentions(*argv, placeholder)) continue;
      return r.FailAt(r.PointerTo(key), fmt::format("{} has a value only with {}", placeholder, needs));
    }
  }
}

}  // namespace

std::string_view LifecycleName(Lifecycle lifecycle) {
  switch (lifecycle) {
    case Lifecycle::kOneShot: return "oneshot";
    case Lifecycle::kSession: return "session";
  }
  return "?";
}

StatusOr<Profile> ParseProfile(const JsonDocument& doc) {
  ObjectReader r(doc, JsonPointer(),
                 {"name", "description", "backend", "policy", "requires", "preflight", "install_hint",
                  "lifecycle", "probe_path", "workspace_path", "workspace_owner", "injection", "run", "start", "exec",
                  "stop", "cleanup", "teardown", "sweep", "vars", "timeout_seconds", "inspect",
                  "envelope", "version", "canaries_in", "environment", "probe_exit", "probe", "lab",
                  "lab_gateway"});
  Profile p;
  p.source_path = doc.file_name();
  p.raw = doc.root();
  p.name = r.Name("name", Presence::kRequired).value_or("");
  p.description = r.String("description", Presence::kRequired).value_or("");
  if (r.ok() && p.description.empty()) r.FailAt(r.PointerTo("description"), "must not be empty");
  std::vector<std::string_view> backends;
  for (const NamedValue<Backend>& named : kBackendNames) backends.emplace_back(named.name);
  if (std::optional<std::string> backend = r.Enum("backend", Presence::kRequired, backends)) {
    p.backend = ValueOf<Backend>(*backend).value_or(Backend::kOther);
  }
  if (std::optional<std::string> policy = r.String("policy", Presence::kOptional)) {
    if (policy->empty()) r.FailAt(r.PointerTo("policy"), "must not be empty");
    std::filesystem::path dir = std::filesystem::path(doc.file_name()).parent_path();
    p.policy_path = (dir / *policy).lexically_normal().string();
  }
  p.requirements = r.ArgvList("requires", Presence::kOptional).value_or(p.requirements);
  p.requires_hint = r.String("install_hint", Presence::kOptional).value_or("");
  p.version = r.Argv("version", Presence::kOptional).value_or(p.version);
  if (r.Enum("preflight", Presence::kOptional, {"before", "on_failure"}).value_or("before") ==
      "on_failure") {
    p.preflight = PreflightWhen::kOnFailure;
  }
  if (r.Enum("environment", Presence::kOptional, {"inherit", "empty"}).value_or("inherit") ==
      "empty") {
    p.environment = ProbeEnvironment::kEmpty;
  }
  if (r.Enum("probe_exit", Presence::kOptional, {"process", "exit_line"}).value_or("process") ==
      "exit_line") {
    p.probe_exit = ProbeExit::kExitLine;
  }
  ReadLab(r, p);
  p.lifecycle = ParseLifecycle(
      r.Enum("lifecycle", Presence::kRequired, {"oneshot", "session"}).value_or(""));
  p.injection = r.Enum("injection", Presence::kRequired, {"ro-bind", "image", "copy", "host-path"})
                    .value_or("");
  ReadProbe(r, p);
  p.probe_path = r.String("probe_path", Presence::kRequired).value_or("");
  p.workspace_path = r.String("workspace_path", Presence::kOptional).value_or(p.workspace_path);
  p.timeout_seconds =
      static_cast<int>(r.Int("timeout_seconds", Presence::kOptional, 1, 3600).value_or(60));
  ReadVars(r, p);
  for (const char* key : {"probe_path", "workspace_path"}) {
    const std::string& value = std::string_view(key) == "probe_path" ? p.probe_path
                                                                     : p.workspace_path;
    if (r.ok() && value.empty()) r.FailAt(r.PointerTo(key), "must not be empty");
    CheckPlaceholders(r, r.PointerTo(key), value, {.probe = false}, p.vars);
  }
  CheckWorkspacePath(r, p.workspace_path);
  CheckProbePath(r, p);
  for (std::size_t i = 0; i < p.requirements.size(); ++i) {
    CheckArgv(r, r.PointerTo("requires") / i, p.requirements[i], {}, p.vars);
  }
  if (r.ok()) ReadLifecycleArgvs(r, p);
  p.cleanup = r.ArgvList("cleanup", Presence::kOptional).value_or(p.cleanup);
  for (std::size_t i = 0; i < p.cleanup.size(); ++i) {
    CheckArgv(r, r.PointerTo("cleanup") / i, p.cleanup[i], {}, p.vars);
  }
  if (r.ok()) ReadTeardown(r, p);
  if (r.ok()) ReadSweep(r, p);
  if (r.ok()) ReadInspect(r, p);
  if (r.ok()) ReadEnvelope(r, p);
  if (r.ok()) ReadCanariesIn(r, p);
  if (r.ok()) ReadWorkspaceOwner(r, p);
  if (r.ok()) ReadLabGateway(r, p);
  if (r.ok()) CheckLabPlaceholders(r, p);
  CheckInjection(r, p);
  if (!r.ok()) return r.status();
  return p;
}

StatusOr<Profile> LoadProfile(const std::string& path) {
  StatusOr<JsonDocument> doc = JsonDocument::Load(path);
  if (!doc.ok()) return doc.status();
  return ParseProfile(*doc);
}

}  // namespace sandprobe
