# sandprobe_probe.py: the sandprobe probe in Python, for sandboxes that run Python code
# in-process (RestrictedPython and the like) and so cannot start the native binary.
#
#   python3 sandprobe_probe.py --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... [--next FAMILY ARGS...]...
#   python3 sandprobe_probe.py --families
#
# The contract is the native probe's (probes/probe_main.cc): a hello fact, one fact per thing
# tried, a final {"done":true} frame, each as `@@sandprobe NONCE <json>` on stdout; usage errors
# exit 2 before any frame; the deadline exits 124 without a done frame. Facts carry the same
# keys and values as the native probe's for every family both implement (compare_native.py
# checks it), and the JSON is written with sorted keys, as nlohmann writes it.
#
# The same file runs unchanged as untrusted code inside a RestrictedPython sandbox
# (restricted_runner.py), so it is written in the subset RestrictedPython compiles:
#   - no name, attribute or parameter starts with an underscore (underscore names appear only
#     inside string literals, which is what the escape attempts of lang.escape are about);
#   - no augmented assignment, no tuple unpacking, no attribute stores, no str.format, no
#     f-strings, no `with`; frame and generator attributes are named only as strings;
#   - only builtins RestrictedPython's safe_builtins/limited_builtins hold are needed to run
#     (no dict, type, min, max, enumerate; range() stays under limited_range's 1000);
#   - every capability (os, socket, open, time...) is imported or looked up inside a try, and a
#     refusal becomes a fact: "ok": false, "errno": "EPERM", "denied_by": "runtime-permission",
#     "error": what the runtime said (see README.md). A refusal is never a crash.
# Under RestrictedPython the arguments come from the global `sandprobe_argv` the runner passes
# (an integrator's input) and frames go out through print(), the output channel it provides.

BUILD_ID = "@SANDPROBE_PROBE_BUILD_ID@"

FRAME_PREFIX = "@@sandprobe "
DNS_ZONE = "sandprobe.test"

EXIT_PASS = 0
EXIT_USAGE = 2
EXIT_PROBE_DEADLINE = 124

DEFAULT_DEADLINE_MS = 30000
MAX_DEADLINE_MS = 24 * 3600 * 1000
MAX_NONCE_LENGTH = 128
MAX_PATHS_PER_FAMILY = 4096
MAX_READ_BYTES = 4096
MAX_DIR_ENTRIES = 1024
MAX_MOUNTINFO_BYTES = 1048576
MAX_MOUNTS = 512
MAX_MOUNT_ROOTS = 256
MAX_HITS_LISTED = 16
MAX_MOUNT_ROOT_TRIES = 200000
MAX_PIDS = 4096
MAX_ENVIRON_BYTES = 65536
MAX_CMDLINE_BYTES = 65536
NET_WAIT_MS = 2000
MAX_NET_ENDPOINTS = 64
DNS_MAX_ANSWERS = 16
MAX_MEMORY_CEILING_MIB = 4096
MAX_CPU_THREADS = 64
MAX_CPU_WINDOW_MS = 10000
CPU_CHECKPOINT_MS = 100
MAX_WALL_SECONDS = 20
WALL_PROGRESS_MS = 250
MAX_BACKGROUND_SECONDS = 600
MAX_CGROUP_LINES = 4096
MAX_CGROUP_STAT_KEYS = 64
MAX_CGROUP_ANCESTORS = 32
MIB = 1048576
MAX_ESCAPE_FRAMES = 64
MAX_ESCAPE_SUBCLASSES = 4096

DENIED_BY_RUNTIME = "runtime-permission"

# glibc's strerrorname_np (what the native probe reports) where Python's errno.errorcode picks
# another alias, and the common names for when the errno module cannot be imported.
ERRNO_GLIBC_NAMES = {35: "EDEADLK", 95: "EOPNOTSUPP", 133: "EHWPOISON"}
ERRNO_FALLBACK_NAMES = {
    1: "EPERM", 2: "ENOENT", 3: "ESRCH", 4: "EINTR", 5: "EIO", 6: "ENXIO", 7: "E2BIG",
    9: "EBADF", 11: "EAGAIN", 12: "ENOMEM", 13: "EACCES", 14: "EFAULT", 16: "EBUSY",
    17: "EEXIST", 18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL",
    23: "ENFILE", 24: "EMFILE", 26: "ETXTBSY", 27: "EFBIG", 28: "ENOSPC", 30: "EROFS",
    32: "EPIPE", 36: "ENAMETOOLONG", 38: "ENOSYS", 40: "ELOOP", 74: "EBADMSG",
    90: "EMSGSIZE", 95: "EOPNOTSUPP", 97: "EAFNOSUPPORT", 98: "EADDRINUSE",
    99: "EADDRNOTAVAIL", 101: "ENETUNREACH", 104: "ECONNRESET", 110: "ETIMEDOUT",
    111: "ECONNREFUSED", 113: "EHOSTUNREACH", 115: "EINPROGRESS", 122: "EDQUOT",
}
ERRNO_NUMBERS = {"EINPROGRESS": 115, "ETIMEDOUT": 110, "EMSGSIZE": 90, "ENOMEM": 12,
                 "EBADMSG": 74, "ENOENT": 2, "ENOSPC": 28}

SHA256_K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]
SHA256_H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]

# What this run has: the modules it could import (None where the runtime refused), the error
# of the first refused import, the nonce and whether the deadline is armed.
RT = {}


# ---------------------------------------------------------------------------------------------
# The runtime: which capabilities exist here.

def describe_error(err):
    # "NameError: name 'open' is not defined": the class name comes from repr(), since
    # err.__class__ cannot be spelled in restricted code.
    text = repr(err)
    cut = text.find("(")
    name = text if cut < 0 else text[0:cut]
    return name + ": " + str(err)


def note_import_error(err):
    if RT["import_error"] == "":
        RT["import_error"] = describe_error(err)


def load_runtime():
    for name in ["os", "sys", "errno", "signal", "socket", "select", "time", "mmap",
                 "hashlib", "resource", "platform", "string", "random", "ctypes"]:
        RT[name] = None
    RT["import_error"] = ""
    RT["deadline_armed"] = False
    RT["nonce"] = ""
    try:
        import os
        RT["os"] = os
    except Exception as e:
        note_import_error(e)
    try:
        import sys
        RT["sys"] = sys
    except Exception as e:
        note_import_error(e)
    try:
        import errno
        RT["errno"] = errno
    except Exception as e:
        note_import_error(e)
    try:
        import signal
        RT["signal"] = signal
    except Exception as e:
        note_import_error(e)
    try:
        import socket
        RT["socket"] = socket
    except Exception as e:
        note_import_error(e)
    try:
        import select
        RT["select"] = select
    except Exception as e:
        note_import_error(e)
    try:
        import time
        RT["time"] = time
    except Exception as e:
        note_import_error(e)
    try:
        import mmap
        RT["mmap"] = mmap
    except Exception as e:
        note_import_error(e)
    try:
        import hashlib
        RT["hashlib"] = hashlib
    except Exception as e:
        note_import_error(e)
    try:
        import resource
        RT["resource"] = resource
    except Exception as e:
        note_import_error(e)
    try:
        import platform
        RT["platform"] = platform
    except Exception as e:
        note_import_error(e)
    try:
        import string
        RT["string"] = string
    except Exception as e:
        note_import_error(e)
        RT["string"] = sandbox_string_module()
    try:
        import random
        RT["random"] = random
    except Exception as e:
        note_import_error(e)
        RT["random"] = sandbox_random_module()


def sandbox_string_module():
    # utility_builtins' `string` in a RestrictedPython sandbox (a global, not an import).
    try:
        return string
    except NameError:
        return None


def sandbox_random_module():
    try:
        return random
    except NameError:
        return None


def program_arguments():
    # The runner's input first: a sandbox whose import works may still hand the probe its
    # arguments as an integrator does, in a global.
    try:
        return list(sandprobe_argv)
    except NameError:
        pass
    if RT["sys"] is not None:
        return list(RT["sys"].argv[1:])
    return None


def runtime_version():
    try:
        return str(sandprobe_runtime_version)
    except NameError:
        pass
    platform = RT["platform"]
    if platform is not None:
        return platform.python_implementation().lower() + " " + platform.python_version()
    return "restricted python (version not visible)"


def refusal(fact, step, error):
    # A capability the runtime does not give: a fact like any failed attempt, and says so.
    fact["ok"] = False
    fact["step"] = step
    fact["errno"] = "EPERM"
    fact["denied_by"] = DENIED_BY_RUNTIME
    fact["error"] = error
    return fact


def missing_module_error(name):
    if RT["import_error"] != "":
        return RT["import_error"]
    return "ImportError: " + name + " is not available"


def monotonic_ms():
    return int(RT["time"].monotonic() * 1000)


def exit_now(code):
    # os._exit, spelled as a string: restricted code may not name it, and only the unrestricted
    # probe ever gets here (only it can fork or arm a deadline).
    getattr(RT["os"], "_" + "exit")(code)


# ---------------------------------------------------------------------------------------------
# Frames: `@@sandprobe NONCE <json>`, keys sorted, invalid UTF-8 replaced (U+FFFD) with a
# "_hex" twin holding the exact bytes (probes/frame.h).

def is_mapping(value):
    try:
        keys = value.keys
    except AttributeError:
        return False
    return keys is not None and callable(keys)


def valid_text(text):
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")


def raw_bytes(text):
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def json_string(text):
    text = valid_text(text)
    if text.isascii() and text.isprintable():
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    parts = []
    for ch in text:
        code = ord(ch)
        if ch == '"':
            parts.append('\\"')
        elif ch == "\\":
            parts.append("\\\\")
        elif code == 8:
            parts.append("\\b")
        elif code == 12:
            parts.append("\\f")
        elif code == 10:
            parts.append("\\n")
        elif code == 13:
            parts.append("\\r")
        elif code == 9:
            parts.append("\\t")
        elif code < 32:
            parts.append("\\u%04x" % code)
        else:
            parts.append(ch)
    return '"' + "".join(parts) + '"'


def json_text(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if is_mapping(value):
        parts = []
        for key in sorted(value.keys()):
            parts.append(json_string(key) + ":" + json_text(value[key]))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, bytes):
        return json_string(value.decode("utf-8", "replace"))
    parts = []
    for item in value:
        parts.append(json_text(item))
    return "[" + ",".join(parts) + "]"


def set_bytes_field(fact, key, value):
    fact[key] = value
    if valid_text(value) != value:
        fact[key + "_hex"] = raw_bytes(value).hex()


def write_stderr(text):
    sys = RT["sys"]
    if sys is not None:
        sys.stderr.write(text)
        sys.stderr.flush()
    else:
        print(text.rstrip("\n"))


