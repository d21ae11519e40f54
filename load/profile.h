// Profile: how to run the probe inside one sandbox, as argv templates (data, not code).
//
// A profile names no policy rules: it only says how to start a sandbox, get the probe in and
// clean up. Validation here is structural (fields, lifecycle shape, placeholders); whether the
// sandbox keeps the promises is what a run finds out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/probe_runtime.h"
#include "load/json_source.h"
#include "model/policy_enums.h"
#include "model/status.h"

namespace sandprobe {

// How sandbox instances live.
enum class Lifecycle {
  kOneShot,  // "oneshot": one `run` per probe launch; the sandbox ends with the probe
  kSession,  // "session": `start` once, `exec` per launch, `stop` at the end
};
std::string_view LifecycleName(Lifecycle lifecycle);  // "oneshot" / "session"

// Finds leftovers of a run (e.g. containers labelled with {run_id}) when it ends.
struct SweepSpec {
  std::vector<std::string> list;    // prints the ids of leftovers, one per line
  std::vector<std::string> remove;  // run once per id, with {id} replaced by it
};

// Host-side readings after each probe launch (JSON "inspect"): `argv` runs after the probe
// ended and before `cleanup` (so a container still exists: the run template must not use
// --rm); its stdout is parsed as JSON and each `readings` entry (name -> JSON pointer, e.g.
// "oom_killed": "/0/State/OOMKilled") becomes a host reading next to the probe's measurement.
// JSON "inspect"."settle": read again while the readings still equal `while_readings` (each
// name -> the JSON value it has), up to `tries` more times, `every_ms` apart. For a reading the
// engine records from an event that can arrive after the container's exit: docker sets
// OOMKilled when containerd's OOM event reaches it, which under load may be after the exit
// event, so an OOM-killed container can read exit 137 with OOMKilled false for a moment.
struct InspectSettle {
  std::map<std::string, nlohmann::json> while_readings;
  int tries = 0;
  int every_ms = 0;
};

struct InspectSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> readings;
  std::optional<InspectSettle> settle;
};

// JSON "envelope": the harness's own bounds around what it starts directly (host, bwrap,
// firejail), applied to probe launches only (see LaunchEnvelope). All optional, > 0; keep
// them above the resource probes' ceilings so only a runaway probe meets them.
struct EnvelopeSpec {
  // RLIMIT_AS: the address space, not memory in use, 1..2^40. Leave it out for a runtime that
  // reserves large virtual ranges up front: V8 (Deno, Node) aborts at start under 2 GiB
  // ("Oilpan: CagedHeap reservation"), so the loader refuses it with a "js" probe; the resource
  // probes' own ceilings and `pids` still bound a runaway probe.
  std::optional<std::int64_t> address_space_mib;
  std::optional<std::int64_t> open_files;     // RLIMIT_NOFILE, 16..2147483584 (nr_open's max)
  std::optional<std::int64_t> file_size_mib;  // RLIMIT_FSIZE, 1..2^40
  std::optional<std::int64_t> cpu_seconds;    // RLIMIT_CPU, 1..31536000 (a year)
  std::optional<std::int64_t> pids;           // pids.max of a per-launch pids cgroup, 1..2^22
};

// One entry of JSON "canaries_in": a host directory the sandbox mounts, where the harness plants
// a canary file for the run (witness_mounted_canary.cc), so the run proves whether the
// directories the user mounts leak. JSON: "DIR" (seen at the same path inside) or
// {"host": "DIR", "inside": "PATH"}; both may use profile vars ({home}), and must be absolute.
struct CanaryDir {
  std::string host;    // the host directory (placeholders kept)
  std::string inside;  // where the sandbox sees it; the host path when the profile omits it
  std::string where;   // "profile.json:12:5 /canaries_in/0", for errors at plant time
};

// JSON "environment": what the probe launches (run, or a session's exec) start with.
//   kInherit ("inherit", the default): the harness's environment plus the run's canary env
//     secret, which env.secret then looks for inside the sandbox.
//   kEmpty ("empty"): nothing at all, as under `env -i` (LaunchSpec::empty_environment), so no
//     process of the launch gets the secret. bwrap needs it, not only --clearenv: with
//     --unshare-pid bwrap is pid 1 inside and keeps the environment it was started with,
//     readable in /proc/1/environ. A profile saying so needs no `env -i` in its argv.
enum class ProbeEnvironment { kInherit, kEmpty };

