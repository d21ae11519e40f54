#!/usr/bin/env python3
"""Runs the native probe and the JS probe (on Deno and on Node) with the same arguments over a
temporary tree and asserts that their facts agree key by key; then runs the JS probe under the
runtimes' strict permission flags and shows what each one denies.

    probes/js/compare_native.py [--native PATH] [--js PATH] [--deno PATH] [--node PATH] [--keep]

Everything runs on this host, as uid 65534 when started as root (so a mode-000 file is a real
EACCES, told apart from a runtime's refusal). The network canaries are this script's own
listeners on 127.0.0.1: a TCP and a UDP one that answer "sandprobe-ack", a DNS responder for
*.sandprobe.test, and a closed port. Nothing else is contacted.

Exit status: 0 all facts agree (the strict phase is a report, plus checks that the flags took
effect); 1 a disagreement or a broken frame stream; 77 a runtime is missing (a skip, with the
reason; with SANDPROBE_REQUIRE_BACKENDS=1 that is a failure instead).
"""

import argparse
import json
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
NONCE = "cmp0nonce"
TOKEN = "cmp0token"
SECRET_PREFIX = "SPCMP_SECRET_"
NOBODY = 65534
SKIP = 77

# Keys whose values change from run to run: compared for presence only.
VOLATILE = {
    # What the probe is differs by definition (check_hello checks the JS values; the harness
    # checks both against its build's table, run/probe_builds.h).
    "hello": {"pid", "runtime", "runtime_version", "build_id", "families"},
    "net.tcp": {"connect_ms"},
    "res.memory": {"ms", "cgroup_memory_max_usage_bytes", "cgroup_memory_failcnt"},
    "res.cpu": {"cpu_seconds", "wall_seconds", "effective_cores", "cpu_cgroup"},
    "res.wall": {"elapsed_ms"},
    "env.secret": {"processes_scanned", "environs_readable"},
    "persist.plant": {"pid"},
    "persist.check": {"pids"},
    # The interpreter is another executable than the native probe, by definition.
    "fs.mounts": {"exe_dev", "exe_ino"},
}
# Mount points whose listing changes between two processes (one directory per pid): the
# listing's hash and count are compared for presence only there.
VOLATILE_LISTINGS = {"/proc"}

# Facts the native probe has and the JS probe does not, and why; each is a documented gap
# (probes/js/README.md) whose host judge is inconclusive without it, never a pass.
JS_MISSING_KEYS = set()
JS_MISSING_FACTS = {}
# res.cpu's kernel context: compared key by key (compare_kernel), boot_time_ms within the
# judge's slack (families/kernel_identity.h kBootTimeSlackMs; Deno's uptime is whole seconds).
# Deno has only the release from uname(2) (Deno.build's os and arch are the binary's).
BOOT_TIME_SLACK_MS = 5000
KERNEL_NOT_FROM_RUNTIME = {"deno": {"sysname", "version", "machine"}, "node": set()}

# Keys only the JS probe has (probes/js/README.md), and keys whose JS value is documented to
# differ: (family, key) -> why.
JS_ONLY_KEYS = {"runtime", "runtime_version", "build_id", "families", "bind", "denied_by",
                "runtime_error", "in_process", "statvfs_errno", "stat_via", "proc_refused",
                # the socket scan's reads the runtime refused (net.unix summary)
                "refused", "refused_path", "refused_errno", "refused_denied_by", "refused_runtime_error"}
KNOWN_DIFFERENCES = {
    ("fs.write", "ro_mount"): "neither runtime has statvfs(): null with statvfs_errno ENOSYS",
    ("fs.write", "statvfs_errno"): "always ENOSYS (no statvfs()), natively the failed statvfs's errno",
    ("net.ifaces", "netlink"): "no raw netlink socket in either runtime: ENOSYS (the host falls back)",
}
# Per runtime: (family, path) -> the keys that differ, and why.
RUNTIME_DIFFERENCES = {
    "deno": {
        ("net.udp", "closed"): ({"ack_errno"}, "Deno's node:dgram drops the ICMP port unreachable"),
        ("net.dns", "closed"): ({"errno"}, "Deno's node:dgram drops the ICMP port unreachable: "
                                           "ETIMEDOUT where the kernel said ECONNREFUSED"),
    },
    "node": {},
}


