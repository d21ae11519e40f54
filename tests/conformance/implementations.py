"""The probe implementations the conformance suite runs (issue 27, item 3): one row each.

A row says how to start that probe on the host and inside a sandbox; the driver (run.py) runs
every scenario (scenarios.py) through every available row and compares what they report.

  name        the row's name in the results ("native", "js (deno)", ...)
  runtime     what its hello says in "runtime": native | js | python | wasi
  files       what goes into the probe directory, {build} / {source} / {probe} expanded (the
              native row: the built binary, passed to run.py). The driver copies them into a
              fresh directory it can bind into a sandbox (bwrap-strict binds it at /opt/sandprobe).
  command     the argv that starts the probe, before --nonce ...: {probe_dir} is the probe
              directory (on the host its real path, in a sandbox where the sandbox shows it).
              None: the slot is empty (not written yet); the driver lists it as "not run".
  sandbox_binds  extra read-only paths the runtime needs inside bwrap-strict's empty root (an
              interpreter and its libraries), bound at the same path.
  sandbox_env (optional) {name: value} the runtime needs inside bwrap-strict (set after its
              --clearenv)
  requires    executables that must exist on the host for the row to run (else "not run",
              with the reason; with SANDPROBE_REQUIRE_BACKENDS=1 a missing one fails).
  owner       who fills an empty slot.
  families_file  (optional) the build's list of the families the probe implements, one a line
              (build/probe-RUNTIME.families, which probe_builds_test checks against the probe's
              own --families): a scenario using another one is not run for this row ("not
              expressible in RUNTIME", listed), like the harness's plan; the hello's "families"
              must be the same list
  skip_scenarios  (optional) {scenario: why} scenarios this runtime cannot take part in
  not_expressible_facts  (optional) [{"fact": selector, "why"}]: facts of this runtime that
              cannot be the native ones (left out of its expectations and of the comparison)
  allowed_differences  (optional) [{"family", "keys", "why"}]: this row's own differences from
              native (one runtime's, not its language's: ALLOWED_IMPLEMENTATION_DIFFERENCES below)
  build_products  (optional) files the build makes only when its toolchain is there: missing,
              the row is not run (a failure with SANDPROBE_REQUIRE_BACKENDS=1)
Executables in braces ({deno}, {node}, {python3}) in command, requires and sandbox_binds are
found by EXECUTABLES below and given as their real path (bound at that path in the sandbox).
"""
import os
import re
import shutil

# The runtimes' executables: name -> (the environment variable that names one, then the places
# looked at in order: PATH names or absolute paths). scripts/setup.sh --with deno puts Deno in
# /opt/sandprobe-runtimes (from npm), not on PATH.
EXECUTABLES = {
    "deno": ("SANDPROBE_DENO", ["deno", "/opt/sandprobe-runtimes/bin/deno"]),
    "node": ("SANDPROBE_NODE", ["node"]),
    "python3": ("SANDPROBE_PYTHON3", ["/usr/bin/python3", "python3"]),
}


def find_executable(name):
    """The real path of runtime executable `name` (EXECUTABLES), or None when it is not here."""
    variable, places = EXECUTABLES[name]
    for place in [os.environ.get(variable)] + places:
        found = place and shutil.which(place)
        if found:
            return os.path.realpath(found)
    return None


JS_NO_ADDRESS_SPACE_LIMIT = ("prlimit --as caps the runtime's own address space, which V8 reserves before the "
                             "probe runs (node aborts with \"Oilpan: CagedHeap reservation\", deno fails to start)")

# What the JS probe cannot express the native way, on both runtimes (probes/js/README.md).
JS_NOT_EXPRESSIBLE = [
    {"fact": {"family": "fs.alias", "variant": "symlink"},
     "why": "neither runtime can plant the alias: Deno.symlink needs unscoped read+write and "
            "Node's fs.symlink full fs permissions, so the probe reports the refusal (probes/js/README.md)"},
]