// JSON "lab": how the sandbox meets the egress lab (issue 28) in a run whose policy's
// network.allow names host names.
//   kNone (absent, the default): it does not; such allow entries are skipped as untested.
//   kJoin ("join"): the launcher's own child runs in a network namespace joined to the lab, with
//     the lab's resolv.conf and hosts bind-mounted in a private mount namespace (launch/launcher.h
//     LabJoin), so the sandbox's own filter or proxy works as on a real host. Process sandboxes
//     only (host, bwrap, firejail, other): a daemon-run container is started by the daemon, not
//     by the launcher's child.
//   kDockerGateway ("docker-gateway"): docker, podman and gvisor (through docker) profiles: the run
//     starts a lab gateway container whose network namespace is joined to the lab
//     (run/run_lab_gateway.h); the profile's containers use it with `--network {lab_network}`
//     ("container:ID": the gateway's links and its resolv.conf, the lab's resolvers) and may
//     pass `--dns {lab_dns}` (the lab's IPv4 resolver) where they have a network of their own;
//     {lab_resolv_conf} is a host file saying the lab's resolvers, to bind over /etc/resolv.conf
//     where docker would write its own (a user-defined network's 127.0.0.11). Only such a
//     profile may use these placeholders.
enum class LabMode { kNone, kJoin, kDockerGateway };

// JSON "lab_gateway" (only with "lab": "docker-gateway"): what the run sets up around its lab
// gateway for a sandbox whose egress goes through a container of its own (a proxy).
//   "internal_network": true: the gateway is started on a docker --internal network made for
//     the run (a /28 of 203.0.113.0/24 chosen per run, run/run_lab_gateway.h LabInternalSubnets;
//     the gateway container at its second host; no route anywhere but that subnet), instead of
//     with no network; {lab_internal_network} names it and
//     {lab_gateway_ip} is the gateway's address there. Probe containers on that network reach
//     only what listens at {lab_gateway_ip}; the lab itself only from the gateway's namespace.
//   "services": argvs run once, in order, right after the gateway is up (each must exit 0):
//     containers that share its namespace (`--network {lab_network}`), such as the proxy. They
//     must carry the run's label (the profile's sweep) and be removed by the profile's teardown.
struct LabGatewaySpec {
  bool internal_network = false;
  std::vector<std::vector<std::string>> services;
};

// When a profile's `requires` runs.
//   kBefore ("before"): once, before the first launch; a failure means no launch at all.
//   kOnFailure ("on_failure"): only after a probe launch that did not complete, to tell a
//     missing backend from a failing sandbox. It saves a launch per run, so a profile may choose
//     it only where trying a launch on a missing backend is harmless: a binary not found, a
//     docker image with `--pull never` (without it, docker would pull from a public registry).
enum class PreflightWhen { kBefore, kOnFailure };

// JSON "probe_exit": where a probe launch's status comes from.
//   kProcess ("process", the default): the sandbox process's exit status (a final exit status
//     line, contract/frame_reader.h, stands for it when the process exited 0).
//   kExitLine ("exit_line"): the final `@@sandprobe-exit N` line, which the profile promises
//     (a VM's init writes it: the VM monitor exits 0 on a guest panic too). A launch without a
//     valid last one is incomplete, whatever the process's exit status (families/batch_result.h).
enum class ProbeExit { kProcess, kExitLine };

// JSON "probe": which probe the sandbox runs. A runtime name ("native", the default; "wasi",
// "js", "python") is this build's probe of that runtime, from its own directory (load/data_dir.h:
// build/probe, build/probe-js, ...; installed lib/sandprobe, lib/sandprobe-js, ...): the run
// checks the file's SHA-256 and the hello's build id against the build's. Anything with a '/'
// is a probe file of the user's (relative to the profile's directory): its hash is pinned when
// the run starts, and every launch's hello must name one runtime and build id; its families are
// not known before a launch, so the suite must plan only families it implements.
// {probe_dir} is the directory holding the probe, {probe} (probe_path) its path inside.
struct ProbeChoice {
  ProbeRuntime runtime = ProbeRuntime::kNative;  // when `file` is empty
  std::string file;                              // a user's probe file, absolute or profile-relative resolved
};

// JSON "workspace_owner": {"uid": 1000, "gid": 1000}: the host uid and gid the sandbox's
// processes write {workspace} as (docker --user 1000:1000 without user-namespace remapping:
// 1000; bwrap started by setpriv --reuid 65534: 65534). The run gives the workspace to them and
// to no one else (run/workspace_owner.h). Absent: the sandbox writes as the harness's own user
// (host, firejail, codex, a bwrap root starts, root in a container), and the workspace is the
// harness's alone.
struct WorkspaceOwner {
  std::uint32_t uid = 0;  // 0..2^32-2
  std::uint32_t gid = 0;
};

