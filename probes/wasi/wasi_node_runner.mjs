#!/usr/bin/env node
// sandprobe-wasi-node-runner: runs a WASI (snapshot preview1) command module under Node's
// node:wasi, giving the guest exactly what the command line names and nothing else: the
// directories to preopen, the environment, the arguments. It is the sandbox of the wasi-node
// profiles (sandboxes/wasi-node*.json), written the way an embedder uses node:wasi.
//
//   node sandprobe-wasi-node-runner.mjs [--preopen GUEST=HOST]... [--env NAME=VALUE]...
//        [--inherit-env] [--deadline-ms MS] -- MODULE.wasm [ARGS...]
//   node sandprobe-wasi-node-runner.mjs --version
//
// --preopen   a host directory the guest may reach, under the guest path GUEST (repeatable);
//             none: the guest reaches no file at all
// --env       one variable of the guest's environment (repeatable); none: an empty environment
// --inherit-env  the guest gets this process's whole environment (what an embedder does when it
//             writes `env: process.env`): the leaky twin's mistake, never the strict profile's
// --deadline-ms  the guest runs in a worker thread and the runner ends it after MS milliseconds
//             if it has not ended itself: "deadline reached" on stderr, exit 124 (the probe
//             contract's deadline exit), no more output. For a guest stuck in one host call
//             (node:wasi runs the guest synchronously: without a worker no timer could fire);
//             the sandprobe probe checks its own --deadline-ms in its loops before that.
// The module itself is read by the runner, on the host side: it is not a preopen. The guest's
// argv[0] is the module's file name. The exit code is the guest's (proc_exit), or 70 with a
// message on stderr when the module cannot be loaded or traps.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { WASI } from 'node:wasi';
import { Worker, isMainThread, workerData } from 'node:worker_threads';

const EXIT_RUNNER_FAILED = 70;
const EXIT_DEADLINE = 124;  // contract/exit_code.h kExitProbeDeadline
const MAX_DEADLINE_MS = 24 * 3600 * 1000;

function fail(message) {
  process.stderr.write(`sandprobe-wasi-node-runner: ${message}\n`);
  process.exit(EXIT_RUNNER_FAILED);
}

function parse(argv) {
  const options = { preopens: {}, env: {}, inheritEnv: false, deadlineMs: null, module: null, args: [] };
  let i = 0;
  for (; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--') {
      ++i;
      break;
    }
    const value = argv[i + 1];
    if (arg === '--preopen' || arg === '--env') {
      if (value === undefined) fail(`${arg}: missing value`);
      const eq = value.indexOf('=');
      if (eq <= 0) fail(`${arg} ${value}: expected NAME=VALUE`);
      const [name, rest] = [value.slice(0, eq), value.slice(eq + 1)];
      if (arg === '--preopen') {
        if (!name.startsWith('/') || !rest.startsWith('/')) fail(`--preopen ${value}: both paths must be absolute`);
        if (name in options.preopens) fail(`--preopen ${name}: given twice`);
        options.preopens[name] = rest;
      } else {
        options.env[name] = rest;
      }
      ++i;
    } else if (arg === '--inherit-env') {
      options.inheritEnv = true;
    } else if (arg === '--deadline-ms') {
      const ms = /^[0-9]+$/.test(value ?? '') ? Number(value) : NaN;
      if (!(ms > 0 && ms <= MAX_DEADLINE_MS)) fail(`--deadline-ms ${value}: not a positive number of milliseconds (at most 24 h)`);
      options.deadlineMs = ms;
      ++i;
    } else {
      fail(`unknown option ${arg} (the module comes after --)`);
    }
  }
  if (i >= argv.length) fail('no module given (after --)');
  options.module = argv[i];
  options.args = argv.slice(i + 1);
  return options;
}

// Runs the guest to its end in this thread; returns its exit code (or fails, exit 70).
async function runGuest(options) {
  let bytes;
  try {
    bytes = readFileSync(options.module);
  } catch (error) {
    fail(`read ${options.module}: ${error.code ?? error.message}`);
  }
  const wasi = new WASI({
    version: 'preview1',
    args: [basename(options.module), ...options.args],
    env: options.inheritEnv ? { ...process.env, ...options.env } : options.env,
    preopens: options.preopens,
    returnOnExit: true,
  });
  try {
    const module = await WebAssembly.compile(bytes);
    const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
    return wasi.start(instance);
  } catch (error) {
    fail(`${options.module}: ${error.message}`);
  }
}

// The guest in a worker, ended with the whole process at the deadline. The guest writes its
// stdout/stderr through the process's own descriptors (node:wasi), not through the worker's
// streams, so nothing it wrote waits in a buffer when the process ends.
function runGuestWithDeadline(options) {
  const worker = new Worker(new URL(import.meta.url), { workerData: options, stdout: false, stderr: false });
  const timer = setTimeout(() => {
    process.stderr.write(`sandprobe-wasi-node-runner: deadline of ${options.deadlineMs} ms reached, stopping the guest\n`);
    process.exit(EXIT_DEADLINE);
  }, options.deadlineMs);
  worker.on('error', (error) => fail(`${options.module}: ${error.message}`));
  worker.on('exit', (code) => {
    clearTimeout(timer);
    process.exit(code);
  });
}

if (!isMainThread) {
  process.exit(await runGuest(workerData));
} else {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`sandprobe-wasi-node-runner: node ${process.version}, node:wasi preview1\n`);
    process.exit(0);
  }
  const options = parse(argv);
  if (options.deadlineMs === null) {
    process.exitCode = await runGuest(options);
  } else {
    runGuestWithDeadline(options);
  }
}
