#!/usr/bin/env python3
"""compare_native.py: the Python probe against the native one, then under RestrictedPython.

    compare_native.py [--native PATH] [--python PATH] [--skip-restricted]

Part 1 (conformance): builds a temp tree (a readable, an unreadable and a missing file, a
directory, a symlink and a `..` alias, a path with an invalid UTF-8 byte, a writable and a
read-only directory), starts a TCP+UDP canary listener and a tiny DNS responder on 127.0.0.1,
and runs the native probe and sandprobe_probe.py (unrestricted CPython) with the same
arguments, as uid 65534 when run as root (so permissions bind). Every frame must agree key by
key once the volatile values (pids, timings, CPU counters) are set aside; the Python probe's
documented extra keys (README.md) are listed, not compared. Usage errors (exit 2, no frame)
and the deadline (exit 124, no done frame) are compared too.

Part 2 (restricted): runs the probe under restricted_runner.py with each RestrictedPython
scripts/setup.sh --with python unpacked into /opt/sandprobe-runtimes (Debian's 8.0, alone and
with --unguarded-getattr; and the installed one if any) and shows what is refused
and which lang.escape variants read the canary: a variant counts as an escape only when its
sha256 equals this script's own hash of the canary (a random token), never on the probe's
word. The canary's size varies across runs so the pure-Python SHA-256 meets several padding
cases.

Exit status: 0 when every comparison agrees and the restricted runs behave as recorded in
EXPECTED_ESCAPES, 1 otherwise.
"""
import argparse
import hashlib
import json
import os
import secrets
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROBE = os.path.join(HERE, "sandprobe_probe.py")
RUNNER = os.path.join(HERE, "restricted_runner.py")
# Where scripts/setup.sh --with python unpacks the pinned python3-restrictedpython .debs.
RUNTIMES = os.environ.get("SANDPROBE_RUNTIMES", "/opt/sandprobe-runtimes")
RESTRICTEDPYTHON = os.path.join(RUNTIMES, "restrictedpython-8.0")

# Keys only the Python probe writes (README.md, "Extensions"): listed, not compared.
PYTHON_ONLY_KEYS = {"runtime", "runtime_version", "build_id", "families", "imports",
                    "deadline_armed", "sha256_impl", "worker"}
# Values that differ from run to run whoever runs: dropped before comparing.
VOLATILE = {
    "hello": {"pid"},
    "res.memory": {"ms", "cgroup_memory_max_usage_bytes", "cgroup_memory_failcnt"},
    # kernel: boot_time_ms is REALTIME - BOOTTIME read a moment apart (a millisecond's rounding);
    # the rest of it is compared by hand in the README's res.cpu row.
    "res.cpu": {"cpu_seconds", "wall_seconds", "effective_cores", "kernel"},
    "res.wall": {"elapsed_ms"},
    "net.tcp": {"connect_ms"},
    "env.secret": {"processes_scanned", "environs_readable"},
    "persist.plant": {"pid"},
    "persist.check": {"pids"},
}
# Keys the native probe writes and the Python probe does not yet, and why (dropped on both sides).
NOT_YET_WRITTEN = {}

# What each RestrictedPython does with each lang.escape variant, as measured (README.md):
# True = the canary was read (hash proven), False = blocked. A change is a finding.
EXPECTED_ESCAPES = {
    "8.0": {"import_statement": False, "builtin_open": False, "generator_frame": False,
            "traceback_frame": False, "function_globals": False, "subclasses": False,
            "module_private": False, "format_method": False, "format_unbound": False,
            "format_map": False},
    # 8.0 with getattr/_getattr_ = Eval.default_guarded_getattr (the plain getattr): the
    # compile-time checks hold, the runtime ones are gone.
    "8.0 getattr unguarded": {
            "import_statement": False, "builtin_open": False, "generator_frame": True,
            "traceback_frame": True, "function_globals": True, "subclasses": True,
            "module_private": True, "format_method": False, "format_unbound": False,
            "format_map": False},
}