def emit(fact):
    line = FRAME_PREFIX + RT["nonce"] + " " + json_text(fact) + "\n"
    os = RT["os"]
    if os is None:
        # The sandbox's output channel: print(), which RestrictedPython routes to the
        # integrator's _print_ (restricted_runner.py streams it to stdout).
        print(line[0:len(line) - 1])
        return
    data = line.encode("utf-8")
    done = 0
    while done < len(data):
        try:
            written = os.write(1, data[done:])
        except OSError as e:
            write_stderr("sandprobe-probe: write(stdout): " + errno_name(e.errno) + "\n")
            return
        if written <= 0:
            write_stderr("sandprobe-probe: write(stdout): EIO\n")
            return
        done = done + written


def errno_name(number):
    if not isinstance(number, int):
        return "EIO"
    if number in ERRNO_GLIBC_NAMES:
        return ERRNO_GLIBC_NAMES[number]
    errno = RT["errno"]
    if errno is not None:
        name = errno.errorcode.get(number)
        if name is not None:
            return name
    if number in ERRNO_FALLBACK_NAMES:
        return ERRNO_FALLBACK_NAMES[number]
    return "E" + str(number)


# ---------------------------------------------------------------------------------------------
# SHA-256: hashlib where it can be imported, else the same function in plain Python (FIPS
# 180-4), so a restricted read that reached a file can still show its hash.

def rotr(x, n):
    return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


def pure_sha256hex(data):
    msg = []
    for b in data:
        msg.append(b)
    bit_length = len(msg) * 8
    msg.append(0x80)
    while len(msg) % 64 != 56:
        msg.append(0)
    shift = 56
    while shift >= 0:
        msg.append((bit_length >> shift) & 0xFF)
        shift = shift - 8
    h = list(SHA256_H0)
    offset = 0
    while offset < len(msg):
        w = []
        for t in range(16):
            at = offset + 4 * t
            w.append((msg[at] << 24) | (msg[at + 1] << 16) | (msg[at + 2] << 8) | msg[at + 3])
        for t in range(16, 64):
            s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w.append((w[t - 16] + s0 + w[t - 7] + s1) & 0xFFFFFFFF)
        a = h[0]
        b = h[1]
        c = h[2]
        d = h[3]
        e = h[4]
        f = h[5]
        g = h[6]
        k = h[7]
        for t in range(64):
            big1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            choose = (e & f) ^ ((~e) & g)
            temp1 = (k + big1 + choose + SHA256_K[t] + w[t]) & 0xFFFFFFFF
            big0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            majority = (a & b) ^ (a & c) ^ (b & c)
            temp2 = (big0 + majority) & 0xFFFFFFFF
            k = g
            g = f
            f = e
            e = (d + temp1) & 0xFFFFFFFF
            d = c
            c = b
            b = a
            a = (temp1 + temp2) & 0xFFFFFFFF
        sums = [a, b, c, d, e, f, g, k]
        nxt = []
        for t in range(8):
            nxt.append((h[t] + sums[t]) & 0xFFFFFFFF)
        h = nxt
        offset = offset + 64
    out = ""
    for word in h:
        out = out + ("%08x" % word)
    return out


def sha256hex(data):
    hashlib = RT["hashlib"]
    if hashlib is not None:
        return hashlib.sha256(data).hexdigest()
    return pure_sha256hex(data)


def sha256_impl():
    return "hashlib" if RT["hashlib"] is not None else "pure-python"


# ---------------------------------------------------------------------------------------------
# Argument helpers shared by the families.

def parse_long(text):
    # strtol's grammar (leading blanks, an optional sign, decimal digits), all of the text;
    # None when it is not that.
    body = text.lstrip(" \t\n\r\f\v")
    digits = body
    if body.startswith("-") or body.startswith("+"):
        digits = body[1:]
    if digits == "" or not digits.isdigit() or not digits.isascii():
        return None
    return int(body)


def check_path_list(family, paths):
    if len(paths) == 0:
        return family + ": no paths given"
    if len(paths) > MAX_PATHS_PER_FAMILY:
        return (family + ": " + str(len(paths)) + " paths, at most " +
                str(MAX_PATHS_PER_FAMILY) + " per family")
    for path in paths:
        if path == "":
            return family + ": empty path"
    return ""


def parse_resource_args(family, args, numeric_max, wants_dir):
    # `--name VALUE` pairs (probes/resource_args.cc): {"error", "numbers", "dir"}.
    parsed = {"error": "", "numbers": {}, "dir": ""}
    i = 0
    while i < len(args):
        name = args[i]
        if i + 1 >= len(args):
            parsed["error"] = family + ": " + name + " needs a value"
            return parsed
        value = args[i + 1]
        i = i + 2
        if wants_dir and name == "--dir":
            if value == "" or not value.startswith("/"):
                parsed["error"] = family + ": --dir must be absolute"
                return parsed
            parsed["dir"] = value
            continue
        key = name[2:] if len(name) > 2 else name
        if not name.startswith("--") or key not in numeric_max:
            parsed["error"] = family + ": unknown argument " + name
            return parsed
        n = parse_long(value)
        if n is None or n <= 0 or n > numeric_max[key]:
            parsed["error"] = (family + ": " + name + ": expected 1.." + str(numeric_max[key]) +
                               ", got " + value)
            return parsed
        parsed["numbers"][key] = n
    for key in sorted(numeric_max.keys()):
        if key not in parsed["numbers"] and key.startswith("ceiling"):
            parsed["error"] = family + ": --" + key + " is required"
            return parsed
    if wants_dir and parsed["dir"] == "":
        parsed["error"] = family + ": --dir is required"
    return parsed


def arg_number(parsed, name, fallback):
    if name in parsed["numbers"]:
        return parsed["numbers"][name]
    return fallback


# ---------------------------------------------------------------------------------------------
# Reading a path (probes/path_content.h): a file's first 4096 bytes, or a directory's entry
# names (at most 1024, in readdir order, then sorted bytewise and joined by "\n").

def read_path_content(path):
    c = {"ok": False, "step": "", "errno": "", "kind": "other", "data": b"", "entries": 0,
         "truncated": False, "dev": None, "ino": None, "denied": ""}
    os = RT["os"]
    if os is None:
        return read_path_with_open(path, c)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        return path_failure(c, "open", e)
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        return path_failure(c, "fstat", e)
    c["dev"] = str(os.major(st.st_dev)) + ":" + str(os.minor(st.st_dev))
    c["ino"] = st.st_ino
    if (st.st_mode & 0o170000) == 0o040000:
        list_directory(os, fd, c)
    else:
        read_content(os, fd, st, c)
    return c


def path_failure(c, step, err):
    c["ok"] = False
    c["step"] = step
    c["errno"] = errno_name(err.errno)
    return c


def list_directory(os, fd, c):
    names = []
    try:
        entries = os.scandir(fd)
    except OSError as e:
        os.close(fd)
        return path_failure(c, "readdir", e)
    try:
        for entry in entries:
            if len(names) == MAX_DIR_ENTRIES:
                c["truncated"] = True  # one name past the cap proves there are more
                break
            names.append(raw_bytes(entry.name))
    except OSError as e:
        entries.close()
        os.close(fd)
        return path_failure(c, "readdir", e)
    entries.close()
    os.close(fd)
    c["ok"] = True
    c["kind"] = "dir"
    c["entries"] = len(names)
    c["data"] = b"\n".join(sorted(names))
    return c


def read_content(os, fd, st, c):
    chunks = []
    got = 0
    while got < MAX_READ_BYTES + 1:
        try:
            chunk = os.read(fd, MAX_READ_BYTES + 1 - got)
        except OSError as e:
            os.close(fd)
            return path_failure(c, "read", e)
        if len(chunk) == 0:
            break
        chunks.append(chunk)
        got = got + len(chunk)
    os.close(fd)
    data = b"".join(chunks)
    c["ok"] = True
    c["truncated"] = len(data) > MAX_READ_BYTES
    c["data"] = data[0:MAX_READ_BYTES]
    c["kind"] = "file" if (st.st_mode & 0o170000) == 0o100000 else "other"
    return c


def read_path_with_open(path, c):
    # No os module: a sandbox may still give open() (some integrators do). Without fstat the
    # object has no identity and a directory cannot be listed (open fails with EISDIR).
    try:
        handle = open(path, "rb")
    except NameError as e:
        c["denied"] = missing_module_error("os") + "; " + describe_error(e)
        c["step"] = "open"
        return c
    except OSError as e:
        return path_failure(c, "open", e)
    except Exception as e:
        c["denied"] = describe_error(e)
        c["step"] = "open"
        return c
    try:
        data = handle.read(MAX_READ_BYTES + 1)
    except OSError as e:
        handle.close()
        return path_failure(c, "read", e)
    handle.close()
    c["ok"] = True
    c["kind"] = "file"
    c["truncated"] = len(data) > MAX_READ_BYTES
    c["data"] = data[0:MAX_READ_BYTES]
    return c


def read_path_facts(path, fact):
    # probes/read_path.h: ok, kind, bytes|entries, truncated, sha256; or step + errno; dev/ino
    # once fstat succeeded.
    c = read_path_content(path)
    if c["dev"] is not None:
        fact["dev"] = c["dev"]
        fact["ino"] = c["ino"]
    if c["denied"] != "":
        return refusal(fact, c["step"], c["denied"])
    if not c["ok"]:
        fact["ok"] = False
        fact["step"] = c["step"]
        fact["errno"] = c["errno"]
        return fact
    fact["ok"] = True
    fact["kind"] = c["kind"]
    if c["kind"] == "dir":
        fact["entries"] = c["entries"]
    else:
        fact["bytes"] = len(c["data"])
    fact["truncated"] = c["truncated"]
    fact["sha256"] = sha256hex(c["data"])
    if RT["hashlib"] is None:
        fact["sha256_impl"] = sha256_impl()
    return fact


# ---------------------------------------------------------------------------------------------
# /proc/self/mountinfo (probes/mountinfo.h).

def unescape_mount_field(field):
    # proc(5) writes space, tab, newline and backslash as \ooo; bytes >= 0x80 come back as
    # surrogate escapes, like every other path here.
    out = []
    i = 0
    n = len(field)
    while i < n:
        ch = field[i]
        if (ch == "\\" and i + 3 < n and field[i + 1] in "0123" and field[i + 2] in "01234567"
                and field[i + 3] in "01234567"):
            value = int(field[i + 1:i + 4], 8)
            out.append(chr(value) if value < 128 else chr(0xDC00 + value))
            i = i + 4
        else:
            out.append(ch)
            i = i + 1
    return "".join(out)


