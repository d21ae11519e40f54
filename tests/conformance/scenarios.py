"""The scripted scenarios of the conformance suite, and what may differ between environments.

Each scenario is data: the launches to make (family + arguments, in order), what the launcher
puts in the probe's environment, and what every implementation must report, per environment.
Strings may name the driver's fixtures in braces (run.py, Fixtures):

  {fx}          the fixture directory: canary.txt (0644, readable), secret.txt (0600, root's:
                unreadable to the probe), link (a symlink to canary.txt), rw/ (0777), ro/ (0755,
                root's); bound into the sandbox at the same path (rw, so permissions decide)
  {canary_sha}  sha256 of canary.txt
  {tcp} {udp} {dns}  the driver's canaries on 127.0.0.1 (ADDR:PORT); {closed}: a port nothing
                answers on (TCP refused, UDP unreachable)
  {secret_name} {secret_sha}  the env secret's name (prefix {secret_prefix}) and its value's hash
  {token}       a persistence token for this run
  {fx}/runtime.sock  a unix socket (0777) the driver listens on, answering GET /_ping with
                "HTTP/1.0 200 OK" (listeners.py): a socket the probe can reach and talk to

The environments: "host" runs the probe directly (as uid 65534 when the driver is root, the
uid bwrap-strict starts as, so a file's mode means the same in both), "sandbox" under
sandboxes/bwrap-strict.json's argv with the fixture directory bound in. The host's own
network namespace reaches the canaries and bwrap-strict's does not; its environment is
cleared and its /tmp and processes die with each launch: the scenarios say so per environment.

  expect      checks, each {"where": "host"|"sandbox"|"*", "launch": N (default 0), and one of:
                "fact": {identity fields}, "has": {key: value}   a fact with those identity fields
                    holds those values ({"absent": True} for a key that must be missing)
                "no_fact": {identity fields}                     no such fact
                "received": "tcp"|"udp"|"dns" / "not_received"   the driver's canary got (or not)
                    this launch's nonce: the host's own evidence, never the probe's word
                "complete": false                                 the launch has no done frame}
  agree       true: host and sandbox must report the same facts (after VOLATILE and
              ALLOWED_ENVIRONMENT_DIFFERENCES); false: they differ by design (the expect checks
              say how)
  kill_after_ms  the driver ends the launch's process group then (a wall limit of its own)
  wrap        an argv put before the launch (prlimit: an address-space limit)
  unstable    {"facts": [selector], "keys": {family: [key]}, "why"}: facts and keys that depend
              on what else runs on the machine at that moment (sockets other programs bind), left
              out of every comparison; the expectations still hold for the facts they name
"""
import re