# ---------------------------------------------------------------------------------------------
# Canaries on loopback: TCP and UDP answer "sandprobe-ack", DNS answers A 127.0.0.1.

class TcpCanary(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(2)
        try:
            line = self.request.recv(256)
            self.server.received.append(line)
            self.request.sendall(b"sandprobe-ack\n")
        except OSError:
            pass


class UdpCanary(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        self.server.received.append(data)
        sock.sendto(b"sandprobe-ack\n", self.client_address)


class DnsCanary(socketserver.BaseRequestHandler):
    def handle(self):
        query, sock = self.request
        self.server.received.append(query)
        if len(query) < 17:
            return
        end = 12
        while end < len(query) and query[end] != 0:
            end += 1 + query[end]
        question = query[12:end + 5]
        header = query[0:2] + b"\x81\x80" + b"\x00\x01\x00\x01\x00\x00\x00\x00"
        answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01"
        sock.sendto(header + question + answer, self.client_address)


def start_server(kind, handler):
    server = kind(("127.0.0.1", 0), handler)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


# ---------------------------------------------------------------------------------------------
# Running probes.

def drop_privileges():
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def run(argv, env=None, timeout=60):
    done = subprocess.run(argv, capture_output=True, env=env, timeout=timeout, cwd="/")
    return done.returncode, done.stdout, done.stderr


def frames(stdout, nonce):
    prefix = ("@@sandprobe " + nonce + " ").encode()
    out = []
    for line in stdout.split(b"\n"):
        if line.startswith(prefix):
            out.append(json.loads(line[len(prefix):].decode("utf-8")))
    return out


def normalise(fact):
    family = fact.get("family", "")
    drop = VOLATILE.get(family, set()) | PYTHON_ONLY_KEYS | NOT_YET_WRITTEN.get(family, set())
    out = {k: v for k, v in fact.items() if k not in drop}
    if family == "res.cpu" and isinstance(out.get("cpu_cgroup"), dict):
        out["cpu_cgroup"] = {k: v for k, v in out["cpu_cgroup"].items()
                             if k not in ("stat_before", "stat_after")}
    return out


def compare_case(name, native_argv, python_argv, nonce, env, report):
    n_rc, n_out, n_err = run(native_argv, env)
    p_rc, p_out, p_err = run(python_argv, env)
    n_frames, p_frames = frames(n_out, nonce), frames(p_out, nonce)
    problems = []
    if n_rc != p_rc:
        problems.append("exit %d (native) vs %d (python); python stderr: %s"
                        % (n_rc, p_rc, p_err.decode(errors="replace")[-300:]))
    if len(n_frames) != len(p_frames):
        problems.append("%d frames (native) vs %d (python)" % (len(n_frames), len(p_frames)))
    extras = set()
    compared = 0
    for i, (a, b) in enumerate(zip(n_frames, p_frames)):
        extras |= set(b) - set(a)
        na, nb = normalise(a), normalise(b)
        compared += len(na)
        for key in sorted(set(na) | set(nb)):
            if na.get(key, "<absent>") != nb.get(key, "<absent>"):
                problems.append("frame %d (%s) key %s: native %s, python %s" % (
                    i, a.get("family", "done"), key, json.dumps(na.get(key, "<absent>"))[:120],
                    json.dumps(nb.get(key, "<absent>"))[:120]))
    status = "agree" if not problems else "DIFFER"
    report.append((name, status, len(n_frames), compared, sorted(extras - PYTHON_ONLY_KEYS)))
    print("  %-22s %-6s exit %d/%d, %d frames, %d keys compared%s" % (
        name, status, n_rc, p_rc, len(n_frames), compared,
        "" if not (extras - PYTHON_ONLY_KEYS) else ", undocumented extra keys: %s"
        % sorted(extras - PYTHON_ONLY_KEYS)))
    for problem in problems[:12]:
        print("      " + problem)
    return not problems


def build_tree(root):
    os.chmod(root, 0o755)
    paths = {}
    data = os.path.join(root, "data")
    os.mkdir(data, 0o755)
    paths["readable"] = os.path.join(data, "readable.txt")
    with open(paths["readable"], "wb") as f:
        f.write(b"readable content\n" * 300)  # 5100 bytes: truncated at 4096
    paths["unreadable"] = os.path.join(data, "unreadable.txt")
    with open(paths["unreadable"], "wb") as f:
        f.write(b"secret\n")
    os.chmod(paths["unreadable"], 0o600)
    paths["missing"] = os.path.join(data, "missing.txt")
    paths["dir"] = data
    odd = os.path.join(data, b"odd-\xff-name".decode("utf-8", "surrogateescape"))
    with open(odd, "wb") as f:
        f.write(b"odd\n")
    paths["odd"] = odd
    paths["link"] = os.path.join(root, "link-to-readable")
    os.symlink(paths["readable"], paths["link"])
    paths["dotdot"] = os.path.join(data, "..", "data", "readable.txt")
    paths["writable"] = os.path.join(root, "writable")
    os.mkdir(paths["writable"])
    os.chmod(paths["writable"], 0o777)
    paths["readonly"] = os.path.join(root, "readonly")
    os.mkdir(paths["readonly"], 0o755)
    paths["scratch"] = paths["writable"]
    return paths


def conformance(native, python, report):
    print("Part 1: native probe vs sandprobe_probe.py on CPython (unrestricted)")
    tcp = start_server(socketserver.ThreadingTCPServer, TcpCanary)
    udp = start_server(socketserver.ThreadingUDPServer, UdpCanary)
    dns = start_server(socketserver.ThreadingUDPServer, DnsCanary)
    refused = closed_port()
    root = tempfile.mkdtemp(prefix="sandprobe-compare-")
    ok = True
    try:
        p = build_tree(root)
        bin_dir = os.path.join(root, "bin")
        os.mkdir(bin_dir, 0o755)
        native_copy = os.path.join(bin_dir, "sandprobe-probe")
        shutil.copy2(native, native_copy)
        python_copy = os.path.join(bin_dir, "sandprobe_probe.py")
        shutil.copy2(PROBE, python_copy)
        for f in (native_copy, python_copy):
            os.chmod(f, 0o755)
        drop = drop_privileges()
        print("  running as %s" % ("uid 65534 (setpriv)" if drop else "uid %d" % os.geteuid()))
        env = {"PATH": "/usr/bin:/bin", "HOME": p["writable"],
               "SANDPROBE_CANARY_PYCMP": "token-" + secrets.token_hex(8)}
        token = secrets.token_hex(6)
        cases = [
            ("fs.read", ["fs.read", p["readable"], p["unreadable"], p["missing"], p["dir"],
                         p["odd"], p["link"], p["dotdot"], "/proc/self/root" + p["readable"],
                         "/etc/shadow"]),
            ("fs.write", ["fs.write", p["writable"], p["readonly"], p["missing"]]),
            ("fs.alias", ["fs.alias", "--scratch", p["scratch"], p["readable"], p["unreadable"],
                          p["missing"]]),
            ("env.secret present", ["env.secret", "SANDPROBE_CANARY_"]),
            ("env.secret absent", ["env.secret", "SANDPROBE_ABSENT_"]),
            ("net.tcp", ["net.tcp", "lo=127.0.0.1:%d" % tcp.server_address[1],
                         "closed=127.0.0.1:%d" % refused]),
            ("net.udp", ["net.udp", "lo=127.0.0.1:%d" % udp.server_address[1],
                         "closed=127.0.0.1:%d" % refused]),
            ("net.dns", ["net.dns", "lo=127.0.0.1:%d" % dns.server_address[1]]),
            ("res.memory", ["res.memory", "--ceiling-mib", "16", "--every-mib", "4"]),
            ("res.cpu", ["res.cpu", "--threads", "2", "--window-ms", "300"]),
            ("res.wall", ["res.wall", "--ceiling-seconds", "1"]),
            ("persist", ["persist.plant", "--token", token, "--background-seconds", "5",
                         p["writable"], "@home", "@cwd", "--next", "persist.check", "--token",
                         token, p["writable"], "@home", p["readonly"]]),
        ]
        for name, args in cases:
            nonce = "cmp" + secrets.token_hex(4)
            head = ["--nonce", nonce]
            ok &= compare_case(name, drop + [native_copy] + head + args,
                               drop + [python] + [python_copy] + head + args, nonce, env, report)
        nonce = "cmpdeadline"
        ok &= compare_case("deadline (exit 124)",
                           drop + [native_copy, "--nonce", nonce, "--deadline-ms", "600",
                                   "res.wall", "--ceiling-seconds", "3"],
                           drop + [python, python_copy, "--nonce", nonce, "--deadline-ms", "600",
                                   "res.wall", "--ceiling-seconds", "3"], nonce, env, report)
        for name, args in [("usage: no nonce", ["fs.read", "/"]),
                           ("usage: bad family", ["--nonce", "x", "fs.nope"]),
                           ("usage: bad endpoint", ["--nonce", "x", "net.tcp", "a=host:1"]),
                           ("usage: bad ceiling", ["--nonce", "x", "res.memory",
                                                   "--ceiling-mib", "0"])]:
            ok &= compare_case(name, [native_copy] + args, [python, python_copy] + args, "x",
                               env, report)
        received = b"".join(tcp.received + udp.received)
        print("  canaries received: tcp %d, udp %d, dns %d (both probes' payloads)"
              % (len(tcp.received), len(udp.received), len(dns.received)))
        if b"net.tcp lo" not in received or b"net.udp lo" not in received:
            print("      the canary listener did not see the probes' payloads")
            ok = False
    finally:
        shutil.rmtree(root, ignore_errors=True)
        for server in (tcp, udp, dns):
            server.shutdown()
            server.server_close()
    return ok


# ---------------------------------------------------------------------------------------------
# Part 2: under RestrictedPython.

def restricted_variants(python):
    found = []
    if os.path.isdir(RESTRICTEDPYTHON):
        found.append(("8.0", ["--restrictedpython", RESTRICTEDPYTHON]))
        found.append(("8.0 getattr unguarded", ["--restrictedpython", RESTRICTEDPYTHON,
                                                "--unguarded-getattr"]))
    code, out, _ = run([python, "-c", "import RestrictedPython, importlib.metadata as m; "
                        "print(m.version('RestrictedPython'))"])
    if code == 0:
        found.append(("installed " + out.decode().strip(), []))
    return found


def restricted(python):
    print("\nPart 2: sandprobe_probe.py under restricted_runner.py")
    ok = True
    sizes = [33, 55, 56, 64, 119, 4096, 5000]
    for index, (version, runner_args) in enumerate(restricted_variants(python)):
        root = tempfile.mkdtemp(prefix="sandprobe-rp-")
        try:
            canary = os.path.join(root, "canary")
            size = sizes[index % len(sizes)]
            content = (("sandprobe canary " + secrets.token_hex(16) + "\n") * 200).encode()[:size]
            with open(canary, "wb") as f:
                f.write(content)
            host_sha = hashlib.sha256(content[:4096]).hexdigest()
            nonce = "rp" + secrets.token_hex(4)
            argv = [python, RUNNER] + runner_args + [
                PROBE, "--nonce", nonce, "fs.read", canary, "--next", "fs.write", root,
                "--next", "env.secret", "HOME", "--next", "net.tcp", "lo=127.0.0.1:9",
                "--next", "res.memory", "--ceiling-mib", "8", "--every-mib", "4",
                "--next", "res.wall", "--ceiling-seconds", "1",
                "--next", "lang.escape", "--canary", canary]
            code, out, err = run(argv)
            facts = frames(out, nonce)
            print("\n  RestrictedPython %s (canary %d bytes, host sha256 %s...)"
                  % (version, size, host_sha[:16]))
            if not facts:
                print("    no frames, exit %d: %s" % (code, err.decode(errors="replace")
                                                     .strip().splitlines()[-1][:200]))
                continue
            hello = facts[0]
            print("    hello: runtime_version=%r imports=%s sha256_impl=%s"
                  % (hello.get("runtime_version"), hello.get("imports"),
                     hello.get("sha256_impl")))
            for fact in facts[1:]:
                family = fact.get("family")
                if family in (None, "lang.escape") or fact.get("kind") == "progress":
                    continue
                state = ("refused (%s)" % fact.get("error") if fact.get("denied_by")
                         else "ok" if fact.get("ok") else "failed %s" % fact.get("errno"))
                print("    %-12s %s" % (family, state[:110]))
            print("    lang.escape, per variant (route that read the canary / why blocked):")
            expected = EXPECTED_ESCAPES.get(version)
            for fact in facts:
                if fact.get("family") != "lang.escape":
                    continue
                proven = fact.get("sha256") == host_sha
                routes = [a["route"] for a in fact.get("attempts", [])
                          if a.get("ok") and a.get("sha256") == host_sha]
                if fact.get("ok") and not proven:
                    print("      %-18s claims a read but its sha256 is not the canary's"
                          % fact["variant"])
                detail = ("READ CANARY via " + ", ".join(routes) if proven
                          else "disclosed %r" % fact.get("reached") if fact.get("disclosed")
                          else "blocked: " + (fact.get("error") or "")[:95])
                print("      %-18s %s" % (fact["variant"], detail))
                if expected is not None and expected.get(fact["variant"]) != proven:
                    print("        ^ differs from EXPECTED_ESCAPES[%r]" % version)
                    ok = False
            if facts[-1] != {"done": True}:
                print("    no done frame (exit %d)" % code)
                ok = False
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return ok


def pure_sha256_sizes(python):
    # The pure-Python SHA-256 (what a restricted read is hashed with) over the padding edges,
    # through the escape the unguarded getattr lets through; each hash against hashlib's here.
    print("\nPure-Python SHA-256 under RestrictedPython 8.0 (getattr unguarded), against hashlib:")
    runner_args = ["--restrictedpython", RESTRICTEDPYTHON, "--unguarded-getattr"]
    ok = True
    for size in [0, 1, 55, 56, 63, 64, 119, 120, 4095, 4096, 5000]:
        root = tempfile.mkdtemp(prefix="sandprobe-sha-")
        try:
            canary = os.path.join(root, "canary")
            content = secrets.token_bytes(size)
            with open(canary, "wb") as f:
                f.write(content)
            want = hashlib.sha256(content[:4096]).hexdigest()
            nonce = "sha" + str(size)
            code, out, _ = run([python, RUNNER] + runner_args +
                               [PROBE, "--nonce", nonce, "lang.escape", "--canary", canary])
            got = [f for f in frames(out, nonce) if f.get("variant") == "generator_frame"]
            same = (len(got) == 1 and got[0].get("sha256") == want and
                    got[0].get("sha256_impl") == "pure-python")
            ok &= same
            print("  %5d bytes: %s" % (size, "same" if same else "DIFFERENT: %s" % got))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--native", default=os.path.join(REPO, "build", "probe",
                                                         "sandprobe-probe"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--skip-restricted", action="store_true")
    opts = parser.parse_args()
    if not opts.skip_restricted and not os.path.isdir(RESTRICTEDPYTHON):
        print("compare_native: no RestrictedPython at %s (scripts/setup.sh --with python)"
              % RESTRICTEDPYTHON, file=sys.stderr)
        return 1 if os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1" else 77
    if not os.access(opts.native, os.X_OK):
        print("compare_native: no native probe at %s (build sandprobe-probe or pass --native)"
              % opts.native, file=sys.stderr)
        return 2
    report = []
    ok = conformance(opts.native, opts.python, report)
    if not opts.skip_restricted:
        for name, passed in [("restricted runs", restricted(opts.python)),
                             ("pure sha256 sizes", pure_sha256_sizes(opts.python))]:
            report.append((name, "agree" if passed else "DIFFER", 0, 0, []))
            ok &= passed
    agreed = sum(1 for r in report if r[1] == "agree")
    print("\n%d passed, %d failed" % (agreed, len(report) - agreed))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