def read_mountinfo_text():
    os = RT["os"]
    try:
        fd = os.open("/proc/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""
    chunks = []
    got = 0
    while got < MAX_MOUNTINFO_BYTES:
        try:
            chunk = os.read(fd, 8192)
        except OSError:
            break
        if len(chunk) == 0:
            break
        chunks.append(chunk)
        got = got + len(chunk)
    os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def parse_mountinfo(text):
    mounts = []
    for line in text.split("\n"):
        if len(mounts) == MAX_MOUNTS:
            break
        f = line.split()
        if len(f) < 6:
            continue
        mount_id = parse_long(f[0])
        parent_id = parse_long(f[1])
        if mount_id is None or parent_id is None:
            continue
        i = 6
        separator = False
        while i < len(f):
            if f[i] == "-":
                separator = True
                i = i + 1
                break
            i = i + 1
        if not separator or i + 1 >= len(f):
            continue
        dev = f[2]
        colon = dev.find(":")
        if colon < 0:
            continue
        major = parse_long(dev[0:colon])
        minor = parse_long(dev[colon + 1:])
        if major is None or minor is None:
            continue
        mounts.append({"root": unescape_mount_field(f[3]),
                       "mount_point": unescape_mount_field(f[4]),
                       "mount_options": f[5], "fstype": f[i],
                       "source": unescape_mount_field(f[i + 1]),
                       "super_options": f[i + 2] if i + 2 < len(f) else ""})
    return mounts


def has_mount_option(options, flag):
    return flag in options.split(",")


def mount_holding(mounts, path):
    best = None
    for m in mounts:
        p = m["mount_point"]
        holds = (p == "/" or path == p or
                 (len(path) > len(p) and path.startswith(p) and path[len(p)] == "/"))
        if holds and (best is None or len(p) >= len(best["mount_point"])):
            best = m
    return best


# ---------------------------------------------------------------------------------------------
# The deadline (probe_main.cc): SIGALRM after MS, exit 124 without a done frame. Held off while
# a family owns a file it created, so the exit never strands a nonce file.

def on_deadline(signum, frame):
    os = RT["os"]
    try:
        os.write(2, b"sandprobe-probe: deadline reached, stopping\n")
    except OSError:
        pass
    exit_now(EXIT_PROBE_DEADLINE)


def arm_deadline(deadline_ms):
    signal = RT["signal"]
    if signal is None or RT["os"] is None:
        return False
    signal.signal(signal.SIGALRM, on_deadline)
    signal.setitimer(signal.ITIMER_REAL, deadline_ms / 1000.0)
    return True


def hold_deadline():
    signal = RT["signal"]
    if signal is None or not RT["deadline_armed"]:
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])


def release_deadline(previous):
    if previous is not None:
        RT["signal"].pthread_sigmask(RT["signal"].SIG_SETMASK, previous)


# ---------------------------------------------------------------------------------------------
# fs.read PATH...

def check_fs_read(args):
    return check_path_list("fs.read", args)


def run_fs_read(args):
    for path in args:
        fact = {"family": "fs.read"}
        set_bytes_field(fact, "path", path)
        read_path_facts(path, fact)
        emit(fact)


# ---------------------------------------------------------------------------------------------
# fs.write DIR...: create DIR/.sandprobe-NONCE-<i> exclusively, write the nonce, close, unlink;
# the mount's read-only flags from statvfs and mountinfo (probes/fs_write.cc).

def try_create_and_remove(file, nonce, fact):
    os = RT["os"]
    fact["created"] = False
    fact["removed"] = False
    held = hold_deadline()
    try:
        fd = os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC |
                     os.O_NOCTTY | os.O_NONBLOCK, 0o600)
    except OSError as e:
        release_deadline(held)
        fact["ok"] = False
        fact["step"] = "open"
        fact["errno"] = errno_name(e.errno)
        return
    fact["created"] = True
    failed_step = ""
    failed_errno = ""
    data = nonce.encode("utf-8")
    try:
        written = os.write(fd, data)
        if written != len(data):
            failed_step = "write"
            failed_errno = "ENOSPC"  # a short write of a few bytes means a full disk
    except OSError as e:
        failed_step = "write"
        failed_errno = errno_name(e.errno)
    try:
        os.close(fd)
    except OSError as e:
        if failed_step == "":
            failed_step = "close"
            failed_errno = errno_name(e.errno)
    try:
        os.unlink(file)
        fact["removed"] = True
    except OSError as e:
        if failed_step == "":
            failed_step = "unlink"
            failed_errno = errno_name(e.errno)
    release_deadline(held)
    if failed_step != "":
        fact["ok"] = False
        fact["step"] = failed_step
        fact["errno"] = failed_errno
    else:
        fact["ok"] = True


def add_mount_flags(directory, mounts, fact):
    os = RT["os"]
    try:
        vfs = os.statvfs(directory)
        fact["ro_mount"] = (vfs.f_flag & os.ST_RDONLY) != 0
    except OSError as e:
        fact["ro_mount"] = None
        fact["statvfs_errno"] = errno_name(e.errno)
    try:
        real = os.path.realpath(directory, strict=True)
    except OSError:
        return  # no dir, no mount to name
    m = mount_holding(mounts, real)
    if m is not None:
        set_bytes_field(fact, "mount_point", m["mount_point"])
        fact["mountinfo_ro"] = (has_mount_option(m["mount_options"], "ro") or
                                has_mount_option(m["super_options"], "ro"))


def check_fs_write(args):
    return check_path_list("fs.write", args)


def run_fs_write(args):
    if RT["os"] is None:
        for path in args:
            fact = {"family": "fs.write", "created": False, "removed": False}
            set_bytes_field(fact, "path", path)
            emit(refusal(fact, "open", missing_module_error("os")))
        return
    mounts = parse_mountinfo(read_mountinfo_text())
    i = 0
    for directory in args:
        fact = {"family": "fs.write"}
        set_bytes_field(fact, "path", directory)
        file = directory + "/.sandprobe-" + RT["nonce"] + "-" + str(i)
        try_create_and_remove(file, RT["nonce"], fact)
        add_mount_flags(directory, mounts, fact)
        emit(fact)
        i = i + 1


# ---------------------------------------------------------------------------------------------
# fs.alias --scratch DIR PATH...: each path through dotdot, /proc/self/root, a planted symlink
# and under every other mount's root (probes/fs_alias.cc).

def dotdot_alias(scratch, path):
    via = scratch.rstrip("/")
    depth = 0
    in_component = False
    for c in scratch:
        if c != "/" and not in_component:
            depth = depth + 1
        in_component = c != "/"
    via = via + "/.." * depth
    return via + "/" + path.lstrip("/")


def alias_fact(path, variant, via):
    fact = {"family": "fs.alias", "variant": variant}
    set_bytes_field(fact, "path", path)
    set_bytes_field(fact, "via", via)
    return fact


def read_through_symlink(path, link, fact):
    os = RT["os"]
    held = hold_deadline()
    try:
        os.symlink(path, link)
    except OSError as e:
        release_deadline(held)
        fact["ok"] = False
        fact["step"] = "symlink"
        fact["errno"] = errno_name(e.errno)
        return
    read_path_facts(link, fact)
    try:
        os.unlink(link)
        fact["link_removed"] = True
    except OSError as e:
        fact["link_unlink_errno"] = errno_name(e.errno)
        fact["link_removed"] = False
    release_deadline(held)


def other_mounts():
    every = parse_mountinfo(read_mountinfo_text())
    out = []
    for m in every:
        p = m["mount_point"]
        if p == "/" or p == "" or not p.startswith("/"):
            continue
        if len(out) == MAX_MOUNT_ROOTS:
            break
        out.append(m)
    return {"mounts": out, "total": len(every)}


def names_under(m, path):
    names = [m["mount_point"] + path]
    root = m["root"]
    if root != "/" and len(path) > len(root) and path.startswith(root) and path[len(root)] == "/":
        names.append(m["mount_point"] + path[len(root):])
    return names


def mount_root_fact(path, mounts, budget):
    fact = {"family": "fs.alias", "variant": "mount_root"}
    set_bytes_field(fact, "path", path)
    hits = []
    tried = {}
    readable = 0
    for m in mounts["mounts"]:
        for via in names_under(m, path):
            if via == path or budget["left"] == 0 or via in tried:
                continue
            tried[via] = True
            budget["left"] = budget["left"] - 1
            hit = {}
            read_path_facts(via, hit)
            if hit.get("ok") is not True:
                continue
            readable = readable + 1
            if len(hits) == MAX_HITS_LISTED:
                continue
            set_bytes_field(hit, "via", via)
            hits.append(hit)
    fact["ok"] = readable > 0
    fact["mounts"] = len(mounts["mounts"])
    fact["mounts_total"] = mounts["total"]
    fact["tried"] = len(tried)
    fact["readable"] = readable
    fact["hits"] = hits
    fact["hits_truncated"] = readable > MAX_HITS_LISTED
    fact["budget_exhausted"] = budget["left"] == 0
    return fact


def check_fs_alias(args):
    if len(args) < 2 or args[0] != "--scratch" or args[1] == "":
        return "fs.alias: usage: fs.alias --scratch DIR PATH..."
    paths = args[2:]
    error = check_path_list("fs.alias", paths)
    if error != "":
        return error
    for path in paths:
        if not path.startswith("/"):
            return "fs.alias: path is not absolute: " + path
    return ""


def run_fs_alias(args):
    scratch = args[1]
    paths = args[2:]
    if RT["os"] is None:
        i = 0
        for path in paths:
            link = scratch + "/.sandprobe-" + RT["nonce"] + "-link-" + str(i)
            for pair in [["dotdot", dotdot_alias(scratch, path)],
                         ["proc_root", "/proc/self/root" + path], ["symlink", link]]:
                emit(refusal(alias_fact(path, pair[0], pair[1]),
                             "symlink" if pair[0] == "symlink" else "open",
                             missing_module_error("os")))
            fact = {"family": "fs.alias", "variant": "mount_root"}
            set_bytes_field(fact, "path", path)
            emit(refusal(fact, "mountinfo", missing_module_error("os")))
            i = i + 1
        return
    mounts = other_mounts()
    budget = {"left": MAX_MOUNT_ROOT_TRIES}
    i = 0
    for path in paths:
        dotdot = dotdot_alias(scratch, path)
        fact = alias_fact(path, "dotdot", dotdot)
        read_path_facts(dotdot, fact)
        emit(fact)

        proc_root = "/proc/self/root" + path
        fact = alias_fact(path, "proc_root", proc_root)
        read_path_facts(proc_root, fact)
        emit(fact)

        link = scratch + "/.sandprobe-" + RT["nonce"] + "-link-" + str(i)
        fact = alias_fact(path, "symlink", link)
        read_through_symlink(path, link, fact)
        emit(fact)

        emit(mount_root_fact(path, mounts, budget))
        i = i + 1


# ---------------------------------------------------------------------------------------------
# env.secret PREFIX: sha256 of the values of matching variables in environ and every readable
# /proc/*/environ (probes/env_secret.cc).

def match_entry(entry, prefix, source):
    # entry: "NAME=VALUE" bytes; returns the fact or None.
    eq = entry.find(b"=")
    if eq < 0:
        return None
    name = entry[0:eq]
    if not name.startswith(prefix):
        return None
    fact = {"family": "env.secret", "source": source}
    set_bytes_field(fact, "name", name.decode("utf-8", "surrogateescape"))
    fact["sha256"] = sha256hex(entry[eq + 1:])
    return fact