# ---------------------------------------------------------------------------------------------
# Canaries on 127.0.0.1.

class Canaries:
    """A TCP and a UDP listener that acknowledge, a DNS responder, and a closed port."""

    def __init__(self):
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.dns.bind(("127.0.0.1", 0))
        closed = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        closed.bind(("127.0.0.1", 0))
        self.closed_port = closed.getsockname()[1]
        closed.close()  # nothing listens there now, on TCP or UDP (a race no other test here runs)
        self.received = []
        self.stopping = False
        for target in (self._serve_tcp, self._serve_udp, self._serve_dns):
            threading.Thread(target=target, daemon=True).start()

    def endpoints(self):
        port = lambda s: s.getsockname()[1]
        return {"tcp": f"127.0.0.1:{port(self.tcp)}", "udp": f"127.0.0.1:{port(self.udp)}",
                "dns": f"127.0.0.1:{port(self.dns)}", "closed": f"127.0.0.1:{self.closed_port}"}

    def _serve_tcp(self):
        while not self.stopping:
            conn, _ = self.tcp.accept()
            conn.settimeout(2)
            try:
                self.received.append(("tcp", conn.recv(512)))
                conn.sendall(b"sandprobe-ack\n")
            except OSError:
                pass
            conn.close()

    def _serve_udp(self):
        while not self.stopping:
            data, peer = self.udp.recvfrom(2048)
            self.received.append(("udp", data))
            self.udp.sendto(b"sandprobe-ack\n", peer)

    def _serve_dns(self):
        while not self.stopping:
            query, peer = self.dns.recvfrom(2048)
            self.received.append(("dns", query))
            reply = dns_answer(query)
            if reply:
                self.dns.sendto(reply, peer)


def dns_answer(q):
    """An A record 127.0.0.1 for names under sandprobe.test, REFUSED otherwise."""
    if len(q) < 12 or q[2] & 0x80:
        return b""
    at, labels = 12, []
    while at < len(q) and q[at] != 0 and len(labels) < 128:
        labels.append(q[at + 1:at + 1 + q[at]].decode("ascii", "replace"))
        at += 1 + q[at]
    if at + 5 > len(q):
        return b""
    ours = ".".join(labels).endswith(".sandprobe.test")
    type_a = q[at + 1:at + 3] == b"\x00\x01"
    answer = ours and type_a
    reply = q[:2] + bytes([0x84 | (q[2] & 1), 0 if ours else 5, 0, 1, 0, 1 if answer else 0,
                           0, 0, 0, 0]) + q[12:at + 5]
    if answer:
        reply += bytes([0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1])
    return reply


# ---------------------------------------------------------------------------------------------
# The tree and the probes.