struct Profile {
  std::string name;           // [a-z0-9][a-z0-9._-]*, required
  std::string description;    // required, non-empty
  // JSON "backend" (required): which kind of sandbox, for remediation hints and the witnesses.
  Backend backend = Backend::kOther;
  std::string source_path;    // the file it was loaded from
  // JSON "policy": the policy this sandbox is meant to keep, resolved relative to the profile
  // file's directory; optional (empty when absent).
  std::string policy_path;
  // JSON "requires": argvs that must all exit 0 (the preflight); empty means always ready.
  std::vector<std::vector<std::string>> requirements;
  // JSON "preflight": when `requires` runs (see PreflightWhen); default "before".
  PreflightWhen preflight = PreflightWhen::kBefore;
  // JSON "install_hint": how to install the backend, e.g. "apt-get install bubblewrap";
  // optional.
  std::string requires_hint;
  // JSON "version": argv whose first line of output names the backend's version, e.g.
  // ["docker", "version", "--format", "{{.Server.Version}}"]; optional. Run once per run (by
  // the privilege witness) so remediation fits the installed backend and the report's host
  // object records it. Taken literally: no placeholders ("{{...}}" is docker's own template).
  std::vector<std::string> version;
  Lifecycle lifecycle = Lifecycle::kOneShot;  // JSON "lifecycle": "oneshot" | "session"
  ProbeEnvironment environment = ProbeEnvironment::kInherit;  // JSON "environment"; see above
  ProbeExit probe_exit = ProbeExit::kProcess;                 // JSON "probe_exit"; see above
  ProbeChoice probe;  // JSON "probe"; see ProbeChoice
  // JSON "probe_path": in-sandbox path of the probe binary; may use {probe_dir}; required.
  std::string probe_path;
  // JSON "workspace_path": where the run's {workspace} appears inside; default "/workspace".
  // Absolute, or "{workspace}" (the host workspace, for sandboxes that see the host's paths)
  // followed by nothing or "/..."; no other placeholder.
  std::string workspace_path = "/workspace";
  // JSON "workspace_owner": who writes the workspace, when not the harness's user; see above.
  std::optional<WorkspaceOwner> workspace_owner;
  // JSON "injection": how the probe gets in: "ro-bind" | "image" | "copy" | "host-path";
  // required, so the profile says it does not weaken the sandbox to get the probe in. Every
  // kind but "image" must take the probe from {probe_dir} (CheckInjection): ro-bind and copy in
  // run/start/exec, host-path in probe_path; otherwise whatever file is at probe_path inside
  // (an image's own) would run in its place. An image's probe is checked by its hello only.
  std::string injection;
  // Oneshot only (required there): contains {probe} and the element {probe_args...}.
  std::vector<std::string> run;
  // Session only (all three required there); `exec` contains {probe} and {probe_args...}.
  std::vector<std::string> start, exec, stop;
  // Run after each instance; optional. It must remove everything the instance made: when
  // every cleanup exits 0 (and no launch was cut short) the end-of-run sweep is skipped.
  std::vector<std::vector<std::string>> cleanup;
  // Run once at the end of a run, after the last cleanup: what outlives instances on purpose
  // (a session's named volume). Optional.
  std::vector<std::vector<std::string>> teardown;
  // JSON "sweep": one spec or an array; run at the end of a run (and by `sandprobe sweep` for a
  // dead run). Optional.
  std::vector<SweepSpec> sweeps;
  std::optional<InspectSpec> inspect;             // host readings per probe launch; optional
  std::optional<EnvelopeSpec> envelope;           // bounds for direct launches; optional
  // User placeholders: {name} in any argv becomes the value (taken literally). Names are
  // [a-z_][a-z0-9_]* and may not shadow a built-in placeholder.
  std::map<std::string, std::string> vars;
  // JSON "canaries_in": host directories (CanaryDir) to plant a canary file in before the first
  // launch (O_CREAT|O_EXCL, random name; removed after the run, or by `sandprobe sweep`); each
  // becomes a denied read check "fs.read.denied:mounted-canary:DIR". Optional, at most 16.
  std::vector<CanaryDir> canaries_in;
  int timeout_seconds = 60;  // per launch, 1..3600
  nlohmann::json raw;        // as loaded
  LabMode lab = LabMode::kNone;  // JSON "lab"; see LabMode
  LabGatewaySpec lab_gateway;    // JSON "lab_gateway"; see LabGatewaySpec
};

// Loads and validates a profile; the first error is returned as "file:line:col: /ptr: what".
StatusOr<Profile> LoadProfile(const std::string& path);
StatusOr<Profile> ParseProfile(const JsonDocument& doc);

}  // namespace sandprobe
