// sandprobe-probe.js: the probe for sandboxes that are JavaScript runtimes (Deno's permission
// flags, Node's --experimental-permission), which cannot start the static native probe.
//
//   deno run [FLAGS] sandprobe-probe.js --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... [--next FAMILY ARGS...]...
//   node [FLAGS] sandprobe-probe.js ... (the same)
//   ... sandprobe-probe.js --families
//
// One ES module, run unmodified by both runtimes. It speaks the native probe's contract
// (probes/probe_main.cc): the same argv grammar and usage errors (exit 2, no frame), one frame
// per fact `@@sandprobe <NONCE> <json>\n` written with one write(2) each, a hello fact first, a
// final {"done":true}, exit 124 at the deadline with no done frame. For every family both
// implement, the facts have the native keys and values (probes/js/README.md lists the few
// differences and the JS-only keys). Facts only: the host judges.
//
// What differs by runtime sits in one adapter table (RUNTIMES, below): each row builds the same
// small set of operations (open, stat, read a directory, connect, spawn, dlopen, ...) from that
// runtime's own API, so the families never ask which runtime they run on. UDP (net.udp,
// net.dns) uses node:dgram on both: Deno's own UDP API exists only behind --unstable-net.
//
// A refusal by the runtime's permission layer (Deno's NotCapable, Node's ERR_ACCESS_DENIED and
// ERR_DLOPEN_DISABLED) is reported as errno "EACCES" plus "denied_by": "runtime-permission" and
// "runtime_error" (the runtime's own name for it), so a judge can tell the sandbox's refusal
// from the kernel's.
//
// Safety, as the native probe: every loop stops at a ceiling, network traffic goes only to the
// numeric addresses given in the arguments (the one name lookup, net.lab's, only when
// /etc/resolv.conf names lab resolvers only, and only to lab addresses), and
// files the probe creates are created exclusively (or never through a symlink) and removed.

import dgram from "node:dgram";
import dns from "node:dns";
import process from "node:process";

// Stamped by the build (probes/js/CMakeLists.txt, configure_file @ONLY); an unstamped copy
// reports the placeholder itself, which says so.
const BUILD_ID = "@SANDPROBE_PROBE_BUILD_ID@";

// ---------------------------------------------------------------------------------------------
// Bounds, as the native probe has them (probes/*.h).

const kDefaultDeadlineMs = 30_000;
const kMaxDeadlineMs = 24 * 3600 * 1000;
const kMaxNonceLength = 128;
const kMaxPathsPerFamily = 4096;
const kMaxReadBytes = 4096;
const kMaxDirEntries = 1024;
const kNetWaitMs = 2000;
const kMaxNetEndpoints = 64;
const kMaxPids = 4096;
const kMaxEnvironBytes = 64 * 1024;
const kMaxCmdlineBytes = 64 * 1024;
const kMaxMountinfoBytes = 1 << 20;
const kMaxMounts = 512;
const kMaxMountRoots = 256;
const kMaxHitsListed = 16;
const kMaxMountRootTries = 200_000;
const kMaxMemoryCeilingMib = 4096;
const kMaxCpuThreads = 64;
const kMaxCpuWindowMs = 10_000;
const kCpuCheckpointMs = 100;
const kMaxWallSeconds = 20;
const kWallProgressMs = 250;
const kMaxBackgroundSeconds = 600;
const kMaxRuntimeArgs = 64;
const kSubprocessWaitMs = 2000;
const kWorkerStartMs = 5000;
const kMib = 1 << 20;
const kPageBytes = 4096;

// ---------------------------------------------------------------------------------------------
// Errors as facts.

// An error the probe itself decides on (a FIFO it will not open, a symlink it will not write
// through): carries the errno the equivalent native call would give.
class ProbeError extends Error {
  constructor(errno, note) {
    super(note);
    this.code = errno;
  }
}

// Deno's error classes for OS errors without a `code` (most carry one: "ENOENT").
const kDenoErrorErrno = {
  NotFound: "ENOENT", PermissionDenied: "EACCES", ConnectionRefused: "ECONNREFUSED",
  ConnectionReset: "ECONNRESET", ConnectionAborted: "ECONNABORTED", NotConnected: "ENOTCONN",
  AddrInUse: "EADDRINUSE", AddrNotAvailable: "EADDRNOTAVAIL", BrokenPipe: "EPIPE",
  AlreadyExists: "EEXIST", TimedOut: "ETIMEDOUT", Interrupted: "EINTR", WouldBlock: "EAGAIN",
  IsADirectory: "EISDIR", NotADirectory: "ENOTDIR", FilesystemLoop: "ELOOP",
  NetworkUnreachable: "ENETUNREACH", NotSupported: "EOPNOTSUPP",
};

// Errors some APIs report only as text (dlopen's dlerror(), Node's ERR_DLOPEN_FAILED).
const kMessageErrno = [
  ["No such file or directory", "ENOENT"], ["Permission denied", "EACCES"],
  ["file too short", "ENOEXEC"], ["invalid ELF header", "ENOEXEC"], ["Is a directory", "EISDIR"],
  ["Not a directory", "ENOTDIR"], ["wrong ELF class", "ENOEXEC"],
];

// The runtime's own permission layer refused: Deno's class name or Node's error code.
const kRuntimeRefusals = new Set(["NotCapable", "ERR_ACCESS_DENIED", "ERR_DLOPEN_DISABLED"]);

// A refusal the runtime reports under another name (RT.lookupRefusal): carries that name.
class RuntimeRefusal extends Error {
  constructor(runtimeError, message) {
    super(message);
    this.refusal = runtimeError;
  }
}

function runtimeRefusal(error) {
  if (error instanceof RuntimeRefusal) return error.refusal;
  if (kRuntimeRefusals.has(error?.name)) return error.name;
  if (kRuntimeRefusals.has(error?.code)) return error.code;
  return "";
}

// {errno, denied_by?, runtime_error?, note?, error?}: the native errno name where there is
// one; "EUNKNOWN" with the message otherwise (never a guess).
function classifyError(error) {
  const refusal = runtimeRefusal(error);
  if (refusal) return { errno: "EACCES", denied_by: "runtime-permission", runtime_error: refusal };
  if (error instanceof ProbeError) return error.message ? { errno: error.code, note: error.message } : { errno: error.code };
  const code = typeof error?.code === "string" ? error.code : "";
  if (/^E[A-Z0-9]+$/.test(code)) return { errno: code === "EWOULDBLOCK" ? "EAGAIN" : code };
  if (kDenoErrorErrno[error?.name]) return { errno: kDenoErrorErrno[error.name] };
  const message = String(error?.message ?? error);
  for (const [text, errno] of kMessageErrno) {
    if (message.includes(text)) return { errno };
  }
  return { errno: "EUNKNOWN", error: `${error?.name ?? "Error"}: ${message}`.slice(0, 200) };
}

// fact[prefix + "errno"] and its companions.
function addError(fact, error, prefix = "") {
  for (const [key, value] of Object.entries(classifyError(error))) fact[prefix + key] = value;
}

function fail(fact, step, error) {
  fact.ok = false;
  fact.step = step;
  addError(fact, error);
  return fact;
}

// ---------------------------------------------------------------------------------------------
// Bytes, hashes, JSON.

const utf8 = new TextEncoder();
const utf8Lossy = new TextDecoder("utf-8", { fatal: false });
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

function toBytes(value) {
  return typeof value === "string" ? utf8.encode(value) : value;
}

function hexEncode(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(bytes) {
  return hexEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

function concatBytes(chunks, total) {
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk.subarray(0, total - at), at);
    at += Math.min(chunk.length, total - at);
  }
  return out;
}

// Byte order, as std::string compares (the native probe sorts names with std::sort).
function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ++i) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

// fact[key] = the text; for bytes that are not UTF-8 also fact[key + "_hex"] (frame.h).
function setBytesField(fact, key, value) {
  if (typeof value === "string") {
    fact[key] = value;
    return;
  }
  try {
    fact[key] = utf8Strict.decode(value);
  } catch {
    fact[key] = utf8Lossy.decode(value);
    fact[key + "_hex"] = hexEncode(value);
  }
}

// A lone surrogate (a JS string can hold one) would be a \ud800 escape the host's JSON parser
// rejects; it becomes U+FFFD, as the native probe replaces invalid UTF-8.
function wellFormed(text) {
  return typeof text.toWellFormed === "function"
    ? text.toWellFormed()
    : text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

// JSON as nlohmann::json dumps it: keys sorted, no spaces; BigInt as its digits (inode
// numbers need all 64 bits); a non-finite number is null.
function toJson(value) {
  switch (typeof value) {
    case "string": return JSON.stringify(wellFormed(value));
    case "bigint": return value.toString();
    case "number": return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean": return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
      const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
      return `{${keys.map((k) => `${JSON.stringify(wellFormed(k))}:${toJson(value[k])}`).join(",")}}`;
    }
    default: return "null";
  }
}

// ---------------------------------------------------------------------------------------------
// The runtime adapters: the same operations from each runtime's own API.
//
// Every row builds an object with:
//   name, version ("deno 2.1.4"), args (the probe's argv after its path), scriptPath
//   pid, ids() -> {uid, euid, gid}, cwd(), envEntries() -> [[name, value]]
//   writeOut(bytes) / writeErr(text): one write(2) to fd 1 / 2, returns bytes written
//   exit(code)
//   openRead(path)              -> File: open(O_RDONLY|O_NONBLOCK|O_NOCTTY)
//   openReadNoFollow(path)      -> File: the same with O_NOFOLLOW
//   createExclusive(path, mode) -> File: O_CREAT|O_EXCL|O_WRONLY|O_NOFOLLOW
//   createTruncNoFollow(path)   -> File: O_CREAT|O_TRUNC|O_WRONLY|O_NOFOLLOW, 0644
//     File: stat() -> Stat, read(Uint8Array) -> bytes read (0 at the end), write(bytes), close()
//     Stat: {kind: "file"|"dir"|"fifo"|"socket"|"other", dev: BigInt, ino: BigInt|null,
//            mode, uid, gid: numbers (null where the runtime does not say)}
//   stat(path), lstat(path) -> Stat; readDirNames(path, limit) -> [Uint8Array] (at most limit)
//   readDirTyped(path, limit) -> [{name: Uint8Array, kind: "file"|"dir"|"symlink"|"socket"|"other"}]
//   unlink(path), symlink(target, link), realpath(path)
//   tcpConnect(host, port), unixConnect(path) -> Conn: write(bytes), read(max, timeoutMs) ->
//     bytes|null (null: nothing within the wait; an empty array: the peer closed), close()
//   spawn(program, args, {detached, argv0}) -> Child: pid, wait() -> {code, signal}, kill(), unref()
//   kill(pid, signal), dlopen(path) -> {addon?}; apis: the API names facts report
//   rerunSelf(argv tail) -> {program, args}: this file again, under the same runtime
//   startWorker(source, shared) -> {stop()}; workerSource(body): a worker that runs body with
//     `shared` (a SharedArrayBuffer) in scope
//   cpuSeconds(): the process's user + system CPU time
//   uname() -> {release, and sysname, version, machine where the runtime has them from uname(2)};
//   uptimeSeconds(): seconds since the kernel booted (both may throw the runtime's refusal)

// This file's own path: the persistence family runs it again.
const scriptPath = import.meta.filename ?? decodeURIComponent(new URL(import.meta.url).pathname);

async function makeDenoRuntime() {
  const D = globalThis.Deno;
  const toStat = (info) => ({
    kind: info.isFile ? "file" : info.isDirectory ? "dir" : info.isFifo ? "fifo" : info.isSocket ? "socket" : "other",
    // The native probe's names (contract FileKindName), devices included.
    nativeKind: info.isFile ? "file" : info.isDirectory ? "dir" : info.isFifo ? "pipe" : info.isSocket ? "socket"
      : info.isCharDevice ? "char" : info.isBlockDevice ? "block" : info.isSymlink ? "symlink" : "other",
    dev: BigInt(info.dev ?? 0),
    ino: info.ino == null ? null : BigInt(info.ino),
    mode: info.mode ?? null,
    uid: info.uid ?? null,
    gid: info.gid ?? null,
  });
  const wrapFile = (file) => ({
    stat: async () => toStat(await file.stat()),
    read: async (buffer) => (await file.read(buffer)) ?? 0,
    write: (bytes) => file.write(bytes),
    close: async () => file.close(),
  });
  const wrapConn = (conn) => ({
    write: async (bytes) => {
      let done = 0;
      while (done < bytes.length) done += await conn.write(bytes.subarray(done));
      return done;
    },
    read: async (max, timeoutMs) => {
      const buffer = new Uint8Array(max);
      const n = await withTimeout(conn.read(buffer), timeoutMs);
      if (n === kTimedOut) return null;
      return n === null ? new Uint8Array(0) : buffer.subarray(0, n);
    },
    close: () => {
      try { conn.close(); } catch { /* already closed */ }
    },
    remoteAddress: () => conn.remoteAddr?.hostname ?? "",
  });
  // Deno.open has no O_NONBLOCK: a FIFO would block the open until a writer comes, so the
  // probe does not open one (errno EAGAIN, "fifo"; the native probe reads it empty).
  const refuseFifo = async (path) => {
    let info = null;
    try {
      info = await D.stat(path);
    } catch {
      return;  // the open reports it
    }
    if (info.isFifo) throw new ProbeError("EAGAIN", "a FIFO: Deno cannot open it without blocking");
  };
  // Deno.open has no O_NOFOLLOW: lstat first (a symlink gives ELOOP, as O_NOFOLLOW would).
  const refuseSymlink = async (path) => {
    let info = null;
    try {
      info = await D.lstat(path);
    } catch {
      return;
    }
    if (info.isSymlink) throw new ProbeError("ELOOP", "a symlink: not followed");
  };
  return {
    name: "deno",
    version: `deno ${D.version.deno}`,
    args: [...D.args],
    scriptPath,
    pid: () => D.pid,
    ids: () => ({ uid: D.uid(), euid: process.geteuid(), gid: D.gid() }),
    cwd: () => D.cwd(),
    envEntries: () => Object.entries(D.env.toObject()),
    writeOut: (bytes) => D.stdout.writeSync(bytes),
    writeErr: (text) => D.stderr.writeSync(utf8.encode(text)),
    exit: (code) => D.exit(code),
    openRead: async (path) => {
      await refuseFifo(path);
      return wrapFile(await D.open(path, { read: true }));
    },
    openReadNoFollow: async (path) => {
      await refuseSymlink(path);
      await refuseFifo(path);
      return wrapFile(await D.open(path, { read: true }));
    },
    createExclusive: async (path, mode) =>
      wrapFile(await D.open(path, { write: true, createNew: true, mode })),
    createTruncNoFollow: async (path) => {
      await refuseSymlink(path);
      return wrapFile(await D.open(path, { write: true, create: true, truncate: true, mode: 0o644 }));
    },
    stat: async (path) => toStat(await D.stat(path)),
    lstat: async (path) => toStat(await D.lstat(path)),
    readDirNames: async (path, limit) => {
      const names = [];
      for await (const entry of D.readDir(path)) {
        names.push(utf8.encode(entry.name));
        if (names.length >= limit) break;
      }
      return names;
    },
    // Deno's entries say file, directory or symlink, never socket: the rest is "other" (lstat
    // tells what it is).
    readDirTyped: async (path, limit) => {
      const entries = [];
      for await (const entry of D.readDir(path)) {
        const kind = entry.isSymlink ? "symlink" : entry.isDirectory ? "dir" : entry.isFile ? "file" : "other";
        entries.push({ name: utf8.encode(entry.name), kind });
        if (entries.length >= limit) break;
      }
      return entries;
    },
    unlink: (path) => D.remove(path),
    symlink: (target, link) => D.symlink(target, link),
    realpath: (path) => D.realPath(path),
    tcpConnect: async (host, port) => wrapConn(await D.connect({ hostname: host, port, transport: "tcp" })),
    unixConnect: async (path) => wrapConn(await D.connect({ path, transport: "unix" })),
    // Deno's --allow-net judges the name a program connects to, so net.lab connects by name and
    // Deno resolves it again (getaddrinfo, the system resolver); the address it reached is
    // checked before anything is sent (labSend).
    labConnect: async (name, _address, port) => wrapConn(await D.connect({ hostname: name, port, transport: "tcp" })),
    labConnectsBy: "name",
    // Deno's node:dns lookup reports a name --allow-net does not grant as getaddrinfo "EPERM"
    // (getaddrinfo itself never says EPERM): its permission check, before any query.
    lookupRefusal: (error) => (error?.code === "EPERM" && /^getaddrinfo EPERM/.test(error?.message ?? "")
      ? "node:dns EPERM" : ""),
    spawn: (program, args, { detached = false } = {}) => {
      const child = new D.Command(program, {
        args, detached, stdin: "null", stdout: "null", stderr: "null",
      }).spawn();
      return {
        pid: child.pid,
        wait: async () => {
          const status = await child.status;
          return { code: status.signal ? null : status.code, signal: status.signal };
        },
        kill: () => { try { child.kill("SIGKILL"); } catch { /* gone */ } },
        unref: () => child.unref(),
      };
    },
    kill: (pid, signal) => D.kill(pid, signal),
    rerunSelf: (tail) => ({ program: D.execPath(), args: ["run", "--no-prompt", scriptPath, ...tail] }),
    apis: { spawn: "Deno.Command", dlopen: "Deno.dlopen" },
    dlopen: (path) => {
      D.dlopen(path, {}).close();  // no symbols: loads the library, calls nothing of it
      return {};
    },
    startWorker: (source, shared) => {
      const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      const worker = new Worker(url, { type: "module" });
      worker.postMessage(shared);
      return { stop: () => worker.terminate() };
    },
    workerSource: (body) => `self.onmessage = (m) => { const shared = m.data; ${body} };`,
    // Only the release comes from uname(2) (Deno.osRelease, --allow-sys=osRelease): Deno.build's
    // os and arch are the binary's, and node:os version() is the release again in Deno 2.9.
    uname: () => ({ release: D.osRelease() }),
    // sysinfo(2)'s uptime in whole seconds (--allow-sys=osUptime).
    uptimeSeconds: () => D.osUptime(),
    cpuSeconds: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
  };
}