class Tree:
    """The temporary tree every probe reads and writes (see the module docstring)."""

    def __init__(self, root, native, js_probe, run_as):
        self.root = root
        self.ws = root / "ws"
        self.outside = root / "outside"
        self.bin = root / "bin"
        for d in (self.ws, self.outside, self.bin, root / "home", root / "deno-dir",
                  self.ws / "rw", self.ws / "ro"):
            d.mkdir(parents=True)
        (self.ws / "readable.txt").write_text("readable content\n")
        (self.ws / "unreadable.txt").write_text("not for you\n")
        (self.outside / "secret.txt").write_text("the outside secret\n")
        (self.outside / "other.txt").write_text("x\n")
        (self.ws / "link-out").symlink_to("../outside/secret.txt")  # planted by the harness
        (self.ws / "link-abs").symlink_to(self.outside / "secret.txt")
        (self.ws / "dirlink").symlink_to("../outside")
        shutil.copy2(native, self.bin / "sandprobe-probe")
        shutil.copy2(js_probe, self.bin / "sandprobe-probe.js")
        self.native = self.bin / "sandprobe-probe"
        self.js = self.bin / "sandprobe-probe.js"
        os.chmod(root, 0o755)
        if run_as is not None:
            os.chmod(self.ws / "unreadable.txt", 0)
            for owned in ("ws/rw", "home", "deno-dir"):
                os.chown(root / owned, run_as, run_as)
            os.chmod(self.ws / "ro", 0o555)

    def steps(self, endpoints):
        """The families every probe runs, one list per family."""
        ws, out = self.ws, self.outside
        return [
            ["fs.read", str(ws / "readable.txt"), str(ws), str(ws / "unreadable.txt"),
             str(ws / "nonexistent"), str(ws / "link-out"), str(ws / "link-abs"),
             str(ws / "dirlink"), str(out / "secret.txt"), str(out)],
            ["fs.write", str(ws / "rw"), str(ws / "ro"), str(out), str(ws / "no-such-dir")],
            ["fs.alias", "--scratch", str(ws / "rw"), str(out / "secret.txt")],
            ["fs.mounts"],
            ["env.secret", SECRET_PREFIX],
            ["net.tcp", f"lo={endpoints['tcp']}", f"closed={endpoints['closed']}"],
            ["net.udp", f"lo={endpoints['udp']}", f"closed={endpoints['closed']}"],
            ["net.dns", f"lo={endpoints['dns']}", f"closed={endpoints['closed']}"],
            ["net.unix", str(ws / "readable.txt")],
            ["priv.runtime_sockets", str(ws / "readable.txt"), str(ws / "nonexistent")],
            ["net.ifaces"],
            ["res.memory", "--ceiling-mib", "32", "--every-mib", "16"],
            ["res.cpu", "--threads", "1", "--window-ms", "300"],
            ["res.wall", "--ceiling-seconds", "1"],
        ]

    def probe_args(self, endpoints, extra_steps=()):
        argv = ["--nonce", NONCE]
        for i, step in enumerate(list(self.steps(endpoints)) + list(extra_steps)):
            argv += (["--next"] if i else []) + step
        return argv

    def persist_args(self, family):
        extra = ["--background-seconds", "20"] if family == "persist.plant" else []
        return ["--nonce", NONCE, family, "--token", TOKEN, *extra, str(self.ws / "rw"), "@home"]


def probe_env(tree, secret):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tree.root / "home"), "NO_COLOR": "1",
           "DENO_DIR": str(tree.root / "deno-dir"), "DENO_NO_UPDATE_CHECK": "1"}
    if secret:
        env[SECRET_PREFIX + "ONE"] = secret
    return env


def run_probe(argv, tree, run_as, secret, timeout=60):
    """(exit code, facts, problems) of one probe run; problems: anything off the protocol."""
    prefix = ["setpriv", "--reuid", str(run_as), "--regid", str(run_as), "--clear-groups"] \
        if run_as is not None else []
    done = subprocess.run(prefix + argv, cwd=tree.ws, env=probe_env(tree, secret), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=timeout)
    return (done.returncode, *parse_frames(done.stdout)), done.stderr.decode(errors="replace")