def read_environ(os, file):
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks = []
    got = 0
    ok = True
    while got < MAX_ENVIRON_BYTES:
        try:
            chunk = os.read(fd, MAX_ENVIRON_BYTES - got)
        except OSError:
            ok = False
            break
        if len(chunk) == 0:
            break
        chunks.append(chunk)
        got = got + len(chunk)
    os.close(fd)
    if not ok:
        return None
    text = b"".join(chunks)
    if got == MAX_ENVIRON_BYTES:
        # An entry cut by the cap is dropped: its hash would match nothing and mislead.
        last = text.rfind(b"\x00")
        text = b"" if last < 0 else text[0:last + 1]
    return text


def check_env_secret(args):
    if len(args) != 1 or args[0] == "":
        return "env.secret: usage: env.secret PREFIX"
    if "=" in args[0]:
        return "env.secret: PREFIX contains '='"
    return ""


def run_env_secret(args):
    prefix = raw_bytes(args[0])
    os = RT["os"]
    summary = {"family": "env.secret", "summary": True}
    if os is None:
        summary["processes_scanned"] = 0
        summary["environs_readable"] = 0
        summary["matches"] = 0
        emit(refusal(summary, "environ", missing_module_error("os")))
        return
    matches = 0
    for name in os.environb.keys():
        fact = match_entry(name + b"=" + os.environb[name], prefix, "environ")
        if fact is not None:
            emit(fact)
            matches = matches + 1
    scanned = 0
    readable = 0
    try:
        names = os.listdir("/proc")
    except OSError as e:
        names = []
        summary["proc_errno"] = errno_name(e.errno)
    me = str(os.getpid())
    for entry in names:
        if scanned >= MAX_PIDS:
            break
        if not entry.isdigit() or not entry.isascii() or entry == me:
            continue
        scanned = scanned + 1
        source = "/proc/" + entry + "/environ"
        content = read_environ(os, source)
        if content is None:
            continue
        readable = readable + 1
        for item in content.split(b"\x00"):
            fact = match_entry(item, prefix, source)
            if fact is not None:
                emit(fact)
                matches = matches + 1
    summary["processes_scanned"] = scanned
    summary["environs_readable"] = readable
    summary["matches"] = matches
    emit(summary)


# ---------------------------------------------------------------------------------------------
# net.tcp / net.udp / net.dns NAME=ADDR:PORT...: only the numeric addresses given (the harness's
# canaries), never a name lookup, never /etc/resolv.conf; every wait capped at 2 s.

def parse_port(text):
    if text == "" or len(text) > 5 or not text.isdigit() or not text.isascii():
        return None
    value = int(text)
    if value == 0 or value > 65535:
        return None
    return value


def is_ipv4_text(host):
    parts = host.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if part == "" or len(part) > 3 or not part.isdigit() or not part.isascii():
            return False
        if len(part) > 1 and part.startswith("0"):
            return False
        if int(part) > 255:
            return False
    return True


def parse_net_endpoint(arg):
    eq = arg.find("=")
    colon = arg.rfind(":")
    if eq <= 0 or colon < 0 or colon < eq:
        return None
    port = parse_port(arg[colon + 1:])
    if port is None:
        return None
    host = arg[eq + 1:colon]
    socket = RT["socket"]
    ep = {"name": arg[0:eq], "text": arg[eq + 1:], "port": port}
    if len(host) > 2 and host.startswith("[") and host.endswith("]"):
        ep["host"] = host[1:len(host) - 1]
        ep["v6"] = True
        if socket is not None:
            try:
                socket.inet_pton(socket.AF_INET6, ep["host"])
            except (OSError, ValueError):
                return None
        elif ep["host"].strip("0123456789abcdefABCDEF:.") != "" or ":" not in ep["host"]:
            return None
        return ep
    ep["host"] = host
    ep["v6"] = False
    if socket is not None:
        try:
            socket.inet_pton(socket.AF_INET, host)
        except (OSError, ValueError):
            return None
    elif not is_ipv4_text(host):
        return None
    return ep


def check_endpoint_args(family, args):
    if len(args) == 0:
        return family + ": no endpoints (NAME=ADDR:PORT)"
    if len(args) > MAX_NET_ENDPOINTS:
        return family + ": more than 64 endpoints"
    for arg in args:
        if parse_net_endpoint(arg) is None:
            return family + ": not NAME=ADDR:PORT with a numeric address: " + arg
    return ""


def canary_payload(nonce, family, name):
    return "sandprobe " + nonce + " " + family + " " + name + "\n"


def endpoint_socket(ep, kind):
    socket = RT["socket"]
    domain = socket.AF_INET6 if ep["v6"] else socket.AF_INET
    return socket.socket(domain, kind | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)


def endpoint_address(ep):
    if ep["v6"]:
        return (ep["host"], ep["port"], 0, 0)
    return (ep["host"], ep["port"])


def wait_for(sock, events):
    select = RT["select"]
    poller = select.poll()
    poller.register(sock.fileno(), events)
    try:
        ready = poller.poll(NET_WAIT_MS)
    except OSError:
        return select.POLLERR
    if len(ready) == 0:
        return 0
    return ready[0][1]


def net_fail(fact, step, name):
    fact["ok"] = False
    fact["step"] = step
    fact["errno"] = name
    return fact


def read_ack(sock, fact):
    select = RT["select"]
    socket = RT["socket"]
    fact["acked"] = False
    if (wait_for(sock, select.POLLIN) & (select.POLLIN | select.POLLERR | select.POLLHUP)) == 0:
        return
    try:
        data = sock.recv(64, socket.MSG_DONTWAIT)
    except OSError as e:
        fact["ack_errno"] = errno_name(e.errno)  # ECONNREFUSED on UDP: an ICMP unreachable
        return
    fact["acked"] = len(data) >= 13 and data.startswith(b"sandprobe-ack")


def send_canary(sock, payload, flags, fact):
    data = payload.encode("utf-8")
    try:
        sent = sock.send(data, flags)
    except OSError as e:
        return net_fail(fact, "send", errno_name(e.errno))
    if sent != len(data):
        return net_fail(fact, "send", "EMSGSIZE")
    fact["ok"] = True
    fact["sent"] = sent
    read_ack(sock, fact)
    return fact


def try_tcp(ep):
    fact = {"family": "net.tcp", "path": ep["name"], "addr": ep["text"], "nonce": RT["nonce"]}
    socket = RT["socket"]
    if socket is None or RT["select"] is None or RT["time"] is None:
        return refusal(fact, "socket", missing_module_error("socket"))
    start = monotonic_ms()
    try:
        sock = endpoint_socket(ep, socket.SOCK_STREAM)
    except OSError as e:
        return net_fail(fact, "socket", errno_name(e.errno))
    err = sock.connect_ex(endpoint_address(ep))
    if err == ERRNO_NUMBERS["EINPROGRESS"]:
        revents = wait_for(sock, RT["select"].POLLOUT)
        if revents == 0:
            err = ERRNO_NUMBERS["ETIMEDOUT"]
        else:
            try:
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            except OSError as e:
                err = e.errno
    fact["connect_ms"] = monotonic_ms() - start
    if err != 0:
        sock.close()
        return net_fail(fact, "connect", errno_name(err))
    fact["connected"] = True
    send_canary(sock, canary_payload(RT["nonce"], "net.tcp", ep["name"]), socket.MSG_NOSIGNAL, fact)
    sock.close()
    return fact


def try_udp(ep):
    fact = {"family": "net.udp", "path": ep["name"], "addr": ep["text"], "nonce": RT["nonce"]}
    socket = RT["socket"]
    if socket is None or RT["select"] is None:
        return refusal(fact, "socket", missing_module_error("socket"))
    try:
        sock = endpoint_socket(ep, socket.SOCK_DGRAM)
    except OSError as e:
        return net_fail(fact, "socket", errno_name(e.errno))
    err = sock.connect_ex(endpoint_address(ep))
    if err != 0:
        sock.close()
        return net_fail(fact, "connect", errno_name(err))
    send_canary(sock, canary_payload(RT["nonce"], "net.udp", ep["name"]), 0, fact)
    sock.close()
    return fact


def check_net_tcp(args):
    return check_endpoint_args("net.tcp", args)


def check_net_udp(args):
    return check_endpoint_args("net.udp", args)


def check_net_dns(args):
    return check_endpoint_args("net.dns", args)


def run_net_tcp(args):
    for arg in args:
        emit(try_tcp(parse_net_endpoint(arg)))


def run_net_udp(args):
    for arg in args:
        emit(try_udp(parse_net_endpoint(arg)))


def canary_query_name(nonce):
    return nonce[0:63] + "." + DNS_ZONE


def dns_query_id(nonce):
    qid = 0x5350
    for b in raw_bytes(nonce):
        qid = (qid * 31 + b) & 0xFFFF
    return qid


def build_dns_query(qid, name):
    q = [qid >> 8, qid & 0xFF, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0]
    for label in name.split("."):
        label = raw_bytes(label)[0:63]
        if len(label) == 0:
            continue
        q.append(len(label))
        for b in label:
            q.append(b)
    for b in [0x00, 0x00, 0x01, 0x00, 0x01]:  # root, type A, class IN
        q.append(b)
    return bytes(q)


def get16(p, at):
    return (p[at] << 8) | p[at + 1]


def skip_dns_name(p, at):
    labels = 0
    while labels < 128 and at < len(p):
        length = p[at]
        if length == 0:
            return at + 1
        if (length & 0xC0) == 0xC0:
            return at + 2 if at + 2 <= len(p) else None
        at = at + 1 + length
        labels = labels + 1
    return None


def parse_dns_reply(p, qid):
    reply = {"valid": False, "rcode": -1, "a_records": []}
    if len(p) < 12 or get16(p, 0) != qid or (p[2] & 0x80) == 0:
        return reply
    reply["valid"] = True
    reply["rcode"] = p[3] & 0x0F
    questions = get16(p, 4)
    answers = get16(p, 6)
    at = 12
    i = 0
    while i < questions and i < 4 and at is not None:
        at = skip_dns_name(p, at)
        if at is not None:
            at = at + 4
        i = i + 1
    i = 0
    while i < answers and i < DNS_MAX_ANSWERS:
        if at is None:
            break
        at = skip_dns_name(p, at)
        if at is None or at + 10 > len(p):
            break
        rtype = get16(p, at)
        rdlen = get16(p, at + 8)
        at = at + 10
        if at + rdlen > len(p):
            break
        if rtype == 1 and rdlen == 4:
            reply["a_records"].append(str(p[at]) + "." + str(p[at + 1]) + "." + str(p[at + 2]) +
                                      "." + str(p[at + 3]))
        at = at + rdlen
        i = i + 1
    return reply