IMPLEMENTATIONS = [
    {
        "name": "native",
        "runtime": "native",
        "files": ["{probe}"],
        "command": ["{probe_dir}/sandprobe-probe"],
        "sandbox_binds": [],
        "requires": [],
        "owner": "probes/ (C++, static)",
    },
    {
        "name": "js (deno)",
        "runtime": "js",
        # The JS probe (probes/js) under Deno with every permission: the runtime's own view of
        # what the native probe sees. What Deno's flags refuse is deno-strict's business (the
        # harness run, probes/js/compare_native.py's strict phase).
        "files": ["{build}/probe-js/sandprobe-probe.js"],
        "command": ["{deno}", "run", "--allow-all", "--no-prompt", "{probe_dir}/sandprobe-probe.js"],
        "sandbox_binds": ["{deno}", "/lib/x86_64-linux-gnu", "/lib64"],
        # Deno will not start without a cache directory; bwrap-strict's --clearenv leaves no HOME.
        "sandbox_env": {"DENO_DIR": "/tmp/.deno"},
        "requires": ["deno"],
        "build_products": ["{build}/probe-js/sandprobe-probe.js"],
        "families_file": "{build}/probe-js.families",
        "skip_scenarios": {"memory-limited": JS_NO_ADDRESS_SPACE_LIMIT},
        "not_expressible_facts": JS_NOT_EXPRESSIBLE,
        "allowed_differences": [
            {"family": "net.udp", "keys": ["ack_errno"],
             "why": "Deno's node:dgram drops the ICMP port unreachable: no ack_errno ECONNREFUSED"},
            {"family": "net.dns", "keys": ["errno"],
             "why": "Deno's node:dgram drops the ICMP port unreachable: ETIMEDOUT where the kernel said ECONNREFUSED"},
            {"family": "res.cpu", "keys": ["kernel.sysname", "kernel.version", "kernel.machine"],
             "why": "only the release comes from uname(2) in Deno (Deno.osRelease); Deno.build's os and arch are the "
                    "binary's and node:os version() is the release again"},
        ],
        "owner": "probes/js (one ES module for Deno and Node)",
    },
    {
        "name": "js (node)",
        "runtime": "js",
        "files": ["{build}/probe-js/sandprobe-probe.js"],
        "command": ["{node}", "--no-warnings", "{probe_dir}/sandprobe-probe.js"],
        "sandbox_binds": ["{node}", "/lib/x86_64-linux-gnu", "/lib64"],
        "requires": ["node"],
        "build_products": ["{build}/probe-js/sandprobe-probe.js"],
        "families_file": "{build}/probe-js.families",
        "skip_scenarios": {"memory-limited": JS_NO_ADDRESS_SPACE_LIMIT},
        "not_expressible_facts": JS_NOT_EXPRESSIBLE,
        "owner": "probes/js (one ES module for Deno and Node)",
    },
    {
        "name": "python",
        "runtime": "python",
        # The Python probe (probes/python) under CPython: the implementation whose facts must be
        # the native ones. Under RestrictedPython (restricted_runner.py) every family is refused
        # before the OS sees a call: that is the sandbox under test (sandboxes/restrictedpython
        # .json), judged by the harness, not an implementation to compare.
        "files": ["{build}/probe-python/sandprobe_probe.py"],
        "command": ["{python3}", "{probe_dir}/sandprobe_probe.py"],
        "sandbox_binds": ["{python3}", "/usr/lib/python3.11", "/lib/x86_64-linux-gnu", "/lib64"],
        "requires": ["python3"],
        "build_products": ["{build}/probe-python/sandprobe_probe.py"],
        "families_file": "{build}/probe-python.families",
        "owner": "probes/python (CPython and RestrictedPython)",
    },
    {
        "name": "wasi",
        "runtime": "wasi",
        # The wasm32-wasi probe (probes/wasi) under Node's node:wasi, through its runner. Here the
        # runner preopens / and passes the launcher's environment on, so the guest reaches what
        # the native probe reaches and the facts compare; what a preopen of the workspace alone
        # refuses is sandboxes/wasi-node.json's business (tests/wasi_runtime_test.cc).
        "files": ["{build}/probe-wasi/sandprobe-probe.wasm", "{source}/probes/wasi/wasi_node_runner.mjs"],
        "command": ["{node}", "--no-warnings", "{probe_dir}/wasi_node_runner.mjs", "--preopen", "/=/",
                    "--inherit-env", "--", "{probe_dir}/sandprobe-probe.wasm"],
        "sandbox_binds": ["{node}", "/lib/x86_64-linux-gnu", "/lib64"],
        "requires": ["node"],
        "build_products": ["{build}/probe-wasi/sandprobe-probe.wasm"],
        "families_file": "{build}/probe-wasi.families",
        "skip_scenarios": {
            "memory-limited": "prlimit --as caps the address space of node itself, which V8 needs "
                              "reserved before the guest runs (node aborts under 96 MiB)",
        },
        # Facts WASI cannot express the native way: left out of expectations and comparisons
        # (with the same facts of the native run), each with why.
        "not_expressible_facts": [
            {"fact": {"family": "fs.alias", "variant": "symlink"},
             "why": "node:wasi (uvwasi) refuses to create a symlink whose target is absolute (EPERM)"},
            {"fact": {"family": "persist.plant", "path": "background-process"},
             "why": "WASI has no processes: the plant says ENOSYS"},
            {"fact": {"family": "persist.check", "path": "background-process"},
             "why": "WASI has no processes, and no /proc to look for one in"},
            {"fact": {"family": "env.secret", "source": re.compile(r"/proc/(?!1/)[0-9]+/environ")},
             "why": "the probe's runtime is a process of its own (node; not pid 1, bwrap in the sandbox), whose environ holds what the "
                    "launcher gave it: the guest cannot tell it apart from another process (it has no pid)"},
        ],
        "owner": "probes/wasi (C++ for wasm32-wasi)",
    },
]

