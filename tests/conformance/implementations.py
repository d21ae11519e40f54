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
"""

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
        "files": [],
        "command": None,  # e.g. ["wasmtime", "run", "--dir", "/", "{probe_dir}/sandprobe-probe.wasm", "--"]
        "sandbox_binds": [],
        "requires": [],
        "owner": "wasi build: EMPTY SLOT",
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
    {"runtime": "wasi", "family": "hello", "keys": ["pid", "uid", "euid", "gid"],
     "why": "WASI has no processes or users: null"},
    # Examples of the form (fill in as the probes land, each with its reason):
    # {"runtime": "wasi", "family": "res.pids", "keys": ["*"], "why": "WASI cannot fork"},
]