async function makeNodeRuntime() {
  const fs = await import("node:fs");
  const fsp = await import("node:fs/promises");
  const net = await import("node:net");
  const childProcess = await import("node:child_process");
  const workerThreads = await import("node:worker_threads");
  const os = await import("node:os");
  const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } =
    fs.constants;
  const toStat = (s) => ({
    kind: s.isFile() ? "file" : s.isDirectory() ? "dir" : s.isFIFO() ? "fifo" : s.isSocket() ? "socket" : "other",
    nativeKind: s.isFile() ? "file" : s.isDirectory() ? "dir" : s.isFIFO() ? "pipe" : s.isSocket() ? "socket"
      : s.isCharacterDevice() ? "char" : s.isBlockDevice() ? "block" : s.isSymbolicLink() ? "symlink" : "other",
    dev: BigInt(s.dev),
    ino: BigInt(s.ino),
    mode: Number(s.mode),
    uid: Number(s.uid),
    gid: Number(s.gid),
  });
  const wrapFile = (handle) => ({
    stat: async () => toStat(await handle.stat({ bigint: true })),
    read: async (buffer) => (await handle.read(buffer, 0, buffer.length, null)).bytesRead,
    write: async (bytes) => (await handle.write(bytes)).bytesWritten,
    close: () => handle.close(),
  });
  // A stream socket as a Conn (tcpConnect, unixConnect).
  const netConnect = (options) => new Promise((resolve, reject) => {
    const socket = net.connect(options);
    const chunks = [];
    let ended = false;
    let failure = null;
    let waiter = null;
    const wake = () => { if (waiter) { const w = waiter; waiter = null; w(); } };
    socket.on("data", (chunk) => { chunks.push(new Uint8Array(chunk)); wake(); });
    socket.on("end", () => { ended = true; wake(); });
    // Kept for the socket's life: an "error" without a listener would end the probe.
    socket.on("error", (error) => { ended = true; failure ??= error; reject(error); wake(); });
    socket.once("connect", () => resolve({
      write: (bytes) => new Promise((ok, bad) => socket.write(bytes, (e) => (e ? bad(e) : ok(bytes.length)))),
      read: async (max, timeoutMs) => {
        if (chunks.length === 0 && !ended) {
          await withTimeout(new Promise((r) => { waiter = r; }), timeoutMs);
          waiter = null;
        }
        if (chunks.length > 0) return chunks.shift().subarray(0, max);
        if (failure) throw failure;
        return ended ? new Uint8Array(0) : null;
      },
      close: () => socket.destroy(),
      remoteAddress: () => socket.remoteAddress ?? "",
    }));
  });
  // One write(2) per call on the raw fd: process.stdout would buffer and may split a frame.
  // EAGAIN (a non-blocking pipe another process set up) is retried, boundedly.
  const writeFd = (fd, bytes) => {
    for (let tries = 0; ; ++tries) {
      try {
        return fs.writeSync(fd, bytes);
      } catch (error) {
        if (error.code !== "EAGAIN" || tries >= 1000) throw error;
      }
    }
  };
  return {
    name: "node",
    version: `node ${process.version}`,
    args: process.argv.slice(2),
    scriptPath,
    pid: () => process.pid,
    ids: () => ({ uid: process.getuid(), euid: process.geteuid(), gid: process.getgid() }),
    cwd: () => process.cwd(),
    envEntries: () => Object.entries(process.env),
    writeOut: (bytes) => writeFd(1, bytes),
    writeErr: (text) => writeFd(2, utf8.encode(text)),
    exit: (code) => process.exit(code),
    openRead: async (path) => wrapFile(await fsp.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)),
    openReadNoFollow: async (path) =>
      wrapFile(await fsp.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)),
    createExclusive: async (path, mode) =>
      wrapFile(await fsp.open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, mode)),
    createTruncNoFollow: async (path) =>
      wrapFile(await fsp.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644)),
    stat: async (path) => toStat(await fsp.stat(path, { bigint: true })),
    lstat: async (path) => toStat(await fsp.lstat(path, { bigint: true })),
    readDirNames: async (path, limit) => {
      const dir = await fsp.opendir(path, { encoding: "buffer" });
      const names = [];
      try {
        for (let entry = await dir.read(); entry !== null && names.length < limit; entry = await dir.read()) {
          names.push(new Uint8Array(entry.name));
        }
      } finally {
        await dir.close();
      }
      return names;
    },
    readDirTyped: async (path, limit) => {
      const dir = await fsp.opendir(path, { encoding: "buffer" });
      const entries = [];
      try {
        for (let e = await dir.read(); e !== null && entries.length < limit; e = await dir.read()) {
          const kind = e.isSymbolicLink() ? "symlink" : e.isDirectory() ? "dir" : e.isFile() ? "file"
            : e.isSocket() ? "socket" : "other";
          entries.push({ name: new Uint8Array(e.name), kind });
        }
      } finally {
        await dir.close();
      }
      return entries;
    },
    unlink: (path) => fsp.unlink(path),
    symlink: (target, link) => fsp.symlink(target, link),
    realpath: (path) => fsp.realpath(path),
    tcpConnect: (host, port) => netConnect({ host, port }),
    // Node has no network permission: the address the probe resolved and checked, as natively.
    labConnect: (_name, address, port) => netConnect({ host: address, port }),
    labConnectsBy: "address",
    lookupRefusal: () => "",
    unixConnect: (path) => netConnect({ path }),
    spawn: (program, args, { detached = false, argv0 } = {}) => {
      const child = childProcess.spawn(program, args, { detached, stdio: "ignore", argv0 });
      const exited = new Promise((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code, signal) => resolve({ code, signal }));
      });
      return new Promise((resolve, reject) => {
        child.once("error", reject);
        child.once("spawn", () => resolve({
          pid: child.pid,
          wait: () => exited,
          kill: () => { try { child.kill("SIGKILL"); } catch { /* gone */ } },
          unref: () => child.unref(),
        }));
      });
    },
    kill: (pid, signal) => process.kill(pid, signal),
    // The same flags again (execArgv): the permission model does not pass to children itself.
    rerunSelf: (tail) => ({ program: process.execPath, args: [...process.execArgv, scriptPath, ...tail] }),
    apis: { spawn: "child_process.spawn", dlopen: "process.dlopen" },
    dlopen: (path) => {
      const module = { exports: {} };
      try {
        process.dlopen(module, path);
      } catch (error) {
        // dlopen() went through and Node then found no addon registration in the library:
        // the library is loaded (its constructors ran), which is what the family asks.
        if (error.code === "ERR_DLOPEN_FAILED" && /did not self-register/.test(error.message)) {
          return { addon: false };
        }
        throw error;
      }
      return { addon: true };
    },
    startWorker: (source, shared) => {
      const worker = new workerThreads.Worker(source, { eval: true, workerData: shared });
      worker.on("error", () => {});  // a worker ended by stop() is not the probe's failure
      return { stop: () => worker.terminate() };
    },
    workerSource: (body) => `const shared = require("node:worker_threads").workerData; ${body}`,
    // uname(2) through libuv (uv_os_uname), which Node's permission model does not gate.
    uname: () => ({ sysname: os.type(), release: os.release(), version: os.version(), machine: os.machine() }),
    // /proc/uptime (libuv; CLOCK_BOOTTIME where it cannot be read), in 10 ms steps.
    uptimeSeconds: () => os.uptime(),
    cpuSeconds: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
  };
}

// Deno first: Deno also provides a `process` object for npm compatibility.
const RUNTIMES = [
  { name: "deno", present: () => typeof globalThis.Deno?.version?.deno === "string", make: makeDenoRuntime },
  { name: "node", present: () => typeof globalThis.process?.versions?.node === "string", make: makeNodeRuntime },
];

const RT = await (RUNTIMES.find((row) => row.present())?.make() ??
  Promise.reject(new Error("sandprobe-probe: neither Deno nor Node")));

// ---------------------------------------------------------------------------------------------
// Time, the deadline, small helpers.

const kTimedOut = Symbol("timed out");

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

// The promise's value, or kTimedOut after `ms`.
function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(kTimedOut), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The connection `attempt` (a promise of a Conn: RT.tcpConnect, RT.unixConnect, ...) gives
// within `ms`, else ETIMEDOUT; a connection that comes after that is closed when it comes.
async function connectWithin(attempt, ms) {
  const conn = await withTimeout(attempt, ms);
  if (conn === kTimedOut) {
    attempt.then((late) => late.close(), () => {});
    throw new ProbeError("ETIMEDOUT");
  }
  return conn;
}

function monotonicMs() {
  return Math.floor(performance.now());
}

// The probe's deadline. A timer ends the run with exit 124 and no done frame; loops that run
// without yielding also call check(). While a family owns a file it created (hold..release),
// the exit waits for the release, so no nonce file or link outlives the probe (DeadlineHold).
const deadline = {
  at: Infinity,
  holds: 0,
  pending: false,
  arm(ms) {
    this.at = monotonicMs() + ms;
    setTimeout(() => this.reached(), ms);
  },
  check() {
    if (monotonicMs() >= this.at) this.reached();
  },
  reached() {
    if (this.holds > 0) {
      this.pending = true;
      return;
    }
    try { RT.writeErr("sandprobe-probe: deadline reached, stopping\n"); } catch { /* stderr gone */ }
    RT.exit(124);
  },
  async hold(body) {
    ++this.holds;
    try {
      return await body();
    } finally {
      --this.holds;
      if (this.holds === 0 && this.pending) this.reached();
    }
  },
};

// Reads up to `max` bytes of a file (proc files, cgroup knobs): {bytes} or {error}.
async function readSmallFileOrError(path, max) {
  let file;
  try {
    file = await RT.openRead(path);
  } catch (error) {
    return { error };
  }
  try {
    const chunks = [];
    let total = 0;
    while (total < max) {
      const buffer = new Uint8Array(Math.min(65536, max - total));
      const n = await file.read(buffer);
      if (n === 0) break;
      chunks.push(buffer.subarray(0, n));
      total += n;
    }
    return { bytes: concatBytes(chunks, total) };
  } catch (error) {
    return { error };
  } finally {
    await file.close().catch(() => {});
  }
}

// The bytes, or null when the file cannot be read.
async function readSmallFile(path, max) {
  return (await readSmallFileOrError(path, max)).bytes ?? null;
}

// Counts the /proc/<pid>/* reads the runtime's permission layer refused (Deno 2 refuses every
// /proc/self and /proc/<pid> path unless --allow-all, --allow-read included): without it a
// scan that read nothing would look like one that found nothing.
function refusalCounter() {
  const counter = { refused: 0, first: null };
  counter.note = (error) => {
    if (!error || !runtimeRefusal(error)) return;
    ++counter.refused;
    counter.first ??= error;
  };
  counter.report = (fact) => {
    if (counter.refused === 0) return;
    fact.proc_refused = counter.refused;
    addError(fact, counter.first, "proc_");
  };
  return counter;
}

async function readSmallText(path, max = 65536) {
  const bytes = await readSmallFile(path, max);
  return bytes === null ? null : utf8Lossy.decode(bytes);
}