def ask_dns(ep):
    qname = canary_query_name(RT["nonce"])
    fact = {"family": "net.dns", "path": ep["name"], "server": ep["text"], "qname": qname,
            "nonce": RT["nonce"]}
    socket = RT["socket"]
    if socket is None or RT["select"] is None:
        return refusal(fact, "socket", missing_module_error("socket"))
    qid = dns_query_id(RT["nonce"])
    query = build_dns_query(qid, qname)
    try:
        sock = endpoint_socket(ep, socket.SOCK_DGRAM)
    except OSError as e:
        return net_fail(fact, "socket", errno_name(e.errno))
    err = sock.connect_ex(endpoint_address(ep))
    if err != 0:
        sock.close()
        return net_fail(fact, "connect", errno_name(err))
    try:
        sent = sock.send(query)
    except OSError as e:
        sock.close()
        return net_fail(fact, "send", errno_name(e.errno))
    if sent != len(query):
        sock.close()
        return net_fail(fact, "send", "EMSGSIZE")
    fact["sent"] = sent  # bytes, as net.tcp and net.udp report it (probes/net_dns.cc)
    # Any event, as probes/net_dns.cc polls: an ICMP port unreachable is POLLERR, not POLLIN,
    # and the recv below names it (ECONNREFUSED), where a timeout would hide it.
    if wait_for(sock, RT["select"].POLLIN) == 0:
        sock.close()
        return net_fail(fact, "reply", "ETIMEDOUT")
    try:
        packet = sock.recv(512, socket.MSG_DONTWAIT)
    except OSError as e:
        sock.close()
        return net_fail(fact, "reply", errno_name(e.errno))
    sock.close()
    reply = parse_dns_reply(packet, qid)
    if not reply["valid"]:
        return net_fail(fact, "reply", "EBADMSG")
    names = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"]
    fact["ok"] = True
    fact["rcode"] = names[reply["rcode"]] if reply["rcode"] < 6 else str(reply["rcode"])
    fact["answers"] = reply["a_records"]
    return fact


def run_net_dns(args):
    for arg in args:
        emit(ask_dns(parse_net_endpoint(arg)))


# ---------------------------------------------------------------------------------------------
# Resource families (probes/resource_*.cc). Each loop stops at its ceiling.