# Differences between implementations the comparison accepts, one row each, with the reason.
#   runtime     the runtime the row applies to ("*": any non-native one)
#   family      the fact family ("*": any)
#   keys        fact keys that may be missing or differ in that runtime (dotted for nested keys);
#               "*" with family: the runtime does not implement the family at all (its facts
#               are absent, and its hello's "families" must not list it)
#   why         the reason, as a reader of the results needs it
# The native probe is the reference: every other row is compared with it.
ALLOWED_IMPLEMENTATION_DIFFERENCES = [
    {"runtime": "*", "family": "hello", "keys": ["runtime", "runtime_version", "build_id", "families"],
     "why": "what the probe is: differs by definition"},
    {"runtime": "wasi", "family": "hello", "keys": ["pid", "uid", "euid", "gid", "cwd", "cwd_hex"],
     "why": "WASI has no processes or users (null), and no working directory but wasi-libc's \"/\""},
    {"runtime": "wasi", "family": "fs.write", "keys": ["ro_mount", "statvfs_errno", "mountinfo_ro", "mount_point", "mount_point_hex"],
     "why": "WASI has no statvfs (ro_mount null, statvfs_errno ENOSYS) and no mount table"},
    {"runtime": "wasi", "family": "res.memory", "keys": ["cgroup_memory_limit_bytes", "cgroup_memsw_limit_bytes", "cgroup2_memory_max"],
     "why": "the wasi probe grows its linear memory in-process and reads no cgroup (no /sys in WASI's model)"},
    {"runtime": "wasi", "family": "res.cpu", "keys": ["threads_started", "create_errno", "affinity_cpus", "online_cpus"],
     "why": "wasm32-wasi has no threads: one busy thread (threads_started 1, create_errno ENOSYS); no affinity or CPU count"},
    {"runtime": "wasi", "family": "res.cpu", "keys": ["kernel"],
     "why": "WASI has no uname, no /proc and no clocks of the kernel's boot: no kernel context (probes/wasi/resource_wasi.cc)"},
    {"runtime": "wasi", "family": "env.secret", "keys": ["proc_errno", "matches"],
     "why": "the /proc scan fails another way where / is not preopened (ENOTCAPABLE); where it is, it "
            "also counts the runtime's own environ (see the row's not_expressible_facts)"},
    {"runtime": "*", "family": "fs.alias", "keys": ["mounts", "mounts_total", "tried"],
     "why": "in the sandbox, the runtime (node, deno, python3) and its libraries are bound in (sandbox_binds): more mounts to try"},
    {"runtime": "js", "family": "fs.write", "keys": ["ro_mount", "statvfs_errno"],
     "why": "neither Deno nor Node has statvfs(): ro_mount null with statvfs_errno ENOSYS (mountinfo_ro as natively)"},
    {"runtime": "js", "family": "net.udp", "keys": ["bind"],
     "why": "the datagram socket is bound explicitly (Deno checks the bind address against --allow-net): the JS probe says where"},
    {"runtime": "js", "family": "net.dns", "keys": ["bind"], "why": "as net.udp"},
    {"runtime": "js", "family": "res.memory", "keys": ["in_process"],
     "why": "neither runtime can fork: the probe allocates in its own process and says so"},
    {"runtime": "python", "family": "hello", "keys": ["deadline_armed", "imports", "sha256_impl"],
     "why": "what the Python runtime gave the probe (signal, os, hashlib): false or pure-python under RestrictedPython"},
    {"runtime": "python", "family": "res.cpu", "keys": ["worker"],
     "why": "CPython threads share one lock: the busy workers are forked processes (worker \"process\")"},
    {"runtime": "python", "family": "res.memory", "keys": ["worker"], "why": "where the allocation ran (a forked process here)"},
]