def parse_frames(stdout):
    """(facts, problems), as launch/frames.cc reads a stream: a fact per frame, a done frame last."""
    facts, problems, done = [], [], False
    for number, line in enumerate(stdout.split(b"\n")[:-1], 1):
        if not line.startswith(b"@@sandprobe"):
            problems.append(f"line {number}: not a frame: {line[:80]!r}")
            continue
        parts = line.split(b" ", 2)
        if len(parts) != 3 or parts[0] != b"@@sandprobe" or parts[1] != NONCE.encode():
            problems.append(f"line {number}: malformed frame or foreign nonce")
            continue
        try:
            payload = json.loads(parts[2].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            problems.append(f"line {number}: {e}")
            continue
        if payload == {"done": True}:
            done = True
        elif done:
            problems.append(f"line {number}: frame after done")
        elif not isinstance(payload, dict) or not payload.get("family"):
            problems.append(f"line {number}: fact without a family")
        else:
            facts.append(payload)
    if stdout and not stdout.endswith(b"\n"):
        problems.append("unterminated last line")
    if not done:
        problems.append("no done frame")
    return facts, problems


def identity(fact, seen):
    """A fact's identity (launch/frames.cc FactIdentity), progress facts by their order."""
    progress = fact.get("kind") == "progress"
    key = (fact.get("family"), fact.get("path"), fact.get("variant"), fact.get("source"),
           fact.get("name"), bool(fact.get("summary")), progress)
    if progress:
        seen[key] = seen.get(key, 0) + 1
        key += (seen[key],)
    return key


def index(facts):
    seen, out = {}, {}
    for fact in facts:
        out[identity(fact, seen)] = fact
    return out


# ---------------------------------------------------------------------------------------------
# Comparison.

def compare(native_facts, js_facts, runtime):
    """Disagreements of the JS facts with the native ones, as lines; [] when they agree."""
    problems = []
    native, js = index(native_facts), index(js_facts)
    for key in native.keys() - js.keys():
        if (key[0], key[2]) in JS_MISSING_FACTS:
            continue
        problems.append(f"{runtime}: no fact for {key}")
    for key in js.keys() - native.keys():
        problems.append(f"{runtime}: a fact the native probe does not have: {key}")
    for key in sorted(native.keys() & js.keys(), key=str):
        family, path = key[0], key[1]
        where = path if key[2] is None else f"{path}[{key[2]}]"
        n, j = native[key], js[key]
        allowed, _ = RUNTIME_DIFFERENCES[runtime].get((family, path), (set(), ""))
        volatile = VOLATILE.get(family, set())
        if family == "fs.mounts" and path in VOLATILE_LISTINGS:
            volatile = volatile | {"sha256", "entries"}
        for k in sorted(n.keys() | j.keys()):
            if k in allowed or (family, k) in KNOWN_DIFFERENCES or (family, k) in JS_MISSING_KEYS:
                continue
            if k in JS_ONLY_KEYS and k not in n:
                continue
            if k not in j:
                problems.append(f"{runtime}: {family} {where}: no {k!r} (native: {n[k]!r})")
            elif k not in n:
                problems.append(f"{runtime}: {family} {where}: extra {k!r}: {j[k]!r}")
            elif family == "res.cpu" and k == "kernel":
                problems += compare_kernel(n[k], j[k], runtime, where)
            elif k in volatile:
                if k == "pids" and len(n[k]) != len(j[k]):
                    problems.append(f"{runtime}: {family} {where}: {len(j[k])} pids, native {len(n[k])}")
            elif n[k] != j[k]:
                problems.append(f"{runtime}: {family} {where}: {k}: {j[k]!r}, native {n[k]!r}")
    return problems


def compare_kernel(n, j, runtime, where):
    """res.cpu's kernel context: the same kernel, the same answers (a refusal says so)."""
    problems = []
    for k in sorted(n.keys() | j.keys()):
        if k in KERNEL_NOT_FROM_RUNTIME[runtime] and k not in j:
            continue
        if k not in j or k not in n:
            problems.append(f"{runtime}: res.cpu {where}: kernel.{k}: {j.get(k)!r}, native {n.get(k)!r}")
        elif k == "boot_time_ms":
            if abs(n[k] - j[k]) > BOOT_TIME_SLACK_MS:
                problems.append(f"{runtime}: res.cpu {where}: kernel.boot_time_ms {j[k]}, native {n[k]}")
        elif n[k] != j[k]:
            problems.append(f"{runtime}: res.cpu {where}: kernel.{k}: {j[k]!r}, native {n[k]!r}")
    return problems


def check_hello(facts, runtime, families):
    hello = next((f for f in facts if f.get("family") == "hello"), {})
    want = {"runtime": "js", "families": families}
    problems = [f"{runtime}: hello {k} is {hello.get(k)!r}, expected {v!r}" for k, v in want.items()
                if hello.get(k) != v]
    if not str(hello.get("runtime_version", "")).startswith(runtime + " "):
        problems.append(f"{runtime}: hello runtime_version {hello.get('runtime_version')!r}")
    if "build_id" not in hello:
        problems.append(f"{runtime}: hello has no build_id")
    return problems


# ---------------------------------------------------------------------------------------------
# The strict phase: the JS probe under each runtime's permission flags.

def strict_commands(tree, deno, node):
    ws = str(tree.ws)
    return {
        "deno-strict": [deno, "run", "--no-prompt", f"--allow-read={ws}", f"--allow-write={ws}", str(tree.js)],
        "deno-read-all": [deno, "run", "--no-prompt", "--allow-read", f"--allow-write={ws}", str(tree.js)],
        "deno-leaky": [deno, "run", "--no-prompt", "--allow-read", f"--allow-write={ws}", "--allow-env",
                       "--allow-net", "--allow-sys", str(tree.js)],
        "node-permission": [node, "--experimental-permission", f"--allow-fs-read={ws}",
                            f"--allow-fs-read={tree.js}", f"--allow-fs-write={ws}", str(tree.js)],
    }


def strict_args(tree, endpoints):
    return tree.probe_args(endpoints, [["rt.subprocess", "/bin/true"],
                                       ["rt.ffi", "/lib/x86_64-linux-gnu/libm.so.6"]])


def outcome(fact):
    if fact is None:
        return "-"
    if fact.get("family") == "env.secret" and fact.get("summary"):
        text = f"matches={fact.get('matches')}"
        if "environ_errno" in fact:
            text += " environ:" + ("(rt)" if fact.get("environ_denied_by") else fact["environ_errno"])
        if fact.get("proc_refused"):
            text += f" proc:(rt)x{fact['proc_refused']}"
        return text
    if fact.get("family") == "res.cpu":
        text = f"threads_started={fact.get('threads_started')}"
        return text + (f" create:{fact['create_errno']}(rt)" if fact.get("create_denied_by") else "")
    if fact.get("family") == "env.secret":
        return f"seen sha={fact.get('sha256', '')[:8]}"
    if fact.get("family") == "res.wall":
        return f"{fact.get('stopped_by')} {fact.get('elapsed_ms')} ms"
    if fact.get("variant") == "mount_root":
        return f"readable={fact.get('readable')} of {fact.get('tried')}"
    if fact.get("path") == "background-process" and fact.get("family") == "persist.check":
        text = "present" if fact.get("present") else "absent"
        return text + (f" proc:{fact['proc_errno']}(rt)x{fact.get('proc_refused', '')}" if fact.get("proc_denied_by") else "")
    ok = fact.get("ok")
    if ok is True:
        return "ok" + (f" sha={fact['sha256'][:8]}" if "sha256" in fact else "")
    if ok is False:
        return f"{fact.get('step', 'open')}:{fact.get('errno', '?')}" + ("(rt)" if fact.get("denied_by") else "")
    if "present" in fact:
        return "present" if fact["present"] else f"absent ({fact.get('errno', '')})"
    return json.dumps({k: v for k, v in fact.items() if k != "family"})[:22]


def short(key, root):
    family, path, variant = key[0], key[1] or "", key[2]
    path = path.replace(str(root) + "/", "")
    return f"{family} {path}" + (f"[{variant}]" if variant else "")


def strict_phase(tree, deno, node, endpoints, run_as, native_facts):
    print("\n== strict phase: the JS probe under each runtime's permission flags ('(rt)': refused "
          "by the runtime's permission layer)")
    columns = {"native": index(native_facts)}
    problems = []
    for name, command in strict_commands(tree, deno, node).items():
        facts = []
        for secret, argv in (("s3cret", strict_args(tree, endpoints)),
                             (None, tree.persist_args("persist.plant")),
                             (None, tree.persist_args("persist.check"))):
            (code, got, frame_problems), stderr = run_probe(command + argv, tree, run_as, secret)
            if code != 0 or frame_problems:
                problems.append(f"{name} {argv[2]}: exit {code}, {frame_problems}: {stderr[-400:]}")
            facts += got
        print(f"   {name}: {' '.join(command[:-1]).replace(str(tree.root) + '/', '')}")
        columns[name] = index(facts)
    keys = []
    for column in columns.values():
        keys += [k for k in column if k not in keys and k[0] != "hello" and not k[6]]
    width = max(len(short(k, tree.root)) for k in keys) + 2
    print("   " + "fact".ljust(width) + "".join(n.ljust(23) for n in columns))
    for k in keys:
        print("   " + short(k, tree.root).ljust(width) +
              "".join(outcome(col.get(k))[:22].ljust(23) for col in columns.values()))
    print_findings(columns, tree)
    # The flags took effect: a read outside the workspace is the runtime's refusal.
    outside = ("fs.read", str(tree.outside / "secret.txt"), None, None, None, False, False)
    for name in ("deno-strict", "node-permission"):
        fact = columns[name].get(outside, {})
        if fact.get("denied_by") != "runtime-permission":
            problems.append(f"{name}: a direct read outside the workspace was not refused by the runtime: {fact}")
    return problems


# ---------------------------------------------------------------------------------------------

def print_findings(columns, tree):
    """What each permission configuration let through that a workspace-only policy denies."""
    outside = {f.get("sha256") for k, f in columns["native"].items()
               if k[0] == "fs.read" and k[1] in (str(tree.outside / "secret.txt"), str(tree.outside))}
    print("\n   findings (what got past the flags; a workspace-only policy denies all of it):")
    for name, column in columns.items():
        if name == "native":
            continue
        leaks = []
        for k, f in column.items():
            via = short(k, tree.root)
            if f.get("ok") is True and f.get("sha256") in outside:
                leaks.append(f"read outside via {via}")
            elif k[0] == "env.secret" and "sha256" in f:
                leaks.append(f"env secret seen in {f.get('source')}")
            elif k[0].startswith("net.") and f.get("ok") is True:
                leaks.append(f"{via} reached")
            elif k[0] in ("rt.subprocess", "rt.ffi") and f.get("ok") is True:
                leaks.append(f"{via} allowed")
            elif k[0] == "res.cpu" and f.get("threads_started", 0) > 0:
                leaks.append(f"res.cpu: {f['threads_started']} busy worker(s), no CPU bound from the runtime")
            elif k[0] == "res.memory" and f.get("kind") == "result" and f.get("stopped_by") == "ceiling":
                leaks.append(f"res.memory: reached its {f.get('ceiling_mib')} MiB ceiling, no memory bound")
        print(f"   {name}: " + ("; ".join(sorted(leaks)) if leaks else "nothing"))


def find_runtime(given, env_name, candidates):
    for path in [given, os.environ.get(env_name)] + candidates:
        if path and (shutil.which(path) or os.path.exists(path)):
            return shutil.which(path) or path
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", help="the native probe (default: SANDPROBE_PROBE, build/probe/sandprobe-probe)")
    parser.add_argument("--deno", help="the deno binary (default: SANDPROBE_DENO, the npm-installed one, PATH)")
    parser.add_argument("--node", help="the node binary (default: SANDPROBE_NODE, PATH)")
    parser.add_argument("--js", default=str(HERE / "sandprobe-probe.js"),
                        help="the JS probe (default: the source beside this script)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    args = parser.parse_args()

    native = find_runtime(args.native, "SANDPROBE_PROBE", [str(REPO / "build/probe/sandprobe-probe")])
    deno = find_runtime(args.deno, "SANDPROBE_DENO",
                        ["/opt/sandprobe-runtimes/node_modules/@deno/linux-x64-glibc/deno", "deno"])
    node = find_runtime(args.node, "SANDPROBE_NODE", ["node"])
    missing = [name for name, path in (("native probe", native), ("deno", deno), ("node", node)) if not path]
    if missing:
        print(f"SKIP: not found: {', '.join(missing)} (see probes/js/README.md)")
        return 1 if os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1" else SKIP
    node_major = int(subprocess.run([node, "-p", "process.versions.node.split('.')[0]"],
                                    capture_output=True, text=True).stdout.strip() or 0)
    if node_major < 20:
        print(f"SKIP: node {node_major} has no permission model (20+ needed)")
        return 1 if os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1" else SKIP

    run_as = NOBODY if os.geteuid() == 0 else None
    root = pathlib.Path(tempfile.mkdtemp(prefix="sandprobe-jscmp-"))
    problems = []
    try:
        tree = Tree(root, native, args.js, run_as)
        canaries = Canaries()
        endpoints = canaries.endpoints()
        families = subprocess.run([node, str(tree.js), "--families"], capture_output=True,
                                  text=True).stdout.split()
        runs = {"native": [str(tree.native)],
                "deno": [deno, "run", "--no-prompt", "--allow-all", str(tree.js)],
                "node": [node, str(tree.js)]}
        results = {}
        for name, command in runs.items():
            facts = []
            for secret, argv in (("s3cret", tree.probe_args(endpoints)),
                                 (None, ["--nonce", NONCE, "env.secret", SECRET_PREFIX]),
                                 (None, tree.persist_args("persist.plant")),
                                 (None, tree.persist_args("persist.check"))):
                (code, got, frame_problems), stderr = run_probe(command + argv, tree, run_as, secret)
                if code != 0 or frame_problems:
                    problems.append(f"{name} {argv[2]}: exit {code}, {frame_problems}: {stderr[-400:]}")
                # The secret-less env.secret run: its facts get their own identity.
                if secret is None and argv[2] == "env.secret":
                    for fact in got:
                        if fact.get("family") == "env.secret":
                            fact["path"] = "absent"
                facts += got
            results[name] = facts
            print(f"== {name}: {len(facts)} facts ({' '.join(command[:-1]).replace(str(root) + '/', '')})")
        for runtime in ("deno", "node"):
            found = compare(results["native"], results[runtime], runtime)
            found += check_hello(results[runtime], runtime, families)
            problems += found
            agreed = len(index(results["native"]).keys() & index(results[runtime]).keys())
            print(f"   {runtime} vs native: {agreed} facts matched by identity, {len(found)} disagreements")
        for runtime, differences in RUNTIME_DIFFERENCES.items():
            for (family, path), (keys, why) in differences.items():
                print(f"   known difference, {runtime} {family} {path} {sorted(keys)}: {why}")
        for (family, key), why in KNOWN_DIFFERENCES.items():
            print(f"   known difference, both runtimes {family} {key}: {why}")
        for (family, variant), why in JS_MISSING_FACTS.items():
            print(f"   known gap, both runtimes {family} [{variant}]: {why}")
        got = {kind for kind, _ in canaries.received}
        if got != {"tcp", "udp", "dns"}:
            problems.append(f"the canaries heard only {sorted(got)}")
        problems += strict_phase(tree, deno, node, endpoints, run_as, results["native"])
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    for problem in problems:
        print("FAIL:", problem)
    print("OK: the JS probe's facts agree with the native probe's" if not problems else
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
