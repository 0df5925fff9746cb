#!/usr/bin/env node
// Runs the tool-contracts binary of this platform. The binary travels inside one of the
// per-platform packages listed in optionalDependencies; npm installs only the one whose
// `os`, `cpu` and `libc` match, so nothing is downloaded at install time.
"use strict";

const { spawn } = require("node:child_process");
const { platforms } = require("./platforms.json");

function libc() {
  if (process.platform !== "linux") return undefined;
  // glibc reports its version in the process report; musl does not.
  const report = typeof process.report?.getReport === "function" ? process.report.getReport() : null;
  return report?.header?.glibcVersionRuntime ? "glibc" : "musl";
}

function binaryPath() {
  const wanted = platforms.filter(
    (p) => p.os === process.platform && p.cpu === process.arch && (p.libc === undefined || p.libc === libc()),
  );
  const exe = process.platform === "win32" ? "tool-contracts.exe" : "tool-contracts";
  for (const p of wanted) {
    try {
      return require.resolve(`${p.package}/bin/${exe}`);
    } catch {
      // Not installed: try the next candidate.
    }
  }
  const names = wanted.map((p) => p.package).join(" or ") || "(none is built for this platform)";
  process.stderr.write(
    `tool-contracts: no binary for ${process.platform}-${process.arch}${libc() ? `-${libc()}` : ""}: ` +
      `the package ${names} is not installed.\n` +
      "npm skips optional dependencies with --no-optional or --omit=optional; install again without it, " +
      "or install that package by name.\n",
  );
  process.exit(2);
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });
// A client that stops its server signals this process: the binary gets the same signal.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => {
  process.stderr.write(`tool-contracts: cannot run the binary: ${err.message}\n`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that a parent sees what the binary saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