function devString(dev) {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

// ---------------------------------------------------------------------------------------------
// Reading a path (probes/path_content.h): a file is its first 4096 bytes, a directory its
// entry names (at most 1024, without . and ..) sorted bytewise and joined by "\n"; hashed with
// SHA-256. Symlinks are followed.

async function readPathContent(path) {
  const c = { ok: false, step: "", error: null, kind: "other", hashed: new Uint8Array(0),
              entries: 0, truncated: false, stat: null, notes: {} };
  const failed = (step, error) => Object.assign(c, { ok: false, step, error });
  let file;
  try {
    file = await RT.openRead(path);
  } catch (error) {
    return failed("open", error);
  }
  try {
    try {
      c.stat = await file.stat();
    } catch (error) {
      if (!runtimeRefusal(error)) return failed("fstat", error);
      // Deno checks fstat against the permission of the file's resolved target even where
      // the open through a symlink went through: the content is readable all the same.
      addError(c.notes, error, "fstat_");
      try {
        c.stat = await RT.stat(path);
        c.notes.stat_via = "path";
      } catch (again) {
        addError(c.notes, again, "path_stat_");
      }
    }
    if (c.stat?.kind === "dir") {
      await file.close();
      file = null;
      let names;
      try {
        names = await RT.readDirNames(path, kMaxDirEntries + 1);
      } catch (error) {
        return failed("readdir", error);
      }
      c.truncated = names.length > kMaxDirEntries;  // one name past the cap proves more
      names = names.slice(0, kMaxDirEntries).sort(compareBytes);
      const joined = [];
      names.forEach((name, i) => {
        if (i > 0) joined.push(utf8.encode("\n"));
        joined.push(name);
      });
      c.hashed = concatBytes(joined, joined.reduce((n, b) => n + b.length, 0));
      return Object.assign(c, { ok: true, kind: "dir", entries: names.length });
    }
    // Up to 4096 bytes plus one to learn whether there was more; the extra byte is never
    // hashed or counted.
    const buffer = new Uint8Array(kMaxReadBytes + 1);
    let got = 0;
    while (got < buffer.length) {
      let n;
      try {
        n = await file.read(buffer.subarray(got));
      } catch (error) {
        return failed("read", error);
      }
      if (n === 0) break;
      got += n;
    }
    c.truncated = got > kMaxReadBytes;
    c.hashed = buffer.slice(0, Math.min(got, kMaxReadBytes));
    return Object.assign(c, { ok: true, kind: c.stat?.kind === "file" ? "file" : "other" });
  } finally {
    if (file) await file.close().catch(() => {});
  }
}

// fs.read's facts for one path (probes/read_path.h).
async function readPathFacts(path, fact) {
  const c = await readPathContent(path);
  if (c.stat) {
    fact.dev = devString(c.stat.dev);
    if (c.stat.ino !== null) fact.ino = c.stat.ino;
  }
  Object.assign(fact, c.notes);
  if (!c.ok) return fail(fact, c.step, c.error);
  fact.ok = true;
  fact.kind = c.kind;
  if (c.kind === "dir") fact.entries = c.entries;
  else fact.bytes = c.hashed.length;
  fact.truncated = c.truncated;
  fact.sha256 = await sha256Hex(c.hashed);
  return fact;
}

// ---------------------------------------------------------------------------------------------
// /proc/self/mountinfo (probes/mountinfo.h).

function unescapeMountField(field) {
  return field.replace(/\\([0-3][0-7][0-7])/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
}

function hasMountOption(options, flag) {
  return options.split(",").includes(flag);
}

// The mount table (ParseMountinfo): {mounts, truncated, error, bytes}. Path fields are kept as
// "binary strings" (one char per byte), as the kernel escapes only space, tab, newline and
// backslash; lines that do not parse are skipped; at most kMaxMounts entries.
async function readMountTable() {
  const { bytes, error } = await readSmallFileOrError("/proc/self/mountinfo", kMaxMountinfoBytes);
  const table = { mounts: [], truncated: false, error: error ?? null, bytes: bytes?.length ?? 0 };
  const text = bytes ? bytesToBinary(bytes) : "";
  for (const line of text.split("\n")) {
    if (table.mounts.length === kMaxMounts) {
      table.truncated = true;
      break;
    }
    const fields = line.split(/[ \t]+/).filter((f) => f !== "");
    const dash = fields.indexOf("-", 6);
    if (fields.length < 6 || dash < 0 || fields.length < dash + 3) continue;
    const dev = /^(\d+):(\d+)$/.exec(fields[2]);
    if (!dev || !/^-?\d+$/.test(fields[0]) || !/^-?\d+$/.test(fields[1])) continue;
    table.mounts.push({
      mountId: Number(fields[0]),
      parentId: Number(fields[1]),
      dev: `${Number(dev[1])}:${Number(dev[2])}`,
      root: unescapeMountField(fields[3]),
      mountPoint: unescapeMountField(fields[4]),
      mountOptions: fields[5],
      fstype: fields[dash + 1],
      source: unescapeMountField(fields[dash + 2]),
      superOptions: fields[dash + 3] ?? "",
    });
  }
  return table;
}

async function readMounts() {
  return (await readMountTable()).mounts;
}

function binaryToBytes(text) {
  return Uint8Array.from(text, (ch) => ch.charCodeAt(0));
}

function bytesToBinary(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return text;
}

// The mount that holds `path` (bytes as a binary string): the longest mount point that is
// `path` or one of its parents, the later one on a tie (mounts stack in order).
function mountHolding(mounts, path) {
  let best = null;
  for (const m of mounts) {
    const p = m.mountPoint;
    const holds = p === "/" || path === p || (path.startsWith(p) && path[p.length] === "/");
    if (holds && (best === null || p.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Argument checks shared by families (the native messages, word for word).

function checkPathList(family, paths) {
  if (paths.length === 0) return `${family}: no paths given`;
  if (paths.length > kMaxPathsPerFamily) {
    return `${family}: ${paths.length} paths, at most ${kMaxPathsPerFamily} per family`;
  }
  if (paths.some((p) => p === "")) return `${family}: empty path`;
  return "";
}

// `NAME=ADDR:PORT` with a numeric IPv4 address or a bracketed IPv6 one (net_probes.h).
function parseEndpoint(arg) {
  const eq = arg.indexOf("=");
  const colon = arg.lastIndexOf(":");
  if (eq <= 0 || colon < 0 || colon < eq) return null;
  const portText = arg.slice(colon + 1);
  if (!/^[0-9]{1,5}$/.test(portText)) return null;
  const port = Number(portText);
  if (port === 0 || port > 65535) return null;
  let host = arg.slice(eq + 1, colon);
  let v6 = false;
  if (host.length > 2 && host.startsWith("[") && host.endsWith("]")) {
    host = host.slice(1, -1);
    v6 = true;
    if (!isIPv6(host)) return null;
  } else if (!isIPv4(host)) {
    return null;
  }
  return { name: arg.slice(0, eq), text: arg.slice(eq + 1), host, port, v6 };
}

function isIPv4(text) {
  const parts = text.split(".");
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6(text) {
  // inet_pton's grammar, enough of it: hex groups, one "::", an optional dotted IPv4 tail.
  if (!/^[0-9a-fA-F:.]+$/.test(text) || (text.match(/::/g) ?? []).length > 1) return false;
  let groups = text.split(":");
  const last = groups[groups.length - 1];
  let extra = 0;
  if (last.includes(".")) {
    if (!isIPv4(last)) return false;
    groups = groups.slice(0, -1);
    extra = 2;
  }
  const filled = groups.filter((g) => g !== "");
  if (!filled.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = filled.length + extra;
  return text.includes("::") ? count < 8 : count === 8 && !groups.includes("");
}

function checkEndpointArgs(family, args) {
  if (args.length === 0) return `${family}: no endpoints (NAME=ADDR:PORT)`;
  if (args.length > kMaxNetEndpoints) return `${family}: more than 64 endpoints`;
  for (const arg of args) {
    if (!parseEndpoint(arg)) return `${family}: not NAME=ADDR:PORT with a numeric address: ${arg}`;
  }
  return "";
}

// `--name VALUE` pairs of a resource family (ResourceArgs::Parse): {error, numbers}.
function parseResourceArgs(family, args, numericMax) {
  const numbers = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i];
    if (i + 1 >= args.length) return { error: `${family}: ${name} needs a value` };
    const value = args[i + 1];
    const key = name.length > 2 ? name.slice(2) : name;
    if (!name.startsWith("--") || !(key in numericMax)) return { error: `${family}: unknown argument ${name}` };
    const n = /^[+-]?[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0 || n > numericMax[key]) {
      return { error: `${family}: ${name}: expected 1..${numericMax[key]}, got ${value}` };
    }
    numbers[key] = n;
  }
  for (const key of Object.keys(numericMax).sort()) {
    if (!(key in numbers) && key.startsWith("ceiling")) return { error: `${family}: --${key} is required` };
  }
  return { error: "", numbers };
}

// ---------------------------------------------------------------------------------------------
// Families: filesystem.

async function runFsRead(ctx, args) {
  for (const path of args) {
    ctx.emit(await readPathFacts(path, { family: "fs.read", path }));
  }
}

async function runFsWrite(ctx, args) {
  const mounts = await readMounts();
  for (let i = 0; i < args.length; ++i) {
    const dir = args[i];
    const fact = { family: "fs.write", path: dir };
    await tryCreateAndRemove(`${dir}/.sandprobe-${ctx.nonce}-${i}`, ctx.nonce, fact);
    await addMountFlags(dir, mounts, fact);
    ctx.emit(fact);
  }
}

// Adds ok/created/removed and, on the first failing step, step + errno (fs_write.cc).
async function tryCreateAndRemove(file, nonce, fact) {
  fact.created = false;
  fact.removed = false;
  await deadline.hold(async () => {
    let handle;
    try {
      handle = await RT.createExclusive(file, 0o600);
    } catch (error) {
      fail(fact, "open", error);
      return;
    }
    fact.created = true;
    let failed = null;
    try {
      const bytes = utf8.encode(nonce);
      const n = await handle.write(bytes);
      if (n !== bytes.length) failed = ["write", new ProbeError("ENOSPC")];
    } catch (error) {
      failed = ["write", error];
    }
    try {
      await handle.close();
    } catch (error) {
      failed ??= ["close", error];
    }
    try {  // always unlink what was created, even when the write failed
      await RT.unlink(file);
      fact.removed = true;
    } catch (error) {
      failed ??= ["unlink", error];
    }
    if (failed) fail(fact, failed[0], failed[1]);
    else fact.ok = true;
  });
}

// Neither runtime has statvfs(): "ro_mount" is null with ENOSYS, as the native probe reports a
// failed statvfs. The mount's own options come from mountinfo as natively.
async function addMountFlags(dir, mounts, fact) {
  fact.ro_mount = null;
  fact.statvfs_errno = "ENOSYS";
  let real;
  try {
    real = await RT.realpath(dir);
  } catch {
    return;  // no dir, no mount to name
  }
  const m = mountHolding(mounts, bytesToBinary(utf8.encode(real)));
  if (m) {
    setBytesField(fact, "mount_point", binaryToBytes(m.mountPoint));
    fact.mountinfo_ro = hasMountOption(m.mountOptions, "ro") || hasMountOption(m.superOptions, "ro");
  }
}

// fs.mounts (fs_mounts.cc): one fact per mount (variant "id:<mount id>"), then a summary.
async function runFsMounts(ctx) {
  const table = await readMountTable();
  for (const m of table.mounts) {
    const fact = { family: "fs.mounts", variant: `id:${m.mountId}`, mount_id: m.mountId,
                   parent_id: m.parentId, dev: m.dev };
    setBytesField(fact, "fstype", binaryToBytes(m.fstype));
    setBytesField(fact, "mount_options", binaryToBytes(m.mountOptions));
    setBytesField(fact, "super_options", binaryToBytes(m.superOptions));
    setBytesField(fact, "path", binaryToBytes(m.mountPoint));
    setBytesField(fact, "root", binaryToBytes(m.root));
    setBytesField(fact, "source", binaryToBytes(m.source));
    await addMountPointFacts(m, fact);
    ctx.emit(fact);
  }
  const summary = { family: "fs.mounts", variant: "summary", path: "", ok: table.error === null && table.bytes > 0,
                    mounts: table.mounts.length, truncated: table.truncated || table.bytes >= kMaxMountinfoBytes };
  if (table.error) addError(summary, table.error);
  // The runtime's own executable (the file the harness handed in is the script; the host knows
  // the interpreter's device and inode no better): the native probe names /proc/self/exe.
  try {
    const exe = await RT.stat("/proc/self/exe");
    summary.exe_dev = devString(exe.dev);
    if (exe.ino !== null) summary.exe_ino = Number(exe.ino);
  } catch {
    // a runtime that refuses /proc (Deno): no executable to name, as a native probe without /proc
  }
  ctx.emit(summary);
}

// What a mount point shows now (fs_mounts.cc AddMountPointFacts): kind, inode, the device stat
// shows when it is not the mount's own (another mount covers the point), and a directory's
// listing hashed as fs.read hashes it.
async function addMountPointFacts(m, fact) {
  const bytes = binaryToBytes(m.mountPoint);
  let path;
  try {
    path = utf8Strict.decode(bytes);
  } catch {
    fact.stat_errno = "EILSEQ";  // a runtime path is text: a mount point that is not UTF-8 is not addressable
    return;
  }
  let st;
  try {
    st = await RT.stat(path);
  } catch (error) {
    fact.stat_errno = classifyError(error).errno;
    return;
  }
  fact.kind = st.nativeKind;
  if (st.ino !== null) fact.ino = Number(st.ino);
  if (devString(st.dev) !== m.dev) fact.stat_dev = devString(st.dev);
  if (st.kind !== "dir") return;
  const c = await readPathContent(path);
  if (!c.ok || c.kind !== "dir") return;
  fact.entries = c.entries;
  fact.listing_truncated = c.truncated;
  fact.sha256 = await sha256Hex(c.hashed);
}

function checkFsAliasArgs(args) {
  if (args.length < 2 || args[0] !== "--scratch" || args[1] === "") {
    return "fs.alias: usage: fs.alias --scratch DIR PATH...";
  }
  const paths = args.slice(2);
  const error = checkPathList("fs.alias", paths);
  if (error) return error;
  const relative = paths.find((p) => !p.startsWith("/"));
  return relative === undefined ? "" : `fs.alias: path is not absolute: ${relative}`;
}

// "/tmp" + "/etc/shadow" -> "/tmp/../etc/shadow" (fs_alias.cc DotDotAlias).
function dotDotAlias(scratch, path) {
  const depth = scratch.split("/").filter((c) => c !== "").length;
  return scratch.replace(/\/+$/, "") + "/..".repeat(depth) + "/" + path.replace(/^\/+/, "");
}

// The names `path` may have under mount m: M + P, and M + (P - R) when P lies under root R.
function namesUnder(m, path) {
  const names = [m.mountPoint + path];
  const root = m.root;
  if (root !== "/" && path.length > root.length && path.startsWith(root) && path[root.length] === "/") {
    names.push(m.mountPoint + path.slice(root.length));
  }
  return names;
}

async function runFsAlias(ctx, args) {
  const scratch = args[1];
  const all = await readMounts();
  const mounts = all.filter((m) => m.mountPoint !== "/" && m.mountPoint.startsWith("/")).slice(0, kMaxMountRoots);
  const budget = { left: kMaxMountRootTries };
  for (let i = 2; i < args.length; ++i) {
    const path = args[i];
    const aliasFact = (variant, via) => ({ family: "fs.alias", variant, path, via });

    const dotdot = dotDotAlias(scratch, path);
    ctx.emit(await readPathFacts(dotdot, aliasFact("dotdot", dotdot)));

    const procRoot = "/proc/self/root" + path;
    ctx.emit(await readPathFacts(procRoot, aliasFact("proc_root", procRoot)));

    const link = `${scratch}/.sandprobe-${ctx.nonce}-link-${i - 2}`;
    const fact = aliasFact("symlink", link);
    await deadline.hold(async () => {  // the link must not outlive the probe
      try {
        await RT.symlink(path, link);
      } catch (error) {
        fail(fact, "symlink", error);
        return;
      }
      await readPathFacts(link, fact);
      try {
        await RT.unlink(link);
      } catch (error) {
        addError(fact, error, "link_unlink_");
      }
      fact.link_removed = !("link_unlink_errno" in fact);
    });
    ctx.emit(fact);

    ctx.emit(await mountRootFact(path, mounts, all.length, budget));
  }
}

async function mountRootFact(path, mounts, totalMounts, budget) {
  const fact = { family: "fs.alias", variant: "mount_root", path };
  const hits = [];
  const tried = new Set();
  const pathBinary = bytesToBinary(utf8.encode(path));
  let readable = 0;
  for (const m of mounts) {
    for (const via of namesUnder(m, pathBinary)) {
      if (via === pathBinary || budget.left === 0 || tried.has(via)) continue;
      tried.add(via);
      --budget.left;
      const viaText = utf8Lossy.decode(binaryToBytes(via));
      const hit = await readPathFacts(viaText, {});
      if (hit.ok !== true) continue;
      ++readable;
      if (hits.length === kMaxHitsListed) continue;
      setBytesField(hit, "via", binaryToBytes(via));
      hits.push(hit);
    }
  }
  Object.assign(fact, {
    ok: readable > 0, mounts: mounts.length, mounts_total: totalMounts, tried: tried.size,
    readable, hits, hits_truncated: readable > kMaxHitsListed, budget_exhausted: budget.left === 0,
  });
  return fact;
}

// ---------------------------------------------------------------------------------------------
// env.secret (env_secret.cc): the prefix's variables in the probe's environment and in every
// readable /proc/*/environ, values only as SHA-256.
//
// Where the runtime refuses the environment API (Deno without --allow-env), /proc/self/environ
// is a second way to the same variables, so it is read then (source "/proc/self/environ");
// natively the probe's own pid is skipped, its environ being the first source already.

function checkEnvSecretArgs(args) {
  if (args.length !== 1 || args[0] === "") return "env.secret: usage: env.secret PREFIX";
  if (args[0].includes("=")) return "env.secret: PREFIX contains '='";
  return "";
}

async function emitEnvMatch(ctx, name, value, prefix, source) {
  if (!name.startsWith(prefix)) return false;
  ctx.emit({ family: "env.secret", source, name, sha256: await sha256Hex(toBytes(value)) });
  return true;
}

// NUL-separated NAME=VALUE entries; an entry cut by the 64 KiB cap is dropped (env_secret.cc).
// null when unreadable (a refusal by the runtime is counted in `refusals`).
async function environEntries(file, refusals) {
  const { bytes, error } = await readSmallFileOrError(file, kMaxEnvironBytes);
  refusals.note(error);
  if (!bytes) return null;
  let usable = bytes;
  if (bytes.length === kMaxEnvironBytes) usable = bytes.subarray(0, bytes.lastIndexOf(0) + 1);
  const entries = [];
  let start = 0;
  while (start < usable.length) {
    let end = usable.indexOf(0, start);
    if (end < 0) end = usable.length;
    const entry = usable.subarray(start, end);
    const eq = entry.indexOf(0x3d);
    if (eq >= 0) entries.push([utf8Lossy.decode(entry.subarray(0, eq)), entry.subarray(eq + 1)]);
    start = end + 1;
  }
  return entries;
}

async function runEnvSecret(ctx, args) {
  const prefix = args[0];
  const summary = { family: "env.secret", summary: true };
  let matches = 0;
  let ownEnvironRefused = false;
  const refusals = refusalCounter();
  try {
    for (const [name, value] of RT.envEntries()) {
      if (await emitEnvMatch(ctx, name, value, prefix, "environ")) ++matches;
    }
  } catch (error) {
    addError(summary, error, "environ_");
    ownEnvironRefused = runtimeRefusal(error) !== "";
  }
  if (ownEnvironRefused) {
    const entries = await environEntries("/proc/self/environ", refusals);
    summary.self_environ_readable = entries !== null;
    for (const [name, value] of entries ?? []) {
      if (await emitEnvMatch(ctx, name, value, prefix, "/proc/self/environ")) ++matches;
    }
  }
  let scanned = 0;
  let readable = 0;
  let pids = null;
  try {
    pids = await listPids();
  } catch (error) {
    addError(summary, error, "proc_");
  }
  const self = String(RT.pid());
  for (const pid of pids ?? []) {
    if (scanned >= kMaxPids) break;
    if (pid === self) continue;
    ++scanned;
    const source = `/proc/${pid}/environ`;
    const entries = await environEntries(source, refusals);
    if (entries === null) continue;
    ++readable;
    for (const [name, value] of entries) {
      if (await emitEnvMatch(ctx, name, value, prefix, source)) ++matches;
    }
  }
  Object.assign(summary, { processes_scanned: scanned, environs_readable: readable, matches });
  refusals.report(summary);
  ctx.emit(summary);
}

// The numeric names in /proc, at most kMaxPids + 1 (throws when /proc cannot be listed).
async function listPids() {
  const names = await RT.readDirNames("/proc", 1 << 16);
  return names.map((n) => utf8Lossy.decode(n)).filter((n) => /^[0-9]+$/.test(n)).slice(0, kMaxPids + 1);
}

// ---------------------------------------------------------------------------------------------
// Network (net_inet.cc, net_dns.cc). The probe's own view; egress is proven by the host's
// canary listener logging this run's nonce.

function canaryPayload(nonce, family, name) {
  return utf8.encode(`sandprobe ${nonce} ${family} ${name}\n`);
}

function isAck(bytes) {
  return bytes.length >= 13 && utf8Lossy.decode(bytes.subarray(0, 13)) === "sandprobe-ack";
}

async function tryTcp(ctx, ep) {
  const fact = { family: "net.tcp", path: ep.name, addr: ep.text, nonce: ctx.nonce };
  const start = monotonicMs();
  let conn;
  try {
    conn = await connectWithin(RT.tcpConnect(ep.host, ep.port), kNetWaitMs);
  } catch (error) {
    fact.connect_ms = monotonicMs() - start;
    return fail(fact, "connect", error);
  }
  fact.connect_ms = monotonicMs() - start;
  fact.connected = true;
  try {
    const payload = canaryPayload(ctx.nonce, "net.tcp", ep.name);
    try {
      fact.sent = await conn.write(payload);
    } catch (error) {
      return fail(fact, "send", error);
    }
    fact.ok = true;
    fact.acked = false;
    try {
      const reply = await conn.read(64, kNetWaitMs);
      if (reply !== null) fact.acked = isAck(reply);
    } catch (error) {
      addError(fact, error, "ack_");
    }
    return fact;
  } finally {
    conn.close();
  }
}

// One UDP exchange with node:dgram (both runtimes): bind, connect, send, wait for one reply.
// Deno checks the bind address against --allow-net, so the wildcard comes first and the target
// address itself second (a grant of only the canary's host allows that one); "bind" names the
// address that was bound. Steps: "bind", "connect", "send"; the reply, if any, in `reply`.
async function udpExchange(ep, payload, fact) {
  const wildcard = ep.v6 ? "::" : "0.0.0.0";
  let socket = null;
  let lastError = null;
  for (const address of [wildcard, ep.host]) {
    const candidate = dgram.createSocket(ep.v6 ? "udp6" : "udp4");
    try {
      await trapAsyncErrors(new Promise((resolve, reject) => {
        candidate.once("error", reject);
        candidate.bind({ address, port: 0 }, () => resolve());
      }));
      socket = candidate;
      fact.bind = address;
      break;
    } catch (error) {
      lastError = error;
      try { candidate.close(); } catch { /* never bound */ }
    }
  }
  if (socket === null) return { step: "bind", error: lastError };
  const replies = [];
  let replyError = null;
  let wake = null;
  socket.on("message", (message) => { replies.push(new Uint8Array(message)); wake?.(); });
  socket.on("error", (error) => { replyError ??= error; wake?.(); });
  try {
    try {
      await trapAsyncErrors(new Promise((resolve, reject) => {
        socket.once("error", reject);
        socket.connect(ep.port, ep.host, () => { socket.off("error", reject); resolve(); });
      }));
    } catch (error) {
      return { step: "connect", error };
    }
    try {
      await trapAsyncErrors(new Promise((resolve, reject) => socket.send(payload, (e) => (e ? reject(e) : resolve()))));
    } catch (error) {
      return { step: "send", error };
    }
    if (replies.length === 0 && replyError === null) {
      await withTimeout(new Promise((resolve) => { wake = resolve; }), kNetWaitMs);
    }
    return { step: "", reply: replies[0] ?? null, replyError: replies.length ? null : replyError };
  } finally {
    try { socket.close(); } catch { /* closed */ }
  }
}

async function tryUdp(ctx, ep) {
  const fact = { family: "net.udp", path: ep.name, addr: ep.text, nonce: ctx.nonce };
  const payload = canaryPayload(ctx.nonce, "net.udp", ep.name);
  const result = await udpExchange(ep, payload, fact);
  if (result.step) return fail(fact, result.step, result.error);
  fact.ok = true;
  fact.sent = payload.length;
  fact.acked = result.reply !== null && isAck(result.reply);
  // ECONNREFUSED: an ICMP port unreachable came back
  if (result.reply === null && result.replyError) addError(fact, result.replyError, "ack_");
  return fact;
}

// The container runtimes' control sockets net.unix always tries (contract/protocol.h).
const kRuntimeSocketPaths = [
  "/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
  "/var/run/containerd/containerd.sock", "/run/podman/podman.sock", "/var/run/podman/podman.sock",
  "/run/crio/crio.sock", "/var/run/crio/crio.sock",
];

// "[--walk-devs MAJOR:MINOR,...] PATH..." (unix_sockets.cc SplitSocketArgs): {error} or
// {walkDevs, paths}.
function splitSocketArgs(family, args) {
  let i = 0;
  let walkDevs = [];
  if (args[0] === "--walk-devs") {
    if (args.length < 2) return { error: `${family}: --walk-devs needs a list (MAJOR:MINOR,...)` };
    walkDevs = args[1].split(",");
    const bad = walkDevs.find((dev) => !/^[0-9]+:[0-9]+$/.test(dev));
    if (bad !== undefined) return { error: `${family}: --walk-devs: not MAJOR:MINOR: ${bad}` };
    walkDevs = walkDevs.map((dev) => dev.split(":").map(Number).join(":"));
    i = 2;
  }
  const paths = args.slice(i);
  if (paths.length > kMaxPathsPerFamily) return { error: `${family}: more than 4096 paths` };
  const bad = paths.find((p) => !p.startsWith("/"));
  return bad === undefined ? { walkDevs, paths } : { error: `${family}: not an absolute path: ${bad}` };
}

function checkNetUnixArgs(args) {
  return splitSocketArgs("net.unix", args).error ?? "";
}

// The socket scan's bounds (probes/unix_sockets.h, the same numbers).
const kMaxWalkEntries = 50000;
const kMaxWalkDepth = 8;
const kMaxFoundSockets = 64;
const kMaxProcNetUnixPaths = 256;
const kMaxProcNetUnixBytes = 1 << 20;
const kMaxReplyBytes = 1024;
const kPingWaitMs = 1000;     // for each socket's ping reply (all sockets are tried at once)
const kPrefaceWaitMs = 500;   // for the HTTP/2 answer of a silent one
const kMaxRunUserDirs = 64;
const kMaxGroups = 64;

// The reads of the scan the runtime's permission layer refused: a scan that could not look
// must not read as one that found nothing. The first refusal is named in the summary.
function scanRefusals() {
  const out = { count: 0, path: null, error: null };
  out.note = (path, error) => {
    if (!runtimeRefusal(error)) return;
    ++out.count;
    if (out.error === null) Object.assign(out, { path, error });
  };
  return out;
}

// Sockets once each by (dev, ino), at most kMaxFoundSockets (unix_sockets.cc Collector).
function socketCollector(walk, refusals) {
  const ids = new Set();
  const found = [];
  const idOf = (st) => (st.ino === null ? null : `${st.dev}:${st.ino}`);
  return {
    found,
    // Records a listed path as seen (never reported twice).
    seen: async (path) => {
      try {
        const st = await RT.stat(path);
        if (st.kind === "socket" && idOf(st) !== null) ids.add(idOf(st));
      } catch { /* the listed attempt reports it */ }
    },
    // false once the cap is reached.
    add: async (path, source) => {
      if (found.length === kMaxFoundSockets) {
        walk.foundTruncated = true;
        return false;
      }
      let st;
      try {
        st = await RT.stat(path);
      } catch (error) {
        refusals.note(path, error);
        return true;
      }
      if (st.kind !== "socket") return true;
      const id = idOf(st);
      if (id !== null) {
        if (ids.has(id)) return true;
        ids.add(id);
      }
      found.push({ path, source });
      return true;
    },
  };
}

function joinPath(dir, name) {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

// Breadth first, on the mount's own device, never through a symlink (lstat decides what an
// entry is; a directory is listed only when lstat says it is one on the same device).
async function walkMountForSockets(top, collector, walk, refusals) {
  let topSt;
  try {
    topSt = await RT.stat(top);
  } catch (error) {
    refusals.note(top, error);
    return;
  }
  if (topSt.kind !== "dir") return;
  ++walk.mounts;
  const queue = [[top, 0]];
  for (let next = 0; next < queue.length && !walk.truncated && !walk.foundTruncated; ++next) {
    const [dir, depth] = queue[next];
    queue[next] = null;
    deadline.check();
    try {
      const st = await RT.lstat(dir);
      if (st.kind !== "dir" || st.dev !== topSt.dev) continue;  // another filesystem: its own mount
    } catch (error) {
      refusals.note(dir, error);
      continue;
    }
    let entries;
    try {
      entries = await RT.readDirTyped(dir, kMaxWalkEntries - walk.entries + 1);
    } catch (error) {
      refusals.note(dir, error);
      continue;
    }
    ++walk.dirs;
    for (const { name: raw, kind } of entries) {
      if (++walk.entries > kMaxWalkEntries) {  // 50001, as natively: one past the ceiling
        walk.truncated = true;
        break;
      }
      let name;
      try {
        name = utf8Strict.decode(raw);
      } catch {
        continue;  // a name that is not UTF-8 cannot be passed to the runtime exactly
      }
      const path = joinPath(dir, name);
      let type = kind;
      if (type === "other") {  // the entry's type unsaid (Deno: sockets too): lstat, never stat
        try {
          type = (await RT.lstat(path)).kind;
        } catch (error) {
          refusals.note(path, error);
          continue;
        }
      }
      if (type === "socket") {
        if (!(await collector.add(path, "walk"))) break;
      } else if (type === "dir" && depth + 1 <= kMaxWalkDepth) {
        queue.push([path, depth + 1]);
      }
    }
  }
}

// The bound paths of /proc/net/unix ("Num RefCount Protocol Flags Type St Inode Path").
async function procNetUnixPaths(refusals) {
  const { bytes, error } = await readSmallFileOrError("/proc/net/unix", kMaxProcNetUnixBytes);
  if (!bytes) {
    refusals.note("/proc/net/unix", error);
    return [];
  }
  const paths = [];
  for (const line of utf8Lossy.decode(bytes).split("\n")) {
    const slash = line.indexOf(" /");
    if (slash < 0) continue;
    const path = line.slice(slash + 1);
    if (!paths.includes(path)) paths.push(path);
    if (paths.length === kMaxProcNetUnixPaths) break;
  }
  return paths;
}

// FindUnixSockets (unix_sockets.cc): socket mount points, a walk of the mounts on the host's
// devices, /proc/net/unix, /run/user/*/{docker.sock,podman/podman.sock}.
async function findUnixSockets(walkDevs, skip, walk, refusals) {
  const collector = socketCollector(walk, refusals);
  for (const path of skip) await collector.seen(path);
  const table = await readMountTable();
  if (table.error) refusals.note("/proc/self/mountinfo", table.error);
  const mounts = table.mounts.map((m) => ({ ...m, mountPoint: utf8Lossy.decode(binaryToBytes(m.mountPoint)) }));
  for (const m of mounts) await collector.add(m.mountPoint, "mountinfo");
  const walked = new Set();
  for (const m of mounts) {
    if (walk.truncated || !walkDevs.includes(m.dev) || !m.root.startsWith("/")) continue;
    const key = `${m.dev} ${m.root}`;
    if (walked.has(key)) continue;
    walked.add(key);
    await walkMountForSockets(m.mountPoint, collector, walk, refusals);
  }
  const listed = await procNetUnixPaths(refusals);
  walk.procNetUnix = listed.length;
  for (const path of listed) await collector.add(path, "proc_net_unix");
  let users = [];
  try {
    users = await RT.readDirNames("/run/user", kMaxRunUserDirs);
  } catch (error) {
    refusals.note("/run/user", error);
  }
  for (const raw of users) {
    const user = utf8Lossy.decode(raw);
    if (user.startsWith(".")) continue;
    for (const rel of ["/docker.sock", "/podman/podman.sock"]) {
      await collector.add(`/run/user/${user}${rel}`, "run_user");
    }
  }
  return collector.found;
}

// Whether `bytes` start with an HTTP/2 frame header of type SETTINGS on stream 0 (RFC 9113 4.1).
function isHttp2Settings(bytes) {
  return bytes.length >= 9 && bytes[3] === 0x04 && bytes[5] === 0 && bytes[6] === 0 &&
    bytes[7] === 0 && bytes[8] === 0 && !bytesToBinary(bytes.subarray(0, 5)).startsWith("HTTP/");
}

// The HTTP/2 client preface and an empty SETTINGS frame (RFC 9113 3.4, 6.5).
function http2Preface() {
  const preface = utf8.encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  return concatBytes([preface, new Uint8Array([0, 0, 0, 0x04, 0, 0, 0, 0, 0])], preface.length + 9);
}

// Reads until `complete`, a close, kMaxReplyBytes, or `ms` in all.
async function readReply(conn, ms, complete) {
  const until = monotonicMs() + ms;
  const chunks = [];
  let total = 0;
  while (total < kMaxReplyBytes) {
    const left = until - monotonicMs();
    if (left <= 0) break;
    const chunk = await conn.read(kMaxReplyBytes - total, left);
    if (chunk === null || chunk.length === 0) break;
    chunks.push(chunk);
    total += chunk.length;
    if (complete(concatBytes(chunks, total))) break;
  }
  return concatBytes(chunks, total);
}

// The value of header `name` (case-insensitive) in an HTTP reply head (binary string), "".
function httpHeader(head, name) {
  const lines = head.split("\n");
  for (let i = 1; i < lines.length; ++i) {
    const line = lines[i].replace(/\r$/, "");
    if (line === "") break;
    const colon = line.indexOf(":");
    if (colon === name.length && line.slice(0, colon).toLowerCase() === name.toLowerCase()) {
      return line.slice(colon + 1).replace(/^ +/, "").replace(/ +$/, "");
    }
  }
  return "";
}

// One attempt at a socket path (TryUnixSockets in unix_sockets.cc), shared by net.unix and
// priv.runtime_sockets so the same socket gets the same answer in both: stat, connect, one
// read-only `GET /_ping HTTP/1.0`, and, when no HTTP/1 answer came, an HTTP/2 preface with an
// empty SETTINGS frame. Nothing that could change state is ever sent. The result:
//   {path, st: Stat|null, statError, connectError, connected, sendError, reply: bytes, h2}
// A runtime that refuses stat() may still let connect() through (Node 20 checks the file
// system, not sockets): the refusal is kept and the connect tried all the same.
async function attemptSocket(path) {
  const out = { path, st: null, statError: null, connectError: null, connected: false, sendError: null,
                reply: new Uint8Array(0), h2: false };
  try {
    out.st = await RT.stat(path);
  } catch (error) {
    out.statError = error;
    if (!runtimeRefusal(error)) return out;
  }
  if (out.st && out.st.kind !== "socket") return out;
  let conn;
  try {
    conn = await connectWithin(RT.unixConnect(path), kNetWaitMs);
  } catch (error) {
    out.connectError = error;
    return out;
  }
  out.connected = true;
  try {
    await conn.write(utf8.encode("GET /_ping HTTP/1.0\r\n\r\n"));
    out.reply = await readReply(conn, kPingWaitMs, (got) =>
      bytesToBinary(got).includes("\r\n\r\n") || isHttp2Settings(got));
  } catch (error) {
    out.sendError = error;
  } finally {
    conn.close();
  }
  out.h2 = isHttp2Settings(out.reply);
  if (!out.h2 && !bytesToBinary(out.reply).startsWith("HTTP/")) {
    // Perhaps an HTTP/2-only server that waits for the client's preface.
    try {
      const again = await connectWithin(RT.unixConnect(path), kPrefaceWaitMs);
      try {
        await again.write(http2Preface());
        out.h2 = isHttp2Settings(await readReply(again, kPrefaceWaitMs, (got) => got.length >= 9));
      } finally {
        again.close();
      }
    } catch { /* no second answer: not an HTTP/2 server */ }
  }
  return out;
}

// The shared keys of an attempt (AddSocketAnswerFacts): the file's mode and owner after a
// stat ("%04o" as natively), then, once connected, send_errno, the HTTP answer
// (status_line, api_version, server) or reply_bytes + h2.
function addSocketAnswer(a, fact) {
  if (a.st) {
    if (a.st.mode !== null) fact.mode = (a.st.mode & 0o7777).toString(8).padStart(4, "0");
    if (a.st.uid !== null) fact.owner_uid = a.st.uid;
    if (a.st.gid !== null) fact.owner_gid = a.st.gid;
  }
  if (!a.connected) return fact;
  if (a.sendError) addError(fact, a.sendError, "send_");
  const text = bytesToBinary(a.reply);
  if (text.startsWith("HTTP/")) {
    setBytesField(fact, "status_line", binaryToBytes(text.split(/[\r\n]/)[0]));
    const api = httpHeader(text, "Api-Version");
    const server = httpHeader(text, "Server");
    if (api) setBytesField(fact, "api_version", binaryToBytes(api));
    if (server) setBytesField(fact, "server", binaryToBytes(server));
    return fact;
  }
  fact.reply_bytes = a.reply.length;  // no HTTP/1 answer: silence, a close, or another protocol
  fact.h2 = a.h2;
  return fact;
}

// net.unix's shape (net_unix.cc SocketFact): ok (connected), step and errno of the failed step;
// a stat the runtime refused is stat_errno + stat_denied_by, and a connect that went through
// all the same proves the socket (exists, is_socket, socket_proven_by "connect").
function netUnixFact(a) {
  const fact = { family: "net.unix", path: a.path };
  if (a.statError && !runtimeRefusal(a.statError)) return fail(fact, "stat", a.statError);
  if (a.statError) addError(fact, a.statError, "stat_");
  if (a.st) {
    fact.exists = true;
    fact.is_socket = a.st.kind === "socket";
    if (!fact.is_socket) return addSocketAnswer(a, fail(fact, "stat", new ProbeError("ENOTSOCK")));
  }
  if (!a.connected) return addSocketAnswer(a, fail(fact, "connect", a.connectError));
  fact.ok = true;
  if (!a.st) Object.assign(fact, { exists: true, is_socket: true, socket_proven_by: "connect" });
  return addSocketAnswer(a, fact);
}

// priv.runtime_sockets' shape (priv_host.cc): exists, errno of the stat when it failed, kind,
// connect_ok and the failed step's errno; a refused stat as net.unix says it.
function runtimeSocketFact(a, source) {
  const fact = { family: "priv.runtime_sockets", source, path: a.path };
  if (a.statError && !runtimeRefusal(a.statError)) {
    fact.exists = false;
    addError(fact, a.statError);
    return fact;
  }
  if (a.statError) {
    addError(fact, a.statError, "stat_");
    if (!a.connected) {
      fact.exists = false;
      fact.step = "connect";
      addError(fact, a.connectError);
      return fact;
    }
    Object.assign(fact, { exists: true, kind: "socket", socket_proven_by: "connect", connect_ok: true });
    return addSocketAnswer(a, fact);
  }
  fact.exists = true;
  fact.kind = a.st.nativeKind;
  if (a.st.kind === "socket") {
    fact.connect_ok = a.connected;
    if (!a.connected) {
      fact.step = "connect";
      addError(fact, a.connectError);
    }
  }
  return addSocketAnswer(a, fact);
}

// The probe's credentials the host weighs a mode refusal by (AddSocketScanSummary): from
// /proc/self/status as the kernel says them; where the runtime refuses that, its own calls;
// nothing where it refuses those too (Deno without --allow-sys): the host then knows no groups.
async function socketCaller() {
  const status = await readSmallText("/proc/self/status", 64 * 1024);
  const field = (name) => new RegExp(`^${name}:[ \\t]*([^\\n]*)$`, "m").exec(status ?? "")?.[1]
    ?.split(/[ \t]+/).filter((v) => v !== "");
  const [uids, gids, groups] = [field("Uid"), field("Gid"), field("Groups")];
  if (uids && gids && groups) {
    return { euid: Number(uids[1]), egid: Number(gids[1]), groups: groups.map(Number).slice(0, kMaxGroups) };
  }
  try {
    return { euid: process.geteuid(), egid: process.getegid(), groups: process.getgroups().slice(0, kMaxGroups) };
  } catch {
    return {};
  }
}

// The scan both socket families run (FindUnixSockets, then TryUnixSockets): the listed paths,
// then the discovered ones, all tried at once as natively (a silent listener costs one wait,
// not one each). -> {attempts, found, summary keys}.
async function scanAndTrySockets(walkDevs, paths) {
  const walk = { mounts: 0, dirs: 0, entries: 0, truncated: false, procNetUnix: 0, foundTruncated: false };
  const refusals = scanRefusals();
  const found = await findUnixSockets(walkDevs, paths, walk, refusals);
  const attempts = await Promise.all([...paths, ...found.map((f) => f.path)].map((path) => attemptSocket(path)));
  const summary = { walk: { mounts: walk.mounts, dirs: walk.dirs, entries: walk.entries, truncated: walk.truncated },
                    proc_net_unix: walk.procNetUnix, found: found.length, found_truncated: walk.foundTruncated,
                    ...(await socketCaller()) };
  if (refusals.count > 0) {
    summary.refused = refusals.count;
    setBytesField(summary, "refused_path", refusals.path);
    addError(summary, refusals.error, "refused_");
  }
  return { attempts, found, summary };
}

async function runNetUnix(ctx, args) {
  const { walkDevs, paths: given } = splitSocketArgs("net.unix", args);
  const paths = [...kRuntimeSocketPaths];
  for (const path of given) if (!paths.includes(path)) paths.push(path);
  const { attempts, found, summary } = await scanAndTrySockets(walkDevs, paths);
  attempts.forEach((attempt, i) => {
    const fact = netUnixFact(attempt);
    if (i >= paths.length) Object.assign(fact, { variant: "found", source: found[i - paths.length].source });
    ctx.emit(fact);
  });
  ctx.emit({ family: "net.unix", variant: "summary", path: "", ...summary });
}

// priv.runtime_sockets (priv_host.cc): the listed paths (sorted, once each) and every socket
// the scan found, one fact each in this family's shape, then a summary.
async function runPrivRuntimeSockets(ctx, args) {
  const { walkDevs, paths: given } = splitSocketArgs("priv.runtime_sockets", args);
  const paths = [...new Set(given)].sort((a, b) => compareBytes(utf8.encode(a), utf8.encode(b)));  // std::sort's order
  const { attempts, found, summary } = await scanAndTrySockets(walkDevs, paths);
  attempts.forEach((attempt, i) => {
    ctx.emit(runtimeSocketFact(attempt, i < paths.length ? "list" : found[i - paths.length].source));
  });
  ctx.emit({ family: "priv.runtime_sockets", summary: true, paths: attempts.length, ...summary });
}

const kMaxInterfaces = 256;

function failedSource(step, error) {
  const out = { ok: false, step };
  addError(out, error);
  return out;
}

// net.ifaces (net_ifaces.cc): the interfaces from /proc/net/dev and /sys/class/net, reported
// apart. The third native source, a raw netlink RTM_GETLINK dump, has no API in either
// runtime: "netlink" is {ok: false, step: "socket", errno: "ENOSYS", note}, and the host falls
// back to the other two as it does when a seccomp filter refuses AF_NETLINK.
async function runNetIfaces(ctx) {
  const summary = { family: "net.ifaces", summary: true };
  summary.netlink = failedSource("socket", new ProbeError("ENOSYS", "no raw netlink socket in a JS runtime"));
  const dev = await readSmallFileOrError("/proc/net/dev", 64 * 1024);
  if (dev.bytes) {
    const names = [];
    bytesToBinary(dev.bytes).split("\n").forEach((row, line) => {
      const colon = row.indexOf(":");
      if (line < 2 || colon < 0 || names.length >= kMaxInterfaces) return;
      const first = row.search(/[^ ]/);
      if (first < colon) names.push(utf8Lossy.decode(binaryToBytes(row.slice(first, colon))));
    });
    summary.proc_net_dev = { ok: true, names };
  } else {
    summary.proc_net_dev = failedSource("open", dev.error);
  }
  try {
    const names = (await RT.readDirNames("/sys/class/net", kMaxInterfaces)).map((n) => utf8Lossy.decode(n));
    const macs = {};
    for (const name of names) {
      const mac = await readSmallText(`/sys/class/net/${name}/address`, 64);
      if (mac !== null) macs[name] = mac.replace(/[\n ]+$/, "");
    }
    summary.sys_class_net = { ok: true, names, macs };
  } catch (error) {
    summary.sys_class_net = failedSource("opendir", error);
  }
  ctx.emit(summary);
}

const kDnsRcodes = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"];

function canaryQueryName(nonce) {
  return `${nonce.slice(0, 63)}.sandprobe.test`;
}

function dnsQueryId(nonce) {
  let id = 0x5350;
  for (const byte of utf8.encode(nonce)) id = (id * 31 + byte) & 0xffff;
  return id;
}

function buildDnsQuery(id, name) {
  const bytes = [id >> 8, id & 0xff, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0];
  for (const label of name.split(".")) {
    const encoded = utf8.encode(label).subarray(0, 63);
    if (encoded.length === 0) continue;
    bytes.push(encoded.length, ...encoded);
  }
  bytes.push(0x00, 0x00, 0x01, 0x00, 0x01);  // root, type A, class IN
  return Uint8Array.from(bytes);
}

// {valid, rcode, aRecords} (net_dns.cc ParseDnsReply).
function parseDnsReply(p, id) {
  const reply = { valid: false, rcode: -1, aRecords: [] };
  if (p.length < 12 || ((p[0] << 8) | p[1]) !== id || (p[2] & 0x80) === 0) return reply;
  reply.valid = true;
  reply.rcode = p[3] & 0x0f;
  const get16 = (at) => (p[at] << 8) | p[at + 1];
  const skipName = (at) => {
    for (let labels = 0; labels < 128 && at < p.length; ++labels) {
      const len = p[at];
      if (len === 0) return at + 1;
      if ((len & 0xc0) === 0xc0) return at + 2 <= p.length ? at + 2 : -1;
      at += 1 + len;
    }
    return -1;
  };
  const questions = get16(4);
  const answers = get16(6);
  let at = 12;
  for (let i = 0; i < questions && i < 4 && at >= 0; ++i) {
    at = skipName(at);
    if (at >= 0) at += 4;
  }
  for (let i = 0; i < answers && i < 16; ++i) {
    if (at < 0) break;
    at = skipName(at);
    if (at < 0 || at + 10 > p.length) break;
    const type = get16(at);
    const rdlen = get16(at + 8);
    at += 10;
    if (at + rdlen > p.length) break;
    if (type === 1 && rdlen === 4) reply.aRecords.push(Array.from(p.subarray(at, at + 4)).join("."));
    at += rdlen;
  }
  return reply;
}

async function askDns(ctx, ep) {
  const qname = canaryQueryName(ctx.nonce);
  const fact = { family: "net.dns", path: ep.name, server: ep.text, qname, nonce: ctx.nonce };
  const id = dnsQueryId(ctx.nonce);
  const query = buildDnsQuery(id, qname);
  const result = await udpExchange(ep, query, fact);
  if (result.step) return fail(fact, result.step, result.error);
  fact.sent = query.length;
  if (result.reply === null) return fail(fact, "reply", result.replyError ?? new ProbeError("ETIMEDOUT"));
  const reply = parseDnsReply(result.reply, id);
  if (!reply.valid) return fail(fact, "reply", new ProbeError("EBADMSG"));
  fact.ok = true;
  fact.rcode = reply.rcode < 6 ? kDnsRcodes[reply.rcode] : String(reply.rcode);
  fact.answers = reply.aRecords;
  return fact;
}

// Deno's node:dgram throws a bind refusal from a later tick instead of emitting "error"
// (it would end the probe as an uncaught exception); while a UDP step is pending, such an
// exception fails that step instead.
let asyncErrorSink = null;
async function trapAsyncErrors(promise) {
  let rejectStep;
  const trapped = new Promise((_, reject) => { rejectStep = reject; });
  asyncErrorSink = rejectStep;
  try {
    return await Promise.race([promise, trapped]);
  } finally {
    asyncErrorSink = null;
  }
}

// ---------------------------------------------------------------------------------------------
// The egress lab (net_lab.cc): net.lab NAME... and net.bypass VARIANT=SPELLING... Each name is
// resolved by the runtime's own resolver (node:dns lookup: getaddrinfo, so the sandbox's
// resolv.conf, the lab's, answers), then one HTTP request "GET /sandprobe/NONCE[/VARIANT]" with
// "Host: NAME" goes to port 80 of the first documentation-range address. The lab's sinks record
// what arrived; the host judges by that, never by these facts.
//
// Safety, as natively: nothing is resolved unless every nameserver in /etc/resolv.conf is in a
// documentation range (the lab's resolver), and nothing is connected to unless an address the
// resolver gave is in one. Deno connects by name (its --allow-net judges names) and resolves
// again: the address it reached is checked before a byte is sent. Deno.resolveDns is not used:
// it needs a grant for the nameserver itself, which an allowlist of names does not give.

const kMaxLabNames = 512;
const kLabHostChars = /^[A-Za-z0-9.-]{1,253}$/;
const kLabSpellingChars = /^[A-Za-z0-9.:%@-]{1,253}$/;

// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32 (an IPv4-mapped address counts
// by its IPv4 part).
function inDocumentationRange(address) {
  const text = address.toLowerCase().replace(/%.*$/, "");  // a zone id says nothing of the range
  if (isIPv4(text)) return /^(192\.0\.2|198\.51\.100|203\.0\.113)\./.test(text);
  if (!isIPv6(text)) return false;
  const mapped = /^::ffff:([0-9.]+)$/.exec(text);
  if (mapped) return inDocumentationRange(mapped[1]);
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1], 16);
    const lo = parseInt(hexMapped[2], 16);
    return inDocumentationRange(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  const first = text.split(":");
  return first.length > 2 && parseInt(first[0] || "0", 16) === 0x2001 && parseInt(first[1] || "0", 16) === 0xdb8;
}

// null when every nameserver of /etc/resolv.conf is a documentation-range address, else
// {errno, detail, ...}: why the probe will not resolve.
async function resolverOutsideLab() {
  const read = await readSmallFileOrError("/etc/resolv.conf", 65536);
  if (read.error) return { step: "resolv.conf", ...classifyError(read.error), detail: "/etc/resolv.conf: unreadable" };
  let servers = 0;
  for (const line of utf8Lossy.decode(read.bytes).split("\n")) {
    const words = line.trim().split(/\s+/);
    if (words.length < 2 || words[0] !== "nameserver") continue;
    if (++servers > 64) break;
    if (!inDocumentationRange(words[1])) {
      return { step: "resolv.conf", errno: "EPERM", detail: `/etc/resolv.conf names nameserver ${words[1]}, not a lab resolver` };
    }
  }
  return servers === 0 ? { step: "resolv.conf", errno: "EPERM", detail: "/etc/resolv.conf names no nameserver" } : null;
}

// getaddrinfo's error by its macro's name, from the runtime's error code (Node says ENOTFOUND
// for EAI_NONAME).
const kGaiCodes = { ENOTFOUND: "EAI_NONAME", ENODATA: "EAI_NODATA", ESERVFAIL: "EAI_FAIL", ETIMEOUT: "EAI_AGAIN" };

function gaiErrorName(error) {
  const code = typeof error?.code === "string" ? error.code : "";
  if (kGaiCodes[code]) return kGaiCodes[code];
  if (/^EAI_[A-Z]+$/.test(code)) return code;
  return "";
}

function refusedAs(error) {
  const refusal = RT.lookupRefusal(error);
  return refusal ? new RuntimeRefusal(refusal, error.message) : error;
}

// Every address the runtime's resolver gives for `name` (dns.lookup: getaddrinfo), in order.
function lookupAll(name) {
  return new Promise((resolve, reject) => {
    try {
      dns.lookup(name, { all: true, verbatim: true }, (error, found) => (error ? reject(refusedAs(error)) : resolve(found)));
    } catch (error) {
      reject(refusedAs(error));
    }
  });
}

// The HTTP exchange on a connected Conn: the request, then the status code of the reply.
async function labExchange(conn, request, fact) {
  try {
    await conn.write(utf8.encode(request));
  } catch (error) {
    return fail(fact, "send", error);
  }
  fact.sent = true;
  let reply;
  try {
    reply = await conn.read(128, kNetWaitMs);
  } catch (error) {
    return fail(fact, "recv", error);
  }
  if (reply === null) return fail(fact, "recv", new ProbeError("ETIMEDOUT"));
  if (reply.length === 0) return fail(fact, "recv", new ProbeError("ENODATA"));  // closed unanswered
  const status = /^HTTP\/1\.[0-9] ([0-9]+)/.exec(utf8Lossy.decode(reply));
  if (!status) return fail(fact, "recv", new ProbeError("EBADMSG"));  // not HTTP
  fact.ok = true;
  fact.status = Number(status[1]);
  return fact;
}

// The proxy of "--proxy env|http://..." (net_lab_proxy.h): {spec, host, port, address,
// authorization} or {spec, refuse}. Used only at a loopback or lab address; "localhost" is
// 127.0.0.1 (no name is resolved for it). NO_PROXY is not consulted.
const kProxyVariables = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

function findLabProxy(spec) {
  if (!spec) return null;
  let url = spec;
  if (spec === "env") {
    let env;
    try {
      env = new Map(RT.envEntries());
    } catch (error) {
      return { spec, refuse: `--proxy env: the environment is unreadable (${classifyError(error).errno})` };
    }
    url = kProxyVariables.map((name) => env.get(name)).find((value) => value) ?? "";
    if (!url) return { spec, refuse: "no http_proxy, HTTP_PROXY, all_proxy or ALL_PROXY in the environment" };
  }
  const refuse = (why) => ({ spec, refuse: `--proxy ${spec}: ${why}` });
  if (!url.startsWith("http://")) return refuse("not an http:// proxy URL");
  let rest = url.slice(7).replace(/\/$/, "");
  if (rest.includes("/")) return refuse("a proxy URL with a path");
  let authorization = "";
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    let userinfo = rest.slice(0, at);
    try { userinfo = decodeURIComponent(userinfo); } catch { /* kept as written */ }
    authorization = `Basic ${btoa(userinfo)}`;
    rest = rest.slice(at + 1);
  }
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::([0-9]{1,5}))?$/.exec(rest);
  if (!m) return refuse(`not HOST[:PORT]: ${rest}`);
  const port = Number(m[3] ?? "80");
  if (port === 0 || port > 65535) return refuse(`not a port: ${m[3]}`);
  let host = m[1] ?? m[2];
  if (host === "localhost") host = "127.0.0.1";
  if (!isIPv4(host) && !isIPv6(host)) return refuse(`the proxy's host is a name other than localhost (never resolved): ${host}`);
  const address = m[1] ? `[${host}]:${port}` : `${host}:${port}`;
  const loopback = /^127\./.test(host) || host === "::1";
  if (!loopback && !inDocumentationRange(host)) return refuse(`the proxy ${address} is neither loopback nor a lab address`);
  return { spec, host, port, address, authorization };
}

// The request as a forward-proxy request: the proxy resolves and connects.
async function labThroughProxy(proxy, connectHost, host, target, fact) {
  fact.proxy = proxy.address;
  let conn;
  try {
    conn = await connectWithin(RT.tcpConnect(proxy.host, proxy.port), kNetWaitMs);
  } catch (error) {
    return fail(fact, "connect", error);
  }
  try {
    const authorization = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : "";
    if (connectHost === host) {
      return await labExchange(conn, `GET http://${host}${target} HTTP/1.1\r\nHost: ${host}\r\n${authorization}` +
        "User-Agent: sandprobe\r\nConnection: close\r\n\r\n", fact);
    }
    // Fronting: a CONNECT to connectHost:80, then the request for `host` inside the tunnel.
    await labExchange(conn, `CONNECT ${connectHost}:80 HTTP/1.1\r\nHost: ${connectHost}:80\r\n${authorization}\r\n`, fact);
    if (!fact.ok) return fact;
    if (fact.status !== 200) return fail(fact, "connect", new ProbeError("EACCES"));  // the proxy refused it
    delete fact.status;
    return await labExchange(conn, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: sandprobe\r\nConnection: close\r\n\r\n`, fact);
  } finally {
    conn.close();
  }
}

// One attempt: `family` "net.lab" (arg NAME) or "net.bypass" (arg VARIANT=SPELLING).
async function tryLabName(ctx, family, arg, refuse, proxy) {
  const eq = arg.indexOf("=");
  const path = eq < 0 ? arg : arg.slice(0, eq);
  const spelling = eq < 0 ? arg : arg.slice(eq + 1);
  // As natively: "NAME@HOST" connects to NAME and sends Host HOST (fronting); a first label
  // "NONCE" is the launch's nonce (DNS exfiltration), also looked up when a proxy is declared.
  const at = spelling.indexOf("@");
  let name = at < 0 ? spelling : spelling.slice(0, at);
  const nonceName = name.startsWith("NONCE.");
  if (nonceName) name = ctx.nonce + name.slice(5);
  const target = `/sandprobe/${ctx.nonce}${eq < 0 ? "" : `/${path}`}`;
  const fact = { family, path, nonce: ctx.nonce };
  if (eq >= 0) fact.spelling = spelling;
  if (refuse) {
    const { step, detail, ...error } = refuse;
    return Object.assign(fact, { ok: false, step, ...error, detail });
  }
  // Host as a client writes it for that URL: an IPv6 literal in brackets, a zone's "%" as "%25".
  const connectHost = name.includes(":") ? `[${name.replace("%", "%25")}]` : name;
  const host = at < 0 ? connectHost : spelling.slice(at + 1);
  if (proxy) {
    if (nonceName) {
      try {
        await withTimeout(lookupAll(name), 2 * kNetWaitMs);
      } catch (error) {
        const gai = gaiErrorName(error);
        if (gai) fact.gai_error = gai;
      }
    }
    return labThroughProxy(proxy, connectHost, host, target, fact);
  }
  let found;
  try {
    found = await withTimeout(lookupAll(name), 2 * kNetWaitMs);
    if (found === kTimedOut) throw Object.assign(new Error("lookup timed out"), { code: "EAI_AGAIN" });
  } catch (error) {
    fact.ok = false;
    fact.step = "resolve";
    const gai = gaiErrorName(error);
    if (gai) fact.gai_error = gai;
    else addError(fact, error);
    return fact;
  }
  fact.resolved = found.slice(0, 16).map((a) => a.address);
  const lab = found.find((a) => inDocumentationRange(a.address));
  if (!lab) return fail(fact, "address", new ProbeError("EPERM"));  // never connected: not a lab address
  fact.address = lab.address;
  let conn;
  try {
    conn = await connectWithin(RT.labConnect(name, lab.address, 80), kNetWaitMs);
  } catch (error) {
    return fail(fact, "connect", error);
  }
  try {
    if (RT.labConnectsBy === "name") {
      // The runtime resolved the name again: send nothing to an address outside the lab.
      fact.address = conn.remoteAddress();
      if (!inDocumentationRange(fact.address)) return fail(fact, "address", new ProbeError("EPERM"));
    }
    return await labExchange(conn,
      `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: sandprobe\r\nConnection: close\r\n\r\n`, fact);
  } finally {
    conn.close();
  }
}

// A leading "--proxy env|http://..." split off: {spec, rest} or {error}.
function splitLabProxyArgs(family, args) {
  if (args[0] !== "--proxy") return { spec: "", rest: args };
  if (args.length < 2 || (args[1] !== "env" && !args[1].startsWith("http://"))) {
    return { error: `${family}: --proxy needs env or an http:// URL` };
  }
  return { spec: args[1], rest: args.slice(2) };
}

function checkNetLabArgs(all) {
  const split = splitLabProxyArgs("net.lab", all);
  if (split.error) return split.error;
  const args = split.rest;
  if (args.length === 0) return "net.lab: no host names";
  if (args.length > kMaxLabNames) return "net.lab: more than 512 host names";
  const bad = args.find((name) => !kLabHostChars.test(name));
  return bad === undefined ? "" : `net.lab: not a host name: ${bad}`;
}

function checkNetBypassArgs(all) {
  const split = splitLabProxyArgs("net.bypass", all);
  if (split.error) return split.error;
  const args = split.rest;
  if (args.length === 0) return "net.bypass: no VARIANT=SPELLING";
  if (args.length > kMaxLabNames) return "net.bypass: more than 512 spellings";
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq < 0 || !kLabHostChars.test(arg.slice(0, eq)) || !kLabSpellingChars.test(arg.slice(eq + 1))) {
      return `net.bypass: not VARIANT=SPELLING (a host name or a numeric address): ${arg}`;
    }
  }
  return "";
}

async function runNetLab(ctx, family, all) {
  const { spec, rest } = splitLabProxyArgs(family, all);
  const proxy = findLabProxy(spec);
  const refuse = (await resolverOutsideLab()) ??
    (proxy?.refuse ? { step: "proxy", errno: "EPERM", detail: proxy.refuse } : null);
  for (const arg of rest) ctx.emit(await tryLabName(ctx, family, arg, refuse, proxy));
}

// ---------------------------------------------------------------------------------------------
// Resources (resource_*.cc). Each runs in its own exclusive launch; every loop stops at its
// ceiling.

async function addFileReading(fact, key, path) {
  const text = await readSmallText(path, 4096);
  if (text === null || text === "") return;  // unreadable or empty: no reading, as natively
  const line = text.split("\n")[0].slice(0, 128);
  fact[key] = parseInteger(line) ?? line;
}

const kMemoryArgs = { "ceiling-mib": kMaxMemoryCeilingMib, "every-mib": 1024 };

// res.memory, in the probe's own process: neither runtime can fork, and a child runtime
// would need the subprocess permission the sandbox may withhold. 1 MiB ArrayBuffers with
// every page written, kept until the ceiling; an allocation failure is "ENOMEM". An OOM kill
// therefore ends the probe itself (no result frame): the progress frames every K MiB are the
// measurement then, as natively when the whole sandbox is killed. "in_process": true says so.
async function runResMemory(ctx, args) {
  const { numbers } = parseResourceArgs("res.memory", args, kMemoryArgs);
  const ceiling = numbers["ceiling-mib"];
  const every = numbers["every-mib"] ?? 8;
  const result = { family: "res.memory", kind: "result", ceiling_mib: ceiling, in_process: true };
  const start = monotonicMs();
  let blocks = [];
  let reached = 0;
  let stoppedBy = "ceiling";
  for (let mib = 1; mib <= ceiling; ++mib) {
    deadline.check();
    let block;
    try {
      block = new Uint8Array(kMib);
    } catch (error) {
      stoppedBy = error instanceof RangeError ? "ENOMEM" : classifyError(error).errno;
      break;
    }
    for (let off = 0; off < kMib; off += kPageBytes) block[off] = 1;
    blocks.push(block);
    reached = mib;
    if (mib % every === 0) {
      ctx.emit({ family: "res.memory", kind: "progress", mib });
      await sleep(0);  // lets the deadline's timer run
    }
  }
  blocks = null;
  Object.assign(result, { ok: true, ms: monotonicMs() - start, reached_mib: reached, stopped_by: stoppedBy });
  await addFileReading(result, "cgroup_memory_limit_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes");
  await addFileReading(result, "cgroup_memsw_limit_bytes", "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes");
  await addFileReading(result, "cgroup_memory_max_usage_bytes", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes");
  await addFileReading(result, "cgroup_memory_failcnt", "/sys/fs/cgroup/memory/memory.failcnt");
  await addFileReading(result, "cgroup2_memory_max", "/sys/fs/cgroup/memory.max");
  ctx.emit(result);
}

const kCpuArgs = {
  "threads": kMaxCpuThreads, "window-ms": kMaxCpuWindowMs, "min-periods": 100,
  "stop-above-mc": kMaxCpuThreads * 1000, "edge-ms": 1000, "min-window-ms": kMaxCpuWindowMs,
};

// A decimal that fits int64 (strtoll's range), as a Number where exact, else a BigInt (the JSON
// writer prints its digits: cgroup v1's "no limit" is 9223372036854771712); null otherwise.
function parseInteger(text) {
  if (!/^[+-]?[0-9]+$/.test(text)) return null;
  const n = BigInt(text);
  if (n > 0x7fffffffffffffffn || n < -0x8000000000000000n) return null;
  return Number.isSafeInteger(Number(n)) ? Number(n) : n;
}

// "nr_periods 52\n..." -> {nr_periods: 52, ...}: integer values only, at most 64 keys.
function parseCgroupKeyValues(text) {
  const out = {};
  for (const line of text.split("\n").slice(0, 64)) {
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const n = parseInteger(line.slice(space + 1));
    if (n !== null) out[line.slice(0, space)] = n;
  }
  return out;
}

function parseCpuMax(text) {
  const f = text.split("\n")[0].split(" ");
  if (f.length !== 2) return null;
  const period = parseInteger(f[1]);
  const quota = f[0] === "max" ? -1 : parseInteger(f[0]);
  return quota === null || period === null ? null : { quota_us: quota, period_us: period };
}

// The probe's cgroup path in the v1 "cpu" hierarchy or the v2 one, from /proc/self/cgroup.
function ownCgroupPath(text, v2) {
  for (const line of text.split("\n").slice(0, 4096)) {
    const f = line.split(":");
    if (f.length < 3) continue;
    const path = line.slice(f[0].length + f[1].length + 2);
    if (v2 ? f[0] === "0" && f[1] === "" : f[1].split(",").includes("cpu")) return path;
  }
  return null;
}

// ResolveCpuCgroup (resource_cpu_cgroup.cc): the v1 cpu hierarchy, else v2, and our directory.
function resolveCpuCgroup(mountinfo, v1Path, v2Path) {
  let v2 = null;
  for (const line of mountinfo.split("\n").slice(0, 4096)) {
    const dash = line.indexOf(" - ");
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(" ");
    const post = line.slice(dash + 3).split(" ");
    if (pre.length < 5 || post.length < 3) continue;
    const isV1 = post[0] === "cgroup" && post[2].split(",").includes("cpu");
    const isV2 = post[0] === "cgroup2";
    const own = isV1 ? v1Path : v2Path;
    if ((!isV1 && !isV2) || own === null) continue;
    const root = pre[3];
    const mountpoint = pre[4];
    const dir = { version: isV1 ? 1 : 2, mountpoint, cgroupPath: own, dir: mountpoint, resolved: true };
    if (root === "/") dir.dir = mountpoint + (own === "/" ? "" : own);
    else if (own.startsWith(root)) dir.dir = mountpoint + own.slice(root.length);
    else if (own !== "/") dir.resolved = false;
    if (isV1) return dir;
    v2 ??= dir;
  }
  return v2;
}

async function readCpuQuota(at, dir) {
  if (at.version === 2) {
    const text = await readSmallText(`${dir}/cpu.max`, 4096);
    return text === null ? null : parseCpuMax(text);
  }
  const quota = await readSmallText(`${dir}/cpu.cfs_quota_us`, 4096);
  const period = await readSmallText(`${dir}/cpu.cfs_period_us`, 4096);
  const q = quota === null ? null : parseInteger(quota.split("\n")[0]);
  const p = period === null ? null : parseInteger(period.split("\n")[0]);
  return q === null || p === null ? null : { quota_us: q, period_us: p };
}

async function findCpuCgroup() {
  const mountinfo = await readSmallText("/proc/self/mountinfo", kMaxMountinfoBytes);
  const cgroups = await readSmallText("/proc/self/cgroup", 65536);
  if (mountinfo === null || cgroups === null) return null;
  return resolveCpuCgroup(mountinfo, ownCgroupPath(cgroups, false), ownCgroupPath(cgroups, true));
}

async function describeCpuCgroup(at) {
  const out = { version: at.version, dir: at.dir, cgroup_path: at.cgroupPath, resolved: at.resolved };
  out.quota = await readCpuQuota(at, at.dir);
  let tightest = -1;
  let dir = at.dir;
  for (let i = 0; i < 32 && dir.length > at.mountpoint.length; ++i) {
    dir = dir.slice(0, dir.lastIndexOf("/"));
    const quota = await readCpuQuota(at, dir);
    if (!quota || quota.quota_us <= 0 || quota.period_us <= 0) continue;
    const cores = quota.quota_us / quota.period_us;
    if (tightest < 0 || cores < tightest) {
      tightest = cores;
      out.ancestor_quota = { ...quota, dir };
    }
  }
  const own = out.quota;
  const ownBinds = own && own.quota_us > 0 && own.period_us > 0 &&
                   (tightest < 0 || own.quota_us / own.period_us <= tightest);
  out.stat_dir = tightest < 0 || ownBinds ? at.dir : out.ancestor_quota.dir;
  return out;
}

async function readCpuStat(dir) {
  const text = await readSmallText(`${dir}/cpu.stat`, 65536);
  return text ? parseCgroupKeyValues(text) : null;
}

// The window: `periods` CFS periods when the quota and its counters are readable, else window_ms.
function cpuWindowMs(cgroup, statReadable, windowMs, periods) {
  if (periods <= 0 || !statReadable || cgroup === null || !cgroup.quota) return windowMs;
  const binding = cgroup.ancestor_quota && cgroup.stat_dir === cgroup.ancestor_quota.dir
    ? cgroup.ancestor_quota : cgroup.quota;
  const periodMs = Math.trunc(binding.period_us / 1000);
  return Math.min(Math.max(periods * Math.max(periodMs, 1), 100), windowMs);
}

// /proc/self/status Cpus_allowed_list, counted (what sched_getaffinity gives natively).
// The CPUs of a kernel cpu list ("0-3,6"), or null when it is not one.
function countCpuList(list) {
  let count = 0;
  for (const range of list.trim().split(",")) {
    const [lo, hi] = range.split("-").map(Number);
    if (!Number.isInteger(lo) || (hi !== undefined && !(Number.isInteger(hi) && hi >= lo))) return null;
    count += hi !== undefined ? hi - lo + 1 : 1;
  }
  return count;
}

async function affinityCpus() {
  const text = await readSmallText("/proc/self/status", 65536);
  const line = text?.split("\n").find((l) => l.startsWith("Cpus_allowed_list:"));
  return line ? countCpuList(line.split(":")[1]) : null;
}

// The kernel's online CPUs, from where glibc's sysconf(_SC_NPROCESSORS_ONLN) reads them (the
// native probe's online_cpus): /sys/devices/system/cpu/online, else the cpuN lines of
// /proc/stat (a sandbox without /sys); null when neither can be read (Deno without read
// permission there: the key is left out, never guessed).
async function onlineCpus() {
  const list = await readSmallText("/sys/devices/system/cpu/online", 4096);
  if (list !== null) return countCpuList(list);
  const stat = await readSmallText("/proc/stat", 1 << 20);
  return stat === null ? null : stat.split("\n").filter((line) => /^cpu[0-9]+ /.test(line)).length;
}

// The kernel that keeps the clocks res.cpu reads (priv_context.cc KernelContext): the host
// compares each identity signal with its own (families/kernel_identity.h). What the runtime
// refuses is that key's errno with its denied_by and runtime_error (Deno without --allow-sys
// or read access to /proc; Node's fs permission for the /proc files), never a guess.
async function kernelContext() {
  const kernel = {};
  try {
    Object.assign(kernel, RT.uname());
  } catch (error) {
    addError(kernel, error, "uname_");
  }
  const firstLine = async (key, path, max) => {
    const { bytes, error } = await readSmallFileOrError(path, max);
    if (!bytes) return addError(kernel, error, `${key}_`);
    const end = bytes.indexOf(10);
    setBytesField(kernel, key, bytes.subarray(0, end < 0 ? bytes.length : end));
  };
  await firstLine("proc_version", "/proc/version", 1024);
  await firstLine("boot_id", "/proc/sys/kernel/random/boot_id", 64);
  try {
    kernel.boot_time_ms = Math.round(Date.now() - RT.uptimeSeconds() * 1000);
  } catch (error) {
    addError(kernel, error, "boot_time_");
  }
  try {
    kernel.nsfs_dev = devString((await RT.stat("/proc/self/ns/user")).dev);
  } catch (error) {
    addError(kernel, error, "nsfs_");
  }
  return kernel;
}

// res.cpu: N workers spin on a shared flag while the probe sleeps out the window; CPU time
// over wall time is the effective number of cores. The window starts once the workers run
// (a JS worker takes tens of ms to start; a pthread does not).
async function runResCpu(ctx, args) {
  const { numbers } = parseResourceArgs("res.cpu", args, kCpuArgs);
  const threads = numbers.threads ?? 2;
  const result = { family: "res.cpu", kind: "result", threads, kernel: await kernelContext() };
  const affinity = await affinityCpus();
  if (affinity !== null) result.affinity_cpus = affinity;
  const online = await onlineCpus();
  if (online !== null && online > 0) result.online_cpus = online;
  let cgroup = null;
  let statBefore = null;
  const at = await findCpuCgroup();
  if (at) {
    cgroup = await describeCpuCgroup(at);
    statBefore = await readCpuStat(cgroup.stat_dir);
  }
  const windowMs = cpuWindowMs(cgroup, statBefore !== null, numbers["window-ms"] ?? 2000, numbers["min-periods"] ?? 0);
  result.window_ms = windowMs;

  // [0]: stop flag, [1]: workers spinning.
  const shared = new Int32Array(new SharedArrayBuffer(8));
  const body = "const flag = new Int32Array(shared); Atomics.add(flag, 1, 1);" +
               " while (Atomics.load(flag, 0) === 0) {}";
  const workers = [];
  let createError = null;
  for (let i = 0; i < threads; ++i) {
    try {
      workers.push(RT.startWorker(RT.workerSource(body), shared.buffer));
    } catch (error) {
      createError = error;
      break;
    }
  }
  const readyBy = monotonicMs() + kWorkerStartMs;
  while (Atomics.load(shared, 1) < workers.length && monotonicMs() < readyBy) await sleep(5);
  const cpuBefore = RT.cpuSeconds();
  const start = monotonicMs();
  const stop = { aboveMc: numbers["stop-above-mc"] ?? 0, edgeMs: numbers["edge-ms"] ?? 0, minMs: numbers["min-window-ms"] ?? 0 };
  const stoppedEarly = await sleepOutWindow(windowMs, stop, cpuBefore, start);
  Atomics.store(shared, 0, 1);
  const wall = (monotonicMs() - start) / 1000;
  const cpu = RT.cpuSeconds() - cpuBefore;
  for (const worker of workers) await worker.stop();
  result.threads_started = Atomics.load(shared, 1);
  if (stop.aboveMc > 0) result.stopped_early = stoppedEarly;
  if (createError) addError(result, createError, "create_");
  Object.assign(result, { cpu_seconds: cpu, wall_seconds: wall, effective_cores: wall > 0 ? cpu / wall : 0 });
  if (cgroup) {
    cgroup.stat_before = statBefore;
    cgroup.stat_after = await readCpuStat(cgroup.stat_dir);
    result.cpu_cgroup = cgroup;
  }
  ctx.emit(result);
}

// SleepOutWindow (resource_cpu.cc): to the end of the window, or the first checkpoint from
// the minimum window on where the CPU time exceeds `aboveMc` millicores over the elapsed time
// plus the edge. Bounded: one sleep per 100 ms checkpoint.
async function sleepOutWindow(windowMs, stop, cpuBefore, start) {
  let at = stop.aboveMc > 0 ? Math.min(Math.max(stop.minMs, kCpuCheckpointMs), windowMs) : windowMs;
  for (;;) {
    await sleep(at - (monotonicMs() - start));
    if (at >= windowMs) return false;
    const cpuMs = (RT.cpuSeconds() - cpuBefore) * 1000;
    const elapsed = monotonicMs() - start;
    if (cpuMs * 1000 > stop.aboveMc * (elapsed + stop.edgeMs)) return true;
    at = Math.min(at + kCpuCheckpointMs, windowMs);
  }
}

// res.wall: sleeps N seconds, a progress frame every 250 ms counted from the start.
async function runResWall(ctx, args) {
  const { numbers } = parseResourceArgs("res.wall", args, { "ceiling-seconds": kMaxWallSeconds });
  const seconds = numbers["ceiling-seconds"];
  const start = monotonicMs();
  for (let step = 1; step * kWallProgressMs <= seconds * 1000; ++step) {
    await sleep(start + step * kWallProgressMs - monotonicMs());
    ctx.emit({ family: "res.wall", kind: "progress", elapsed_ms: monotonicMs() - start });
  }
  ctx.emit({ family: "res.wall", kind: "result", ceiling_seconds: seconds,
             elapsed_ms: monotonicMs() - start, stopped_by: "ceiling" });
}

// ---------------------------------------------------------------------------------------------
// Persistence (persist.cc). The background process is this probe file run again by the same
// runtime in its sleeper mode (`--persist-sleeper SECONDS persist.plant TOKEN`), detached:
// neither runtime can fork, and its argv carries "persist.plant" and the token as the native
// one's does. Where the runtime refuses to start processes, the fact says so (ok false).

function isToken(token) {
  return /^[A-Za-z0-9]{1,64}$/.test(token);
}

function parsePersistArgs(family, args) {
  const out = { token: "", backgroundSeconds: 0, keep: false, dirs: [] };
  let i = 0;
  while (i < args.length && args[i].startsWith("--")) {
    if (args[i] === "--keep" && family === "persist.check") {
      out.keep = true;
      ++i;
      continue;
    }
    if (i + 1 >= args.length) return { error: `${family}: ${args[i]}: missing value` };
    if (args[i] === "--token") {
      out.token = args[i + 1];
    } else if (args[i] === "--background-seconds" && family === "persist.plant") {
      const n = /^[+-]?[0-9]+$/.test(args[i + 1]) ? Number(args[i + 1]) : NaN;
      if (!(n >= 0 && n <= kMaxBackgroundSeconds)) {
        return { error: `${family}: --background-seconds: 0..${kMaxBackgroundSeconds}` };
      }
      out.backgroundSeconds = n;
    } else {
      return { error: `${family}: unknown option ${args[i]}` };
    }
    i += 2;
  }
  if (!isToken(out.token)) return { error: `${family}: --token: 1-64 characters of [A-Za-z0-9]` };
  out.dirs = args.slice(i);
  const bad = out.dirs.find((d) => d !== "@home" && d !== "@cwd" && !d.startsWith("/"));
  if (bad !== undefined) return { error: `${family}: not an absolute path (nor @home, @cwd): ${bad}` };
  if (out.dirs.length > kMaxPathsPerFamily) return { error: `${family}: too many paths` };
  return { error: "", ...out };
}

// "@home" is $HOME and "@cwd" the working directory; {dir: "" , error} when not resolvable.
function resolveDir(dir) {
  if (dir === "@cwd") {
    try {
      return { dir: RT.cwd() };
    } catch (error) {
      return { dir: "", error };
    }
  }
  if (dir !== "@home") return { dir };
  try {
    const home = RT.envEntries().find(([name]) => name === "HOME")?.[1] ?? "";
    return { dir: home.startsWith("/") ? home : "" };
  } catch (error) {
    return { dir: "", error };
  }
}

function tokenFile(dir, token, fact) {
  const resolved = resolveDir(dir);
  if (resolved.dir !== dir) fact.resolved = resolved.dir;
  if (resolved.dir === "") return { file: "", error: resolved.error ?? new ProbeError("ENOENT") };
  return { file: `${resolved.dir === "/" ? "" : resolved.dir}/.sandprobe-persist-${token}` };
}

// Marks fact.same_as when `dir` is a directory seen before under another name.
function sameDirectory() {
  const seen = [];
  return async (dir, fact) => {
    const resolved = resolveDir(dir).dir;
    if (resolved === "") return;
    let st;
    try {
      st = await RT.stat(resolved);
    } catch {
      return;
    }
    const match = seen.find((s) => s.dev === st.dev && s.ino === st.ino);
    if (match) fact.same_as = match.dir;
    else seen.push({ dev: st.dev, ino: st.ino, dir });
  };
}

async function runPersistPlant(ctx, args) {
  const parsed = parsePersistArgs("persist.plant", args);
  const markSame = sameDirectory();
  for (const dir of parsed.dirs) {
    const fact = { family: "persist.plant", path: dir };
    const { file, error } = tokenFile(dir, parsed.token, fact);
    await markSame(dir, fact);
    let ok = false;
    if (file === "") {
      addError(fact, error);
    } else {
      try {
        const handle = await RT.createTruncNoFollow(file);
        try {
          const bytes = utf8.encode(parsed.token);
          ok = (await handle.write(bytes)) === bytes.length;
          if (!ok) addError(fact, new ProbeError("ENOSPC"));
        } finally {
          await handle.close();
        }
      } catch (e) {
        addError(fact, e);
      }
    }
    fact.ok = ok;
    ctx.emit(fact);
  }
  if (parsed.backgroundSeconds > 0) {
    const fact = { family: "persist.plant", path: "background-process" };
    try {
      const { program, args: argv } =
        RT.rerunSelf(["--persist-sleeper", String(parsed.backgroundSeconds), "persist.plant", parsed.token]);
      // argv0: the host recognises planted processes by a program name ending in
      // "sandprobe-probe" (Node can set it; Deno.Command cannot).
      const child = await RT.spawn(program, argv, { detached: true, argv0: "sandprobe-probe" });
      child.unref();
      fact.ok = true;
      fact.pid = child.pid;
    } catch (error) {
      fact.ok = false;
      addError(fact, error);
    }
    ctx.emit(fact);
  }
}

// Pids (other than ours) whose argv holds both "persist.plant" and the token. A /proc that
// cannot be listed, or cmdlines the runtime refuses, are reported on `fact` (JS-only keys).
async function findPlanted(token, fact) {
  const found = [];
  let pids = [];
  try {
    pids = await listPids();
  } catch (error) {
    addError(fact, error, "proc_");
    return found;
  }
  const refusals = refusalCounter();
  const self = String(RT.pid());
  for (const pid of pids.slice(0, kMaxPids)) {
    if (pid === self) continue;
    const { bytes, error } = await readSmallFileOrError(`/proc/${pid}/cmdline`, kMaxCmdlineBytes);
    refusals.note(error);
    if (!bytes || bytes.length === 0) continue;
    const argv = utf8Lossy.decode(bytes).split("\0");
    if (argv.includes("persist.plant") && argv.includes(token)) found.push(Number(pid));
  }
  refusals.report(fact);
  return found;
}

async function runPersistCheck(ctx, args) {
  const parsed = parsePersistArgs("persist.check", args);
  const markSame = sameDirectory();
  for (const dir of parsed.dirs) {
    const fact = { family: "persist.check", path: dir };
    const { file, error } = tokenFile(dir, parsed.token, fact);
    await markSame(dir, fact);
    let handle = null;
    try {
      if (file === "") throw error;
      handle = await RT.openReadNoFollow(file);
    } catch (e) {
      fact.present = false;
      addError(fact, e);
    }
    if (handle) {
      const buffer = new Uint8Array(80);
      let n = 0;
      try {
        n = await handle.read(buffer);
      } catch { /* unreadable: not present */ }
      await handle.close();
      fact.present = n > 0 && utf8Lossy.decode(buffer.subarray(0, n)) === parsed.token;
      if (!parsed.keep) {
        try {
          await RT.unlink(file);
          fact.removed = true;
        } catch {
          fact.removed = false;
        }
      }
    }
    ctx.emit(fact);
  }
  const fact = { family: "persist.check", path: "background-process" };
  const alive = await findPlanted(parsed.token, fact);
  Object.assign(fact, { present: alive.length > 0, pids: alive });
  if (!parsed.keep) {
    for (const pid of alive) {
      try {
        RT.kill(pid, "SIGKILL");  // ours: it carries this run's token
      } catch (error) {
        addError(fact, error, "kill_");
      }
    }
  }
  ctx.emit(fact);
}

// ---------------------------------------------------------------------------------------------
// Runtime-only families (probes/js/README.md has their facts).

function checkAbsoluteList(family, usage, paths) {
  if (paths.length === 0) return `${family}: usage: ${family} ${usage}`;
  if (paths.length > kMaxRuntimeArgs) return `${family}: more than ${kMaxRuntimeArgs} arguments`;
  const bad = paths.find((p) => !p.startsWith("/"));
  return bad === undefined ? "" : `${family}: not an absolute path: ${bad}`;
}

// The program is absolute (no PATH search); its arguments are anything.
function checkSubprocessArgs(args) {
  return checkAbsoluteList("rt.subprocess", "PROGRAM [ARG...]", args.slice(0, 1)) ||
    (args.length > kMaxRuntimeArgs ? `rt.subprocess: more than ${kMaxRuntimeArgs} arguments` : "");
}

// rt.subprocess PROGRAM [ARG...]: start it once (stdio to /dev/null), wait at most 2 s, kill
// it after that.
async function runRtSubprocess(ctx, args) {
  const [program, ...rest] = args;
  const fact = { family: "rt.subprocess", path: program, api: RT.apis.spawn };
  let child;
  try {
    child = await RT.spawn(program, rest);
  } catch (error) {
    ctx.emit(fail(fact, "spawn", error));
    return;
  }
  fact.ok = true;
  fact.pid = child.pid;
  const status = await withTimeout(child.wait(), kSubprocessWaitMs);
  if (status === kTimedOut) {
    child.kill();
    fact.timed_out = true;
  } else {
    fact.exit_code = status.code;
    if (status.signal) fact.signal = status.signal;
  }
  ctx.emit(fact);
}

// rt.ffi LIBRARY...: load each native library through the runtime's FFI (Deno.dlopen with no
// symbols; Node's process.dlopen, the addon loader) and call nothing in it.
async function runRtFfi(ctx, args) {
  for (const path of args) {
    const fact = { family: "rt.ffi", path, api: RT.apis.dlopen };
    try {
      const loaded = RT.dlopen(path);
      fact.ok = true;
      fact.loaded = true;
      if (loaded.addon !== undefined) fact.addon = loaded.addon;
    } catch (error) {
      fail(fact, "dlopen", error);
    }
    ctx.emit(fact);
  }
}

// ---------------------------------------------------------------------------------------------
// The family table: the native names and usage lines, and the JS-only rt.* families.

const FAMILIES = [
  { name: "fs.read", usage: "PATH...", check: (a) => checkPathList("fs.read", a), run: runFsRead },
  { name: "fs.write", usage: "DIR...", check: (a) => checkPathList("fs.write", a), run: runFsWrite },
  { name: "fs.alias", usage: "--scratch DIR PATH...", check: checkFsAliasArgs, run: runFsAlias },
  { name: "fs.mounts", usage: "", check: (a) => (a.length ? "fs.mounts: takes no arguments" : ""), run: runFsMounts },
  { name: "env.secret", usage: "PREFIX", check: checkEnvSecretArgs, run: runEnvSecret },
  { name: "net.tcp", usage: "NAME=ADDR:PORT...", check: (a) => checkEndpointArgs("net.tcp", a),
    run: async (ctx, a) => { for (const arg of a) ctx.emit(await tryTcp(ctx, parseEndpoint(arg))); } },
  { name: "net.udp", usage: "NAME=ADDR:PORT...", check: (a) => checkEndpointArgs("net.udp", a),
    run: async (ctx, a) => { for (const arg of a) ctx.emit(await tryUdp(ctx, parseEndpoint(arg))); } },
  { name: "net.dns", usage: "NAME=ADDR:PORT...", check: (a) => checkEndpointArgs("net.dns", a),
    run: async (ctx, a) => { for (const arg of a) ctx.emit(await askDns(ctx, parseEndpoint(arg))); } },
  { name: "net.unix", usage: "[--walk-devs MAJOR:MINOR,...] [PATH...]", check: checkNetUnixArgs, run: runNetUnix },
  { name: "net.ifaces", usage: "", check: (a) => (a.length ? "net.ifaces: takes no arguments" : ""), run: runNetIfaces },
  { name: "net.lab", usage: "[--proxy env|URL] NAME...", check: checkNetLabArgs, run: (ctx, a) => runNetLab(ctx, "net.lab", a) },
  { name: "net.bypass", usage: "[--proxy env|URL] VARIANT=SPELLING...", check: checkNetBypassArgs, run: (ctx, a) => runNetLab(ctx, "net.bypass", a) },
  { name: "priv.runtime_sockets", usage: "[--walk-devs MAJOR:MINOR,...] PATH...",
    check: (a) => splitSocketArgs("priv.runtime_sockets", a).error ?? "", run: runPrivRuntimeSockets },
  { name: "res.memory", usage: "--ceiling-mib N [--every-mib K]",
    check: (a) => parseResourceArgs("res.memory", a, kMemoryArgs).error, run: runResMemory },
  { name: "res.cpu", usage: "[--threads N] [--window-ms MS] [--min-periods K] [--stop-above-mc H] [--edge-ms E] [--min-window-ms W]",
    check: (a) => parseResourceArgs("res.cpu", a, kCpuArgs).error, run: runResCpu },
  { name: "res.wall", usage: "--ceiling-seconds N",
    check: (a) => parseResourceArgs("res.wall", a, { "ceiling-seconds": kMaxWallSeconds }).error, run: runResWall },
  { name: "persist.plant", usage: "--token T [--background-seconds N] DIR...",
    check: (a) => parsePersistArgs("persist.plant", a).error, run: runPersistPlant },
  { name: "persist.check", usage: "--token T [--keep] DIR...",
    check: (a) => parsePersistArgs("persist.check", a).error, run: runPersistCheck },
  { name: "rt.subprocess", usage: "PROGRAM [ARG...]", check: checkSubprocessArgs, run: runRtSubprocess },
  { name: "rt.ffi", usage: "LIBRARY...", check: (a) => checkAbsoluteList("rt.ffi", "LIBRARY...", a), run: runRtFfi },
];

// ---------------------------------------------------------------------------------------------
// Main (probe_main.cc).

function isUsableNonce(nonce) {
  return nonce.length >= 1 && nonce.length <= kMaxNonceLength && /^[A-Za-z0-9_-]+$/.test(nonce);
}

// {error} or {nonce, deadlineMs, steps}.
function parseInvocation(argv) {
  let i = 0;
  let nonce = null;
  let deadlineMs = kDefaultDeadlineMs;
  let controlPath = "";
  for (; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg !== "--nonce" && arg !== "--deadline-ms" && arg !== "--control") break;
    if (i + 1 >= argv.length) return { error: `${arg}: missing value` };
    const value = argv[++i];
    if (arg === "--control") {
      if (value === "") return { error: "--control: empty path" };
      controlPath = value;
    } else if (arg === "--nonce") {
      if (!isUsableNonce(value)) return { error: "--nonce: must be 1-128 characters of [A-Za-z0-9_-]" };
      nonce = value;
    } else {
      const ms = /^[+-]?[0-9]+$/.test(value) ? Number(value) : NaN;
      if (!(ms > 0 && ms <= kMaxDeadlineMs)) {
        return { error: `--deadline-ms: not a positive number of milliseconds (at most 24 h): ${value}` };
      }
      deadlineMs = ms;
    }
  }
  if (nonce === null) return { error: "--nonce is required" };
  if (i >= argv.length) return { error: "no family given" };
  const steps = [];
  while (i < argv.length) {
    const name = argv[i++];
    const family = FAMILIES.find((row) => row.name === name);
    if (!family) return { error: `unknown family: ${name}` };
    const args = [];
    while (i < argv.length && argv[i] !== "--next") args.push(argv[i++]);
    const error = family.check(args);
    if (error) return { error };
    steps.push({ family, args });
    if (i < argv.length && ++i >= argv.length) return { error: "--next: no family follows" };
  }
  return { nonce, deadlineMs, controlPath, steps };
}

function usage(error) {
  return `sandprobe-probe: ${error}\n` +
    "usage: sandprobe-probe --nonce NONCE [--deadline-ms MS] [--control PATH] FAMILY ARGS... [--next FAMILY ARGS...]...\n" +
    "families:\n" + FAMILIES.map((row) => `  ${row.name} ${row.usage}\n`).join("");
}

// The frame channel: one write(2) per frame; a failed write is reported on stderr and the
// probe carries on (frame.cc).
function frameWriter(nonce) {
  return (fact) => {
    const line = utf8.encode(`@@sandprobe ${nonce} ${toJson(fact)}\n`);
    let done = 0;
    while (done < line.length) {
      let n;
      try {
        n = RT.writeOut(line.subarray(done));
      } catch (error) {
        try { RT.writeErr(`sandprobe-probe: write(stdout): ${classifyError(error).errno}\n`); } catch { /* gone */ }
        return;
      }
      if (!(n > 0)) return;
      done += n;
    }
  };
}

function helloFact() {
  const hello = { family: "hello", pid: RT.pid(), runtime: "js", runtime_version: RT.version,
                  build_id: BUILD_ID, families: FAMILIES.map((row) => row.name) };
  try {
    Object.assign(hello, RT.ids());
  } catch (error) {
    // Deno without --allow-sys: the ids are unknown, never guessed
    Object.assign(hello, { uid: null, euid: null, gid: null });
    addError(hello, error, "ids_");
  }
  try {
    hello.cwd = RT.cwd();
  } catch (error) {
    hello.cwd = null;
    addError(hello, error, "cwd_");
  }
  return hello;
}

// The answer to the launch's fresh control (contract/launch_control.h): SHA-256(nonce ||
// the file's content, read as fs.read reads it), or why it could not be read.
async function answerControl(inv, hello) {
  if (!inv.controlPath) return;
  const c = await readPathContent(inv.controlPath);
  if (c.ok && c.kind !== "dir") {
    const nonce = utf8.encode(inv.nonce);
    hello.control_sha256 = await sha256Hex(concatBytes([nonce, c.hashed], nonce.length + c.hashed.length));
  } else if (c.ok) {
    Object.assign(hello, { control_step: "open", control_errno: "EISDIR" });
  } else {
    Object.assign(hello, { control_step: c.step, control_errno: classifyError(c.error).errno });
  }
}

// The sleeper the persistence family starts: sleeps, bounded, and exits; no frames.
async function persistSleeper(argv) {
  const seconds = Math.min(Math.max(Number(argv[1]) || 0, 0), kMaxBackgroundSeconds);
  await sleep(seconds * 1000);
  RT.exit(0);
}

async function main() {
  const argv = RT.args;
  if (argv.length === 1 && argv[0] === "--families") {
    RT.writeOut(utf8.encode(FAMILIES.map((row) => `${row.name}\n`).join("")));
    return 0;
  }
  if (argv[0] === "--persist-sleeper") return persistSleeper(argv);
  const inv = parseInvocation(argv);
  if (inv.error) {
    RT.writeErr(usage(inv.error));
    return 2;
  }
  deadline.arm(inv.deadlineMs);
  const emit = frameWriter(inv.nonce);
  const ctx = { emit, nonce: inv.nonce };
  const hello = helloFact();
  await answerControl(inv, hello);
  emit(hello);
  for (const step of inv.steps) await step.family.run(ctx, step.args);
  emit({ done: true });
  return 0;
}

// An exception or rejection that escapes is a probe bug: stderr, exit 1, never a done frame.
function internalError(error) {
  try { RT.writeErr(`sandprobe-probe: internal error: ${error?.stack ?? error}\n`); } catch { /* gone */ }
  RT.exit(1);
}
process.on("uncaughtException", (error) => (asyncErrorSink ? asyncErrorSink(error) : internalError(error)));
process.on("unhandledRejection", internalError);

try {
  RT.exit(await main());
} catch (error) {
  internalError(error);
}
