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
  requires    executables that must exist on the host for the row to run (else "not run",
              with the reason; with SANDPROBE_REQUIRE_BACKENDS=1 a missing one fails).
  owner       who fills an empty slot.
  families    (optional) the families the probe implements: a scenario using another one is not
              run for this row ("not expressible"), like the harness's plan
  skip_scenarios  (optional) {scenario: why} scenarios this runtime cannot take part in
  not_expressible_facts  (optional) [{"fact": selector, "why"}]: facts of this runtime that
              cannot be the native ones (left out of its expectations and of the comparison)
  build_products  (optional) files the build makes only when its toolchain is there: missing,
              the row is not run (a failure with SANDPROBE_REQUIRE_BACKENDS=1)
"""
import re

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
    # ---- Empty slots: the helpers writing these probes fill them in (files, command, binds). ----
    {
        "name": "js (deno)",
        "runtime": "js",
        "files": [],
        "command": None,  # e.g. ["deno", "run", "--allow-all", "{probe_dir}/probe.js"]
        "sandbox_binds": [],  # e.g. the deno binary
        "requires": ["deno"],
        "owner": "js-probe helper: EMPTY SLOT",
    },
    {
        "name": "js (node)",
        "runtime": "js",
        "files": [],
        "command": None,  # e.g. ["node", "{probe_dir}/probe.js"]
        "sandbox_binds": [],
        "requires": ["node"],
        "owner": "js-probe helper: EMPTY SLOT",
    },
    {
        "name": "python",
        "runtime": "python",
        "files": [],
        "command": None,  # e.g. ["python3", "{probe_dir}/sandprobe_probe.py"]
        "sandbox_binds": [],  # e.g. /usr/bin/python3 and /usr/lib/python3.11
        "requires": ["python3"],
        "owner": "py-probe helper: EMPTY SLOT",
    },
    {
        "name": "wasi",
        "runtime": "wasi",
        # The wasm32-wasi probe (probes/wasi) under Node's node:wasi, through its runner. Here the
        # runner preopens / and passes the launcher's environment on, so the guest reaches what
        # the native probe reaches and the facts compare; what a preopen of the workspace alone
        # refuses is sandboxes/wasi-node.json's business (tests/wasi_runtime_test.cc).
        "files": ["{build}/probe-wasi/sandprobe-probe.wasm", "{source}/probes/wasi/wasi_node_runner.mjs"],
        "command": ["node", "--no-warnings", "{probe_dir}/wasi_node_runner.mjs", "--preopen", "/=/",
                    "--inherit-env", "--", "{probe_dir}/sandprobe-probe.wasm"],
        "sandbox_binds": ["/usr/bin/node", "/lib/x86_64-linux-gnu", "/lib64"],
        "requires": ["node"],
        "build_products": ["{build}/probe-wasi/sandprobe-probe.wasm"],
        "families": ["fs.read", "fs.write", "fs.alias", "env.secret", "res.memory", "res.cpu", "res.wall",
                     "persist.plant", "persist.check"],
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
    {"runtime": "wasi", "family": "env.secret", "keys": ["proc_errno", "matches"],
     "why": "the /proc scan fails another way where / is not preopened (ENOTCAPABLE); where it is, it "
            "also counts the runtime's own environ (see the row's not_expressible_facts)"},
    {"runtime": "wasi", "family": "fs.alias", "keys": ["mounts", "mounts_total", "tried"],
     "why": "in the sandbox, node and its libraries are bound in (sandbox_binds): more mounts to try"},
    # Examples of the form (fill in as the probes land, each with its reason):
    # {"runtime": "wasi", "family": "res.pids", "keys": ["*"], "why": "WASI cannot fork"},
]