def read_small_file(path):
    # The first line of a small file (at most 128 characters), or None when unreadable.
    os = RT["os"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        data = b""
    os.close(fd)
    if len(data) == 0:
        return None
    return data.split(b"\n")[0].decode("utf-8", "replace")[0:128]


def first_line_or_errno(path, max_bytes):
    # (the first line of a small file, "") or (None, errno name): the native ReadSmallFile.
    os = RT["os"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        return None, errno_name(e.errno)
    try:
        data = os.read(fd, max_bytes)
    except OSError as e:
        os.close(fd)
        return None, errno_name(e.errno)
    os.close(fd)
    return data.split(b"\n")[0].decode("utf-8", "surrogateescape"), ""


def kernel_context():
    # The kernel that keeps the clocks res.cpu reads (probes/priv_context.cc KernelContext): the
    # host compares each identity signal with its own (families/kernel_identity.h), so a runtime
    # run in another kernel (a VM's guest, gVisor) is told from one on the host's.
    os = RT["os"]
    kernel = {}
    try:
        uts = os.uname()
        kernel["sysname"] = uts.sysname
        kernel["release"] = uts.release
        kernel["version"] = uts.version
        kernel["machine"] = uts.machine
    except OSError as e:
        kernel["uname_errno"] = errno_name(e.errno)
    version, err = first_line_or_errno("/proc/version", 1024)
    if version is None:
        kernel["proc_version_errno"] = err
    else:
        set_bytes_field(kernel, "proc_version", version)
    boot_id, err = first_line_or_errno("/proc/sys/kernel/random/boot_id", 64)
    if boot_id is None:
        kernel["boot_id_errno"] = err
    else:
        set_bytes_field(kernel, "boot_id", boot_id)
    time = RT["time"]
    if time is not None and hasattr(time, "CLOCK_BOOTTIME"):
        real = time.clock_gettime_ns(time.CLOCK_REALTIME)
        boot = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        kernel["boot_time_ms"] = (real - boot) // 1000000
    try:
        st = os.stat("/proc/self/ns/user")
        kernel["nsfs_dev"] = str(os.major(st.st_dev)) + ":" + str(os.minor(st.st_dev))
    except OSError as e:
        kernel["nsfs_errno"] = errno_name(e.errno)
    return kernel


def read_lines(path, limit):
    os = RT["os"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    chunks = []
    got = 0
    while got < MAX_MOUNTINFO_BYTES:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if len(chunk) == 0:
            break
        chunks.append(chunk)
        got = got + len(chunk)
    os.close(fd)
    lines = b"".join(chunks).decode("utf-8", "surrogateescape").split("\n")
    if len(lines) > 0 and lines[len(lines) - 1] == "":
        lines = lines[0:len(lines) - 1]
    return lines[0:limit]


def add_file_reading(fact, key, path):
    text = read_small_file(path)
    if text is None:
        return
    n = parse_long(text)
    fact[key] = n if n is not None else text


def memory_step(blocks):
    # One MiB, every page written (a repeated byte is a memset, so the pages are touched).
    blocks.append(b"\x01" * MIB)


def run_res_memory_in_process(result, ceiling, every):
    # No fork here (a restricted runtime): the probe allocates itself. An OOM kill then ends the
    # probe, and the progress frames are the evidence.
    result["worker"] = "in-process"
    blocks = []
    reached = 0
    stopped_by = "ceiling"
    mib = 1
    while mib <= ceiling:
        try:
            memory_step(blocks)
        except MemoryError:
            stopped_by = "ENOMEM"
            break
        reached = mib
        if mib % every == 0:
            emit({"family": "res.memory", "kind": "progress", "mib": mib})
        mib = mib + 1
    blocks = []
    result["ok"] = True
    result["ms"] = None
    result["reached_mib"] = reached
    result["stopped_by"] = stopped_by
    emit(result)


def allocate_up_to(shared, ceiling, every):
    os = RT["os"]
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except Exception:
        pass
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"1000")
        except OSError:
            pass
        os.close(fd)
    except OSError:
        pass
    blocks = []
    mib = 1
    while mib <= ceiling:
        try:
            memory_step(blocks)
        except MemoryError:
            shared[8:16] = ERRNO_NUMBERS["ENOMEM"].to_bytes(8, "little")
            exit_now(0)
        shared[0:8] = mib.to_bytes(8, "little")
        if mib % every == 0:
            emit({"family": "res.memory", "kind": "progress", "mib": mib})
        mib = mib + 1
    exit_now(0)  # the ceiling; the kernel frees everything


def check_res_memory(args):
    return parse_resource_args("res.memory", args,
                               {"ceiling-mib": MAX_MEMORY_CEILING_MIB, "every-mib": 1024},
                               False)["error"]


def run_res_memory(args):
    parsed = parse_resource_args("res.memory", args,
                                 {"ceiling-mib": MAX_MEMORY_CEILING_MIB, "every-mib": 1024}, False)
    ceiling = arg_number(parsed, "ceiling-mib", 0)
    every = arg_number(parsed, "every-mib", 8)
    result = {"family": "res.memory", "kind": "result", "ceiling_mib": ceiling}
    os = RT["os"]
    if os is None or RT["mmap"] is None or RT["time"] is None:
        return run_res_memory_in_process(result, ceiling, every)
    shared = RT["mmap"].mmap(-1, 16)
    start = monotonic_ms()
    try:
        child = os.fork()
    except OSError as e:
        result["ok"] = False
        result["step"] = "fork"
        result["errno"] = errno_name(e.errno)
        emit(result)
        return
    if child == 0:
        try:
            allocate_up_to(shared, ceiling, every)
        finally:
            exit_now(0)
    status = os.waitpid(child, 0)[1]
    result["ok"] = True
    result["ms"] = monotonic_ms() - start
    result["reached_mib"] = int.from_bytes(shared[0:8], "little")
    stop_errno = int.from_bytes(shared[8:16], "little")
    if os.WIFSIGNALED(status):
        result["stopped_by"] = signal_name(os.WTERMSIG(status))
    elif stop_errno != 0:
        result["stopped_by"] = errno_name(stop_errno)
    else:
        result["stopped_by"] = "ceiling"
    add_file_reading(result, "cgroup_memory_limit_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
    add_file_reading(result, "cgroup_memsw_limit_bytes", "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")
    add_file_reading(result, "cgroup_memory_max_usage_bytes", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes")
    add_file_reading(result, "cgroup_memory_failcnt", "/sys/fs/cgroup/memory/memory.failcnt")
    add_file_reading(result, "cgroup2_memory_max", "/sys/fs/cgroup/memory.max")
    shared.close()
    emit(result)


def signal_name(number):
    signal = RT["signal"]
    try:
        return signal.Signals(number).name
    except (ValueError, AttributeError):
        return "SIG?"


# res.cpu: the probe's CPU cgroup (probes/resource_cpu_cgroup.cc), resolved from
# /proc/self/cgroup and /proc/self/mountinfo, never guessed.

def own_cgroup_path(v2):
    for line in read_lines("/proc/self/cgroup", MAX_CGROUP_LINES):
        f = line.split(":")
        if len(f) < 3:
            continue
        path = line[len(f[0]) + len(f[1]) + 2:]
        if v2:
            if f[0] == "0" and f[1] == "":
                return path
        elif "cpu" in f[1].split(","):
            return path
    return None


def resolve_cpu_cgroup(mountinfo_lines, v1_path, v2_path):
    v2 = None
    for line in mountinfo_lines:
        dash = line.find(" - ")
        if dash < 0:
            continue
        pre = line[0:dash].split(" ")
        post = line[dash + 3:].split(" ")
        if len(pre) < 5 or len(post) < 3:
            continue
        is_v1 = post[0] == "cgroup" and "cpu" in post[2].split(",")
        is_v2 = post[0] == "cgroup2"
        own = v1_path if is_v1 else v2_path
        if (not is_v1 and not is_v2) or own is None:
            continue
        root = pre[3]
        mountpoint = pre[4]
        at = {"version": 1 if is_v1 else 2, "mountpoint": mountpoint, "cgroup_path": own,
              "dir": mountpoint, "resolved": True}
        if root == "/":
            at["dir"] = mountpoint + ("" if own == "/" else own)
        elif own.startswith(root):
            at["dir"] = mountpoint + own[len(root):]
        elif own != "/":
            at["resolved"] = False
        if is_v1:
            return at
        if v2 is None:
            v2 = at
    return v2


def parse_cgroup_key_values(lines):
    out = {}
    for line in lines[0:MAX_CGROUP_STAT_KEYS]:
        space = line.find(" ")
        if space < 0:
            continue
        n = parse_long(line[space + 1:])
        if n is not None:
            out[line[0:space]] = n
    return out


def parse_cpu_max(line):
    f = line.split(" ")
    if len(f) != 2:
        return None
    period = parse_long(f[1])
    quota = -1 if f[0] == "max" else parse_long(f[0])
    if quota is None or period is None:
        return None
    return {"quota_us": quota, "period_us": period}


def read_cpu_quota(at, directory):
    if at["version"] == 2:
        lines = read_lines(directory + "/cpu.max", MAX_CGROUP_STAT_KEYS)
        return parse_cpu_max(lines[0]) if len(lines) > 0 else None
    quota = read_small_file(directory + "/cpu.cfs_quota_us")
    period = read_small_file(directory + "/cpu.cfs_period_us")
    q = parse_long(quota) if quota is not None else None
    p = parse_long(period) if period is not None else None
    if q is None or p is None:
        return None
    return {"quota_us": q, "period_us": p}


def describe_cpu_cgroup(at):
    out = {"version": at["version"], "dir": at["dir"], "cgroup_path": at["cgroup_path"],
           "resolved": at["resolved"]}
    out["quota"] = read_cpu_quota(at, at["dir"])
    tightest = -1.0
    directory = at["dir"]
    i = 0
    while i < MAX_CGROUP_ANCESTORS and len(directory) > len(at["mountpoint"]):
        directory = directory[0:directory.rfind("/")]
        i = i + 1
        quota = read_cpu_quota(at, directory)
        if quota is None or quota["quota_us"] <= 0 or quota["period_us"] <= 0:
            continue
        cores = quota["quota_us"] / quota["period_us"]
        if tightest < 0 or cores < tightest:
            tightest = cores
            out["ancestor_quota"] = {"quota_us": quota["quota_us"],
                                     "period_us": quota["period_us"], "dir": directory}
    own = out["quota"]
    own_binds = (own is not None and own["quota_us"] > 0 and own["period_us"] > 0 and
                 (tightest < 0 or own["quota_us"] / own["period_us"] <= tightest))
    out["stat_dir"] = at["dir"] if (tightest < 0 or own_binds) else out["ancestor_quota"]["dir"]
    return out


def read_cpu_stat(directory):
    lines = read_lines(directory + "/cpu.stat", MAX_CGROUP_STAT_KEYS)
    if len(lines) == 0:
        return None
    return parse_cgroup_key_values(lines)


def cpu_window_ms(cgroup, stat_readable, window_ms, periods):
    if periods <= 0 or not stat_readable or cgroup is None or cgroup["quota"] is None:
        return window_ms
    binding = cgroup["quota"]
    if "ancestor_quota" in cgroup and cgroup["stat_dir"] == cgroup["ancestor_quota"]["dir"]:
        binding = cgroup["ancestor_quota"]
    period_ms = binding["period_us"] // 1000
    if period_ms < 1:
        period_ms = 1
    ms = periods * period_ms
    if ms < 100:
        ms = 100
    if ms > window_ms:
        ms = window_ms
    return ms


def children_cpu_seconds():
    usage = RT["resource"].getrusage(RT["resource"].RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def running_cpu_seconds(pids):
    # CPU time of the running workers (not reaped yet, so rusage has none of it):
    # /proc/PID/schedstat's first field, in nanoseconds.
    total = 0
    for pid in pids:
        text = read_small_file("/proc/" + str(pid) + "/schedstat")
        if text is None:
            continue
        n = parse_long(text.split(" ")[0])
        if n is not None:
            total = total + n
    return total / 1e9


def spin_until_released(flag, hard_stop_ms):
    # A worker: busy until the probe clears the flag, or past its hard stop (bounded even if
    # the probe dies).
    count = 0
    while flag[0] == 1:
        count = count + 1
        if count % 100000 == 0 and monotonic_ms() > hard_stop_ms:
            break
    exit_now(0)


def sleep_out_window(window_ms, stop, cpu_of_workers, start):
    time = RT["time"]
    at = window_ms
    if stop["above_mc"] > 0:
        at = stop["min_ms"]
        if at < CPU_CHECKPOINT_MS:
            at = CPU_CHECKPOINT_MS
        if at > window_ms:
            at = window_ms
    while True:
        left = at - (monotonic_ms() - start)
        if left > 0:
            time.sleep(left / 1000.0)
        if at >= window_ms:
            return False
        cpu_ms = cpu_of_workers() * 1000.0
        elapsed = monotonic_ms() - start
        if cpu_ms * 1000.0 > stop["above_mc"] * (elapsed + stop["edge_ms"]):
            return True
        at = at + CPU_CHECKPOINT_MS
        if at > window_ms:
            at = window_ms


RES_CPU_ARGS = {"threads": MAX_CPU_THREADS, "window-ms": MAX_CPU_WINDOW_MS, "min-periods": 100,
                "stop-above-mc": MAX_CPU_THREADS * 1000, "edge-ms": 1000,
                "min-window-ms": MAX_CPU_WINDOW_MS}


def check_res_cpu(args):
    return parse_resource_args("res.cpu", args, RES_CPU_ARGS, False)["error"]


def run_res_cpu(args):
    # N busy workers for the window; CPU time over wall time is the effective number of cores.
    # The workers are processes, not threads: CPython's threads share one interpreter lock and
    # could never use a second core.
    parsed = parse_resource_args("res.cpu", args, RES_CPU_ARGS, False)
    threads = arg_number(parsed, "threads", 2)
    result = {"family": "res.cpu", "kind": "result", "threads": threads}
    os = RT["os"]
    if os is None or RT["time"] is None or RT["mmap"] is None or RT["resource"] is None:
        emit(refusal(result, "clock", missing_module_error("time")))
        return
    result["worker"] = "process"
    result["kernel"] = kernel_context()
    try:
        result["affinity_cpus"] = len(os.sched_getaffinity(0))
    except OSError:
        pass
    try:
        online = os.sysconf("SC_NPROCESSORS_ONLN")  # the native probe's online_cpus
        if online > 0:
            result["online_cpus"] = online
    except (OSError, ValueError):
        pass
    cgroup = None
    stat_before = None
    at = resolve_cpu_cgroup(read_lines("/proc/self/mountinfo", MAX_CGROUP_LINES),
                            own_cgroup_path(False), own_cgroup_path(True))
    if at is not None:
        cgroup = describe_cpu_cgroup(at)
        stat_before = read_cpu_stat(cgroup["stat_dir"])
    window_ms = cpu_window_ms(cgroup, stat_before is not None, arg_number(parsed, "window-ms", 2000),
                              arg_number(parsed, "min-periods", 0))
    result["window_ms"] = window_ms
    flag = RT["mmap"].mmap(-1, 1)
    flag[0] = 1
    pids = []
    create_errno = ""
    cpu_before = children_cpu_seconds()
    start = monotonic_ms()
    hard_stop = start + window_ms + 2000
    i = 0
    while i < threads:
        try:
            pid = os.fork()
        except OSError as e:
            create_errno = errno_name(e.errno)
            break
        if pid == 0:
            try:
                spin_until_released(flag, hard_stop)
            finally:
                exit_now(0)
        pids.append(pid)
        i = i + 1
    stop = {"above_mc": arg_number(parsed, "stop-above-mc", 0),
            "edge_ms": arg_number(parsed, "edge-ms", 0),
            "min_ms": arg_number(parsed, "min-window-ms", 0)}
    stopped_early = sleep_out_window(window_ms, stop, lambda: running_cpu_seconds(pids), start)
    flag[0] = 0
    for pid in pids:
        os.waitpid(pid, 0)
    wall = (monotonic_ms() - start) / 1000.0
    cpu = children_cpu_seconds() - cpu_before
    flag.close()
    result["threads_started"] = len(pids)
    if stop["above_mc"] > 0:
        result["stopped_early"] = stopped_early
    if create_errno != "":
        result["create_errno"] = create_errno
    result["cpu_seconds"] = cpu
    result["wall_seconds"] = wall
    result["effective_cores"] = cpu / wall if wall > 0 else 0.0
    if cgroup is not None:
        cgroup["stat_before"] = stat_before
        cgroup["stat_after"] = read_cpu_stat(cgroup["stat_dir"])
        result["cpu_cgroup"] = cgroup
    emit(result)


def check_res_wall(args):
    return parse_resource_args("res.wall", args, {"ceiling-seconds": MAX_WALL_SECONDS}, False)["error"]


def run_res_wall(args):
    parsed = parse_resource_args("res.wall", args, {"ceiling-seconds": MAX_WALL_SECONDS}, False)
    seconds = arg_number(parsed, "ceiling-seconds", 0)
    time = RT["time"]
    if time is None:
        result = {"family": "res.wall", "kind": "result", "ceiling_seconds": seconds}
        emit(refusal(result, "clock", missing_module_error("time")))
        return
    start = monotonic_ms()
    step = 1
    while step * WALL_PROGRESS_MS <= seconds * 1000:
        wait_ms = start + step * WALL_PROGRESS_MS - monotonic_ms()
        if wait_ms > 0:
            time.sleep(wait_ms / 1000.0)
        emit({"family": "res.wall", "kind": "progress", "elapsed_ms": monotonic_ms() - start})
        step = step + 1
    emit({"family": "res.wall", "kind": "result", "ceiling_seconds": seconds,
          "elapsed_ms": monotonic_ms() - start, "stopped_by": "ceiling"})


# ---------------------------------------------------------------------------------------------
# persist.plant / persist.check (probes/persist.cc).

def is_token(token):
    if token == "" or len(token) > 64 or not token.isascii():
        return False
    return token.isalnum()


def parse_persist(family, args):
    out = {"error": "", "token": "", "background_seconds": 0, "keep": False, "dirs": []}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        if args[i] == "--keep" and family == "persist.check":
            out["keep"] = True
            i = i + 1
            continue
        if i + 1 >= len(args):
            out["error"] = family + ": " + args[i] + ": missing value"
            return out
        if args[i] == "--token":
            out["token"] = args[i + 1]
        elif args[i] == "--background-seconds" and family == "persist.plant":
            value = args[i + 1]
            n = 0 if value == "" else parse_long(value)
            if n is None or n < 0 or n > MAX_BACKGROUND_SECONDS:
                out["error"] = family + ": --background-seconds: 0.." + str(MAX_BACKGROUND_SECONDS)
                return out
            out["background_seconds"] = n
        else:
            out["error"] = family + ": unknown option " + args[i]
            return out
        i = i + 2
    if not is_token(out["token"]):
        out["error"] = family + ": --token: 1-64 characters of [A-Za-z0-9]"
        return out
    out["dirs"] = args[i:]
    for directory in out["dirs"]:
        if directory != "@home" and directory != "@cwd" and not directory.startswith("/"):
            out["error"] = family + ": not an absolute path (nor @home, @cwd): " + directory
            return out
    if len(out["dirs"]) > MAX_PATHS_PER_FAMILY:
        out["error"] = family + ": too many paths"
    return out


def resolve_dir(directory):
    os = RT["os"]
    if directory == "@home":
        home = os.environ.get("HOME")
        return home if home is not None and home.startswith("/") else ""
    if directory == "@cwd":
        try:
            return os.getcwd()
        except OSError:
            return ""
    return directory


def token_file(directory, token, fact):
    resolved = resolve_dir(directory)
    if resolved != directory:
        fact["resolved"] = resolved
    if resolved == "":
        return ""
    return ("" if resolved == "/" else resolved) + "/.sandprobe-persist-" + token


def mark_same_directory(seen, directory, resolved, fact):
    # fact["same_as"]: an earlier directory of the list that is this one (device and inode).
    if resolved == "":
        return
    try:
        st = RT["os"].stat(resolved)
    except OSError:
        return
    for earlier in seen:
        if earlier["dev"] == st.st_dev and earlier["ino"] == st.st_ino:
            fact["same_as"] = earlier["dir"]
            return
    seen.append({"dev": st.st_dev, "ino": st.st_ino, "dir": directory})


def start_background(seconds):
    # Double fork + setsid: the grandchild leaves the probe's session, holds none of its
    # pipes, carries persist.plant and the token in its argv (the probe's own) and ends by
    # itself after `seconds`. Returns its pid, or raises OSError.
    os = RT["os"]
    pipe = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            grandchild = os.fork()
            if grandchild == 0:
                null = os.open("/dev/null", os.O_RDWR)
                for fd in [0, 1, 2]:
                    os.dup2(null, fd)
                os.closerange(3, 1024)
                RT["signal"].setitimer(RT["signal"].ITIMER_REAL, 0)
                RT["time"].sleep(seconds)
                exit_now(0)
            os.write(pipe[1], str(grandchild).encode("ascii"))
        finally:
            exit_now(0)
    os.close(pipe[1])
    data = os.read(pipe[0], 32)
    os.close(pipe[0])
    os.waitpid(child, 0)
    return int(data) if len(data) > 0 else -1


def find_planted(token):
    os = RT["os"]
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    me = os.getpid()
    seen = 0
    want = token.encode("ascii")
    for name in names:
        if not name.isdigit() or not name.isascii():
            continue
        pid = int(name)
        if pid <= 0 or pid == me:
            continue
        seen = seen + 1
        if seen > MAX_PIDS:
            break
        try:
            fd = os.open("/proc/" + name + "/cmdline", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            data = os.read(fd, MAX_CMDLINE_BYTES)
        except OSError:
            data = b""
        os.close(fd)
        if len(data) == 0:
            continue
        parts = data.split(b"\x00")
        if b"persist.plant" in parts and want in parts:
            found.append(pid)
    return found


def check_persist_plant(args):
    return parse_persist("persist.plant", args)["error"]


def check_persist_check(args):
    return parse_persist("persist.check", args)["error"]


def run_persist_plant(args):
    parsed = parse_persist("persist.plant", args)
    os = RT["os"]
    if os is None:
        for directory in parsed["dirs"]:
            emit(refusal({"family": "persist.plant", "path": directory}, "open",
                         missing_module_error("os")))
        if parsed["background_seconds"] > 0:
            emit(refusal({"family": "persist.plant", "path": "background-process"}, "fork",
                         missing_module_error("os")))
        return
    seen = []
    token = parsed["token"]
    for directory in parsed["dirs"]:
        fact = {"family": "persist.plant", "path": directory}
        file = token_file(directory, token, fact)
        mark_same_directory(seen, directory, resolve_dir(directory), fact)
        ok = False
        if file == "":
            fact["errno"] = "ENOENT"  # an unresolvable @home/@cwd
        else:
            try:
                fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW |
                             os.O_CLOEXEC, 0o644)
                try:
                    ok = os.write(fd, token.encode("ascii")) == len(token)
                except OSError as e:
                    fact["errno"] = errno_name(e.errno)
                os.close(fd)
                if not ok and "errno" not in fact:
                    fact["errno"] = "ENOSPC"
            except OSError as e:
                fact["errno"] = errno_name(e.errno)
        fact["ok"] = ok
        emit(fact)
    if parsed["background_seconds"] > 0:
        fact = {"family": "persist.plant", "path": "background-process"}
        try:
            pid = start_background(parsed["background_seconds"])
            fact["ok"] = pid > 0
            if pid > 0:
                fact["pid"] = pid
            else:
                fact["errno"] = "ECHILD"
        except OSError as e:
            fact["ok"] = False
            fact["errno"] = errno_name(e.errno)
        emit(fact)


def run_persist_check(args):
    parsed = parse_persist("persist.check", args)
    os = RT["os"]
    if os is None:
        for directory in parsed["dirs"]:
            fact = {"family": "persist.check", "path": directory, "present": False}
            emit(refusal(fact, "open", missing_module_error("os")))
        fact = {"family": "persist.check", "path": "background-process", "present": False,
                "pids": []}
        emit(refusal(fact, "proc", missing_module_error("os")))
        return
    seen = []
    token = parsed["token"]
    for directory in parsed["dirs"]:
        fact = {"family": "persist.check", "path": directory}
        file = token_file(directory, token, fact)
        mark_same_directory(seen, directory, resolve_dir(directory), fact)
        if file == "":
            fact["present"] = False
            fact["errno"] = "ENOENT"
            emit(fact)
            continue
        try:
            fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            fact["present"] = False
            fact["errno"] = errno_name(e.errno)
            emit(fact)
            continue
        try:
            data = os.read(fd, 80)
        except OSError:
            data = b""
        os.close(fd)
        fact["present"] = len(data) > 0 and data == token.encode("ascii")
        if not parsed["keep"]:
            try:
                os.unlink(file)
                fact["removed"] = True
            except OSError:
                fact["removed"] = False
        emit(fact)
    alive = find_planted(token)
    fact = {"family": "persist.check", "path": "background-process",
            "present": len(alive) > 0, "pids": alive}
    if not parsed["keep"]:
        for pid in alive:
            try:
                os.kill(pid, RT["signal"].SIGKILL)  # ours: it carries this run's token
            except OSError:
                pass
    emit(fact)


# ---------------------------------------------------------------------------------------------
# lang.escape --canary PATH: the known ways out of a Python-level sandbox, each read-only.
# A variant proves an escape only by reading the canary file the harness planted and
# reporting its sha256, which the host compares with its own hash of the canary; the probe's
# "ok" is its own view. Routes are the ways a variant reaches an attribute by name (restricted
# code cannot spell `x.__globals__` or `g.gi_frame`; RestrictedPython rejects such a program
# at compile time, so a probe that must compile names them only as strings).

def make_escape_fact(variant, canary):
    fact = {"family": "lang.escape", "variant": variant, "ok": False, "attempts": []}
    set_bytes_field(fact, "path", canary)
    return fact


def record_read(fact, data):
    fact["ok"] = True
    fact["bytes"] = len(data[0:MAX_READ_BYTES])
    fact["truncated"] = len(data) > MAX_READ_BYTES
    fact["sha256"] = sha256hex(data[0:MAX_READ_BYTES])
    fact["sha256_impl"] = sha256_impl()


def read_with_open(open_fn, canary):
    handle = open_fn(canary, "rb")
    try:
        data = handle.read(MAX_READ_BYTES + 1)
    finally:
        handle.close()
    return data


def read_with_os(os_module, canary):
    fd = os_module.open(canary, os_module.O_RDONLY | os_module.O_NONBLOCK)
    try:
        data = os_module.read(fd, MAX_READ_BYTES + 1)
    finally:
        os_module.close(fd)
    return data


def open_from_builtins(table):
    # A module's "__builtins__" is the builtins module or its dict.
    if is_mapping(table):
        fn = table.get("open")
    else:
        fn = table.open
    if fn is None:
        raise LookupError("no open in these builtins")
    return fn


def by_getattr(obj, name):
    value = getattr(obj, name)
    if value is None:
        # RestrictedPython's safer_getattr answers None for what it does not find.
        raise AttributeError(name + " is None or missing")
    return value


def sneaky_name(name):
    # A str whose startswith() always says no: RestrictedPython < 7.2's safer_getattr checked
    # name.startswith("_") on the name it was given, and then used it.
    class SneakyName(str):
        def startswith(self, *ignored):
            return False
    return SneakyName(name)


def by_getattr_str_subclass(obj, name):
    return by_getattr(obj, sneaky_name(name))


def by_string_formatter(obj, name):
    # string.Formatter().get_field walks attributes with the real getattr and returns the
    # object itself (CVE-2023-41039).
    module = RT["string"]
    if module is None:
        raise NameError("name 'string' is not defined")
    formatter = module.Formatter()
    return formatter.get_field("0." + name, [obj], {})[0]


def by_attribute_error_obj(obj, name):
    # AttributeError.obj is the object the lookup failed on: the real string module behind a
    # wrapper (CVE-2024-47532), whose Formatter then walks attributes.
    module = RT["string"]
    if module is None:
        raise NameError("name 'string' is not defined")
    real = None
    try:
        module.sandprobe_no_such_attribute
    except AttributeError as e:
        real = e.obj
    if real is None:
        raise LookupError("no AttributeError.obj to use")
    return real.Formatter().get_field("0." + name, [obj], {})[0]


ESCAPE_ROUTES = [["getattr", by_getattr], ["getattr_str_subclass", by_getattr_str_subclass],
                 ["string_formatter", by_string_formatter],
                 ["attribute_error_obj", by_attribute_error_obj]]


def python_functions():
    # Functions written in Python that the sandbox hands out (their __globals__ are a real
    # module's): random's, and utility_builtins' same_type/test/reorder under RestrictedPython.
    found = []
    random = RT["random"]
    if random is not None:
        try:
            found.append(random.shuffle)
        except Exception:
            pass
    try:
        found.append(same_type)
    except NameError:
        pass
    try:
        found.append(reorder)
    except NameError:
        pass
    try:
        found.append(getattr)
    except NameError:
        pass
    return found


def walk_frames(frame, get):
    # Up the frame chain to a frame whose builtins hold open (the sandbox's own frames hold
    # the restricted builtins, the integrator's frames the real ones).
    hops = 0
    while frame is not None and hops < MAX_ESCAPE_FRAMES:
        try:
            found_builtins = get(frame, "f_builtins")
            return open_from_builtins(found_builtins)
        except (LookupError, AttributeError):
            pass
        try:
            frame = get(frame, "f_back")
        except AttributeError:
            frame = None
        hops = hops + 1
    raise LookupError("no frame with a real open in " + str(hops) + " frames")


def escape_generator_frame(get):
    # A running generator's gi_frame, then f_back to the integrator's frames (CVE-2023-37271).
    box = {}

    def inside():
        return walk_frames(get(box["gen"], "gi_frame"), get)
    box["gen"] = (inside() for ignored in [0])
    for found in box["gen"]:
        return {"open": found}
    raise LookupError("the generator gave nothing")


def escape_traceback_frame(get):
    # A caught exception's __traceback__.tb_frame, then f_back.
    tb = None
    try:
        raise ValueError("sandprobe")
    except ValueError as e:
        tb = get(e, "__traceback__")
    return {"open": walk_frames(get(tb, "tb_frame"), get)}


def escape_function_globals(get):
    errors = []
    for fn in python_functions():
        try:
            return {"open": open_from_builtins(get(fn, "__globals__")["__builtins__"])}
        except Exception as e:
            errors.append(describe_error(e))
    raise LookupError("no function gave its globals: " + "; ".join(errors[0:3]))


def escape_subclasses(get):
    # ().__class__.__base__.__subclasses__(): every class, one of whose methods was written
    # in Python in a module whose globals hold the real builtins (os._wrap_close and the like).
    base = get(get((), "__class__"), "__base__")
    classes = get(base, "__subclasses__")()
    checked = 0
    for cls in classes:
        if checked >= MAX_ESCAPE_SUBCLASSES:
            break
        checked = checked + 1
        try:
            scope = get(get(cls, "__init__"), "__globals__")
            return {"open": open_from_builtins(scope["__builtins__"])}
        except Exception:
            continue
    raise LookupError("none of " + str(checked) + " classes gave real builtins")


def escape_module_private(get):
    # A module the sandbox hands out (random) keeps os under a private name (random._os).
    random = RT["random"]
    if random is None:
        raise NameError("name 'random' is not defined")
    return {"os": get(random, "_os")}


def escape_import(get):
    import os
    return {"os": os}


def escape_builtin_open(get):
    return {"open": open}


ESCAPE_VARIANTS = [
    ["import_statement", escape_import, False],
    ["builtin_open", escape_builtin_open, False],
    ["generator_frame", escape_generator_frame, True],
    ["traceback_frame", escape_traceback_frame, True],
    ["function_globals", escape_function_globals, True],
    ["subclasses", escape_subclasses, True],
    ["module_private", escape_module_private, True],
]

FORMAT_TEMPLATE = "{0.__globals__[__builtins__][open]}"


def format_variants():
    # str.format and friends walk attributes too, but give back only text: they disclose what
    # is reachable ("<built-in function open>") and never read a file, so they never prove.
    def with_method(fn):
        return FORMAT_TEMPLATE.format(fn)

    def with_unbound(fn):
        return str.format(FORMAT_TEMPLATE, fn)

    def with_format_map(fn):
        return "{f.__globals__[__builtins__][open]}".format_map({"f": fn})
    return [["format_method", with_method], ["format_unbound", with_unbound],
            ["format_map", with_format_map]]


def try_escape(variant, canary):
    fact = make_escape_fact(variant[0], canary)
    routes = ESCAPE_ROUTES if variant[2] else [["direct", by_getattr]]
    errors = []
    for route in routes:
        attempt = {"route": route[0], "ok": False}
        fact["attempts"].append(attempt)
        try:
            reached = variant[1](route[1])
        except Exception as e:
            attempt["error"] = describe_error(e)
            errors.append(route[0] + ": " + attempt["error"])
            continue
        kind = "open" if "open" in reached else "os"
        attempt["reached"] = kind
        fact["reached"] = kind
        try:
            if kind == "open":
                data = read_with_open(reached["open"], canary)
            else:
                data = read_with_os(reached["os"], canary)
        except OSError as e:
            # Out of the language sandbox, stopped by the OS: a fact worth having apart.
            attempt["error"] = describe_error(e)
            attempt["errno"] = errno_name(e.errno)
            fact["errno"] = attempt["errno"]
            errors.append(route[0] + ": " + attempt["error"])
            continue
        except Exception as e:
            attempt["error"] = describe_error(e)
            errors.append(route[0] + ": " + attempt["error"])
            continue
        attempt["ok"] = True
        attempt["sha256"] = sha256hex(data[0:MAX_READ_BYTES])
        if not fact["ok"]:
            record_read(fact, data)
            fact["route"] = route[0]
    if not fact["ok"]:
        fact["error"] = "; ".join(errors)
    return fact


def try_format_escape(variant, canary):
    # One Python function is enough: the format method itself is what a sandbox blocks.
    fact = make_escape_fact(variant[0], canary)
    fact["disclosed"] = False
    functions = python_functions()
    if len(functions) == 0:
        fact["error"] = "no Python function to format"
        return fact
    attempt = {"route": "format", "ok": False}
    fact["attempts"].append(attempt)
    try:
        text = variant[1](functions[0])
    except Exception as e:
        attempt["error"] = describe_error(e)
        fact["error"] = attempt["error"]
        return fact
    attempt["disclosed"] = True
    fact["disclosed"] = True
    fact["reached"] = text[0:80]
    fact["error"] = "format strings only disclose text: nothing to read the canary with"
    return fact


def check_lang_escape(args):
    if len(args) != 2 or args[0] != "--canary" or args[1] == "":
        return "lang.escape: usage: lang.escape --canary PATH"
    return ""


def run_lang_escape(args):
    canary = args[1]
    for variant in ESCAPE_VARIANTS:
        emit(try_escape(variant, canary))
    for variant in format_variants():
        emit(try_format_escape(variant, canary))


# ---------------------------------------------------------------------------------------------
# The family table and the invocation (probe_main.cc).

FAMILY_TABLE = [
    ["fs.read", "PATH...", check_fs_read, run_fs_read],
    ["fs.write", "DIR...", check_fs_write, run_fs_write],
    ["fs.alias", "--scratch DIR PATH...", check_fs_alias, run_fs_alias],
    ["env.secret", "PREFIX", check_env_secret, run_env_secret],
    ["net.tcp", "NAME=ADDR:PORT...", check_net_tcp, run_net_tcp],
    ["net.udp", "NAME=ADDR:PORT...", check_net_udp, run_net_udp],
    ["net.dns", "NAME=ADDR:PORT...", check_net_dns, run_net_dns],
    ["res.memory", "--ceiling-mib N [--every-mib K]", check_res_memory, run_res_memory],
    ["res.cpu", "[--threads N] [--window-ms MS] [--min-periods K]", check_res_cpu, run_res_cpu],
    ["res.wall", "--ceiling-seconds N", check_res_wall, run_res_wall],
    ["persist.plant", "--token T [--background-seconds N] DIR...", check_persist_plant,
     run_persist_plant],
    ["persist.check", "--token T [--keep] DIR...", check_persist_check, run_persist_check],
    ["lang.escape", "--canary PATH", check_lang_escape, run_lang_escape],
]


def family_names():
    names = []
    for row in FAMILY_TABLE:
        names.append(row[0])
    return names


def find_family(name):
    for row in FAMILY_TABLE:
        if row[0] == name:
            return row
    return None


def is_usable_nonce(nonce):
    if nonce == "" or len(nonce) > MAX_NONCE_LENGTH or not nonce.isascii():
        return False
    return nonce.replace("_", "").replace("-", "").isalnum() or nonce.strip("_-") == ""


def parse_invocation(argv):
    inv = {"error": "", "nonce": "", "deadline_ms": DEFAULT_DEADLINE_MS, "control": "", "steps": []}
    i = 0
    have_nonce = False
    while i < len(argv):
        arg = argv[i]
        if arg != "--nonce" and arg != "--deadline-ms" and arg != "--control":
            break
        if i + 1 >= len(argv):
            inv["error"] = arg + ": missing value"
            return inv
        value = argv[i + 1]
        i = i + 2
        if arg == "--control":
            if value == "":
                inv["error"] = "--control: empty path"
                return inv
            inv["control"] = value
        elif arg == "--nonce":
            if not is_usable_nonce(value):
                inv["error"] = "--nonce: must be 1-128 characters of [A-Za-z0-9_-]"
                return inv
            inv["nonce"] = value
            have_nonce = True
        else:
            n = parse_long(value)
            if n is None or n <= 0 or n > MAX_DEADLINE_MS:
                inv["error"] = ("--deadline-ms: not a positive number of milliseconds "
                                "(at most 24 h): " + value)
                return inv
            inv["deadline_ms"] = n
    if not have_nonce:
        inv["error"] = "--nonce is required"
        return inv
    if i >= len(argv):
        inv["error"] = "no family given"
        return inv
    while i < len(argv):
        name = argv[i]
        i = i + 1
        row = find_family(name)
        if row is None:
            inv["error"] = "unknown family: " + name
            return inv
        args = []
        while i < len(argv) and argv[i] != "--next":
            args.append(argv[i])
            i = i + 1
        error = row[2](args)
        if error != "":
            inv["error"] = error
            return inv
        inv["steps"].append([row, args])
        if i < len(argv):  # at "--next"
            i = i + 1
            if i >= len(argv):
                inv["error"] = "--next: no family follows"
                return inv
    return inv


def usage_text(error):
    lines = ["sandprobe-probe: " + error,
             "usage: sandprobe_probe.py --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... "
             "[--next FAMILY ARGS...]...",
             "families:"]
    for row in FAMILY_TABLE:
        lines.append("  " + row[0] + " " + row[1])
    return "\n".join(lines) + "\n"


def hello_fact():
    fact = {"family": "hello", "runtime": "python", "runtime_version": runtime_version(),
            "build_id": BUILD_ID, "families": family_names(),
            "imports": RT["os"] is not None, "deadline_armed": RT["deadline_armed"],
            "sha256_impl": sha256_impl()}
    os = RT["os"]
    if os is None:
        for key in ["pid", "uid", "euid", "gid", "cwd"]:
            fact[key] = None
        fact["cwd_errno"] = "EPERM"
        fact["denied_by"] = DENIED_BY_RUNTIME
        fact["error"] = missing_module_error("os")
        return fact
    fact["pid"] = os.getpid()
    fact["uid"] = os.getuid()
    fact["euid"] = os.geteuid()
    fact["gid"] = os.getgid()
    try:
        set_bytes_field(fact, "cwd", os.getcwd())
    except OSError as e:
        fact["cwd"] = None  # e.g. a cwd outside the sandbox's root: a fact worth having
        fact["cwd_errno"] = errno_name(e.errno)
    return fact


# The answer to the launch's fresh control (contract/launch_control.h): SHA-256(nonce || the
# file's content, read as fs.read reads it), or why it could not be read.
def answer_control(inv, fact):
    if inv["control"] == "":
        return
    c = read_path_content(inv["control"])
    if c["ok"] and c["kind"] != "dir":
        fact["control_sha256"] = sha256hex(raw_bytes(inv["nonce"]) + c["data"])
    elif c["ok"]:
        fact["control_step"] = "open"
        fact["control_errno"] = "EISDIR"
    else:
        fact["control_step"] = c["step"]
        fact["control_errno"] = c["errno"]


def main():
    load_runtime()
    argv = program_arguments()
    if argv is None:
        write_stderr("sandprobe-probe: no arguments: neither sys.argv nor sandprobe_argv\n")
        return EXIT_USAGE
    if len(argv) == 1 and argv[0] == "--families":
        for name in family_names():
            if RT["sys"] is not None:
                RT["sys"].stdout.write(name + "\n")
            else:
                print(name)
        return EXIT_PASS
    inv = parse_invocation(argv)
    if inv["error"] != "":
        write_stderr(usage_text(inv["error"]))
        return EXIT_USAGE
    RT["nonce"] = inv["nonce"]
    RT["deadline_armed"] = arm_deadline(inv["deadline_ms"])
    hello = hello_fact()
    answer_control(inv, hello)
    emit(hello)
    for step in inv["steps"]:
        step[0][3](step[1])
    emit({"done": True})
    return EXIT_PASS


EXIT_CODE = main()
if EXIT_CODE != 0:
    raise SystemExit(EXIT_CODE)