SCENARIOS = [
    {"name": "canary-readable", "what": "a file the probe may read: its content's hash",
     "launches": [[("fs.read", ["{fx}/canary.txt"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "fs.read", "path": "{fx}/canary.txt"},
                 "has": {"ok": True, "kind": "file", "bytes": "{canary_bytes}", "sha256": "{canary_sha}", "truncated": False}}]},
    {"name": "canary-unreadable", "what": "a file the probe may not read (mode 0600, another owner)",
     "launches": [[("fs.read", ["{fx}/secret.txt"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "fs.read", "path": "{fx}/secret.txt"},
                 "has": {"ok": False, "step": "open", "errno": "EACCES", "sha256": {"absent": True}}}]},
    {"name": "symlink-and-dotdot", "what": "the readable canary through a symlink and a .. alias; the unreadable one through every alias",
     "launches": [[("fs.read", ["{fx}/link"]),
                   ("fs.alias", ["--scratch", "{fx}/rw", "{fx}/canary.txt", "{fx}/secret.txt"])]],
     "agree": True,
     "expect": [{"where": "*", "fact": {"family": "fs.read", "path": "{fx}/link"}, "has": {"ok": True, "sha256": "{canary_sha}"}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/canary.txt", "variant": "dotdot"},
                 "has": {"ok": True, "sha256": "{canary_sha}"}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/canary.txt", "variant": "symlink"},
                 "has": {"ok": True, "sha256": "{canary_sha}", "link_removed": True}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/canary.txt", "variant": "proc_root"},
                 "has": {"ok": True, "sha256": "{canary_sha}"}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/secret.txt", "variant": "dotdot"},
                 "has": {"ok": False, "errno": "EACCES"}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/secret.txt", "variant": "symlink"},
                 "has": {"ok": False, "errno": "EACCES", "link_removed": True}},
                {"where": "*", "fact": {"family": "fs.alias", "path": "{fx}/secret.txt", "variant": "mount_root"},
                 "has": {"ok": False, "readable": 0, "hits": []}}]},
    {"name": "dir-writable", "what": "a directory the probe may write (mode 0777)",
     "launches": [[("fs.write", ["{fx}/rw"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "fs.write", "path": "{fx}/rw"},
                 "has": {"ok": True, "created": True, "removed": True, "ro_mount": False, "mountinfo_ro": False}}]},
    {"name": "dir-readonly", "what": "a directory the probe may not write (mode 0755, another owner)",
     "launches": [[("fs.write", ["{fx}/ro"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "fs.write", "path": "{fx}/ro"},
                 "has": {"ok": False, "created": False, "step": "open", "errno": "EACCES"}}]},
    {"name": "env-secret-present",
     "what": "a secret in the launcher's environment: in the probe's own environ on the host; under "
             "bwrap --clearenv not there, but in /proc/1/environ (bwrap itself, pid 1 of the sandbox's "
             "pid namespace), which is why the harness starts bwrap-strict with an empty environment",
     "env": {"{secret_name}": "conformance-secret-value"},
     "launches": [[("env.secret", ["{secret_prefix}"])]], "agree": False,
     "expect": [{"where": "host", "fact": {"family": "env.secret", "source": "environ", "name": "{secret_name}"},
                 "has": {"sha256": "{secret_sha}"}},
                {"where": "sandbox", "no_fact": {"family": "env.secret", "source": "environ", "name": "{secret_name}"}},
                {"where": "sandbox", "fact": {"family": "env.secret", "source": "/proc/1/environ", "name": "{secret_name}"},
                 "has": {"sha256": "{secret_sha}"}}]},
    {"name": "env-secret-absent", "what": "no such variable anywhere",
     "launches": [[("env.secret", ["{secret_prefix}"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "env.secret", "summary": True}, "has": {"matches": 0}}]},
    {"name": "tcp-reachable", "what": "a TCP canary on the host's loopback: reached from the host's namespace only",
     "launches": [[("net.tcp", ["loopback={tcp}"])]], "agree": False,
     "expect": [{"where": "host", "fact": {"family": "net.tcp", "path": "loopback"},
                 "has": {"ok": True, "connected": True, "acked": True, "addr": "{tcp}"}},
                {"where": "host", "received": "tcp"},
                {"where": "sandbox", "fact": {"family": "net.tcp", "path": "loopback"},
                 "has": {"ok": False, "step": "connect", "errno": "ECONNREFUSED"}},
                {"where": "sandbox", "not_received": "tcp"}]},
    {"name": "tcp-unreachable", "what": "a port nothing listens on",
     "launches": [[("net.tcp", ["closed={closed}"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "net.tcp", "path": "closed"},
                 "has": {"ok": False, "step": "connect", "errno": "ECONNREFUSED"}}]},
    {"name": "udp-reachable", "what": "a UDP canary on the host's loopback",
     "launches": [[("net.udp", ["loopback={udp}"])]], "agree": False,
     "expect": [{"where": "host", "fact": {"family": "net.udp", "path": "loopback"}, "has": {"ok": True, "acked": True}},
                {"where": "host", "received": "udp"},
                {"where": "sandbox", "fact": {"family": "net.udp", "path": "loopback"},
                 "has": {"ok": True, "acked": False, "ack_errno": "ECONNREFUSED"}},
                {"where": "sandbox", "not_received": "udp"}]},
    {"name": "udp-unreachable", "what": "a UDP port nothing is bound to: the ICMP unreachable comes back",
     "launches": [[("net.udp", ["closed={closed}"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "net.udp", "path": "closed"},
                 "has": {"ok": True, "acked": False, "ack_errno": "ECONNREFUSED"}}]},
    {"name": "dns-reachable", "what": "the canary DNS responder on the host's loopback",
     "launches": [[("net.dns", ["loopback={dns}"])]], "agree": False,
     "expect": [{"where": "host", "fact": {"family": "net.dns", "path": "loopback"},
                 "has": {"ok": True, "rcode": "NOERROR", "answers": ["127.0.0.1"]}},
                {"where": "host", "received": "dns"},
                {"where": "sandbox", "fact": {"family": "net.dns", "path": "loopback"},
                 "has": {"ok": False, "step": "reply", "errno": "ECONNREFUSED"}},
                {"where": "sandbox", "not_received": "dns"}]},
    {"name": "dns-unreachable", "what": "a DNS server address nothing answers on",
     "launches": [[("net.dns", ["closed={closed}"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "net.dns", "path": "closed"},
                 "has": {"ok": False, "step": "reply", "errno": "ECONNREFUSED"}}]},
    {"name": "memory-unlimited", "what": "no memory limit: the allocator stops at its ceiling",
     "launches": [[("res.memory", ["--ceiling-mib", "24", "--every-mib", "8"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "res.memory", "kind": "result"},
                 "has": {"ok": True, "reached_mib": 24, "stopped_by": "ceiling", "ceiling_mib": 24}}]},
    {"name": "memory-limited", "what": "an address-space limit (prlimit --as): the allocator's mmap fails",
     "wrap": ["prlimit", "--as=100663296", "--"],
     "launches": [[("res.memory", ["--ceiling-mib", "256", "--every-mib", "8"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "res.memory", "kind": "result"},
                 "has": {"ok": True, "stopped_by": "ENOMEM"}}]},
    {"name": "cpu", "what": "two busy threads for 300 ms (CPU time is volatile; the shape and thread count are not)",
     "launches": [[("res.cpu", ["--threads", "2", "--window-ms", "300"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "res.cpu", "kind": "result"},
                 "has": {"threads": 2, "threads_started": 2, "window_ms": 300}}]},
    {"name": "wall-unlimited", "what": "a 1 s sleep nothing interrupts",
     "launches": [[("res.wall", ["--ceiling-seconds", "1"])]], "agree": True,
     "expect": [{"where": "*", "fact": {"family": "res.wall", "kind": "result"},
                 "has": {"stopped_by": "ceiling", "ceiling_seconds": 1}}]},
    {"name": "wall-limited", "what": "the driver ends the launch after 900 ms: progress frames, no result, no done frame",
     "kill_after_ms": 900,
     "launches": [[("res.wall", ["--ceiling-seconds", "3"])]], "agree": True,
     "expect": [{"where": "*", "complete": False},
                {"where": "*", "no_fact": {"family": "res.wall", "kind": "result"}}]},
    {"name": "runtime-sockets",
     "what": "priv.runtime_sockets: a listening socket that answers GET /_ping, a file that is not a socket, a "
             "missing path; then the socket scan (the host's /proc/net/unix lists every socket of its network "
             "namespace, bwrap-strict's its own)",
     "launches": [[("priv.runtime_sockets", ["{fx}/runtime.sock", "{fx}/canary.txt", "{fx}/missing.sock"])]],
     # The socket's owner is mapped inside bwrap-strict's user namespace, and the two network
     # namespaces list other sockets: compared per environment, implementation against native.
     "agree": False,
     "unstable": {"facts": [{"family": "priv.runtime_sockets", "source": re.compile("walk|mountinfo|proc_net_unix|run_user")}],
                  "keys": {"priv.runtime_sockets": ["paths", "found", "found_truncated", "proc_net_unix", "walk.entries",
                                                    "walk.dirs", "walk.mounts"]},
                  "why": "the sockets other programs on this machine bind come and go between two launches"},
     "expect": [{"where": "*", "fact": {"family": "priv.runtime_sockets", "path": "{fx}/runtime.sock"},
                 "has": {"source": "list", "exists": True, "kind": "socket", "connect_ok": True, "mode": "0777",
                         "status_line": "HTTP/1.0 200 OK", "api_version": {"absent": True}, "errno": {"absent": True}}},
                {"where": "host", "fact": {"family": "priv.runtime_sockets", "path": "{fx}/runtime.sock"},
                 "has": {"owner_uid": "{driver_uid}"}},
                {"where": "*", "fact": {"family": "priv.runtime_sockets", "path": "{fx}/canary.txt"},
                 "has": {"source": "list", "exists": True, "kind": "file", "mode": "0644", "connect_ok": {"absent": True}}},
                {"where": "*", "fact": {"family": "priv.runtime_sockets", "path": "{fx}/missing.sock"},
                 "has": {"source": "list", "exists": False, "errno": "ENOENT"}},
                {"where": "*", "fact": {"family": "priv.runtime_sockets", "summary": True},
                 "has": {"found_truncated": False}},
                # The listed socket is found again in /proc/net/unix on the host: reported once.
                {"where": "*", "no_fact": {"family": "priv.runtime_sockets", "path": "{fx}/runtime.sock",
                                           "source": "proc_net_unix"}}]},
    {"name": "persistence", "what": "plant a token in a bound directory and the sandbox's /tmp, and a background process; check in a second launch",
     "launches": [[("persist.plant", ["--token", "{token}", "--background-seconds", "5", "{fx}/rw", "/tmp"])],
                  [("persist.check", ["--token", "{token}", "{fx}/rw", "/tmp"])]],
     "agree": False,
     "expect": [{"where": "*", "fact": {"family": "persist.plant", "path": "{fx}/rw"}, "has": {"ok": True}},
                {"where": "*", "fact": {"family": "persist.plant", "path": "background-process"}, "has": {"ok": True}},
                {"where": "*", "launch": 1, "fact": {"family": "persist.check", "path": "{fx}/rw"},
                 "has": {"present": True, "removed": True}},
                {"where": "host", "launch": 1, "fact": {"family": "persist.check", "path": "/tmp"}, "has": {"present": True}},
                {"where": "host", "launch": 1, "fact": {"family": "persist.check", "path": "background-process"},
                 "has": {"present": True}},
                {"where": "sandbox", "launch": 1, "fact": {"family": "persist.check", "path": "/tmp"},
                 "has": {"present": False, "errno": "ENOENT"}},
                {"where": "sandbox", "launch": 1, "fact": {"family": "persist.check", "path": "background-process"},
                 "has": {"present": False, "pids": []}}]},
]

# Keys that differ from run to run anywhere: never compared (timings, pids, CPU time).
VOLATILE = {
    "hello": ["pid"],
    "net.tcp": ["connect_ms"],
    "res.memory": ["ms", "cgroup_memory_max_usage_bytes", "cgroup_memory_failcnt", "reached_mib"],
    # kernel: its boot_time_ms is REALTIME - BOOTTIME, read a moment apart (a millisecond's
    # rounding; the JS probe's is now - uptime); the rest of the kernel context is compared.
    "res.cpu": ["cpu_seconds", "wall_seconds", "effective_cores", "cpu_cgroup", "kernel.boot_time_ms"],
    "res.wall": ["elapsed_ms"],
    "res.pids": ["ms", "tasks_before", "visible_processes", "kernel"],
    "persist.plant": ["pid"],
    "persist.check": ["pids"],
    "env.secret": ["processes_scanned", "environs_readable"],
}
# Progress facts are a stream whose length depends on timing: compared by family and kind only.
PROGRESS_COMPARED_BY = ["family", "kind"]

# Between the host and bwrap-strict, for scenarios that agree: what the sandbox changes by
# design, with the reason.
ALLOWED_ENVIRONMENT_DIFFERENCES = [
    {"family": "hello", "keys": ["uid", "euid", "gid", "cwd", "cwd_hex"],
     "why": "bwrap-strict maps the probe to uid/gid 1000 in its user namespace and starts it in /workspace"},
    {"family": "fs.write", "keys": ["mount_point", "mount_point_hex"],
     "why": "the sandbox sees the fixture directory as a bind mount of its own"},
    {"family": "fs.alias", "keys": ["mounts", "mounts_total", "tried"],
     "why": "mount_root walks the sandbox's mount table, which is not the host's"},
    {"family": "res.memory", "keys": ["cgroup_memory_limit_bytes", "cgroup_memsw_limit_bytes", "cgroup2_memory_max"],
     "why": "bwrap-strict mounts no /sys: the cgroup knobs are not there to read"},
    {"family": "res.cpu", "keys": ["affinity_cpus"], "why": "the same machine, but read through another namespace"},
]
