// Writes the npm packages of tool-contracts for one platform and packs them:
//
//   node packaging/npm/build.mjs --version 0.1.0 --target x86_64-unknown-linux-gnu \
//        --binary target/release/tool-contracts --out target/packages/npm
//
// gives OUT/tool-contracts-VERSION.tgz (the launcher, whose optionalDependencies name every
// platform's package at VERSION) and OUT/tool-contracts-<platform>-VERSION.tgz (the binary
// for TARGET). The version is the crate's, passed in by packaging/build.sh: no package file
// holds a version of its own. The release workflow runs it once per target and publishes the
// platform packages before the main one.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    if (!key.startsWith("--") || argv[i + 1] === undefined) {
      throw new Error(`build.mjs: expected --version, --target, --binary and --out, each with a value; got \`${argv.slice(i).join(" ")}\``);
    }
    out[key.slice(2)] = argv[i + 1];
  }
  for (const key of ["version", "target", "binary", "out"]) {
    if (!out[key]) throw new Error(`build.mjs: --${key} is required`);
  }
  return out;
}

const { version, target, binary, out } = args();
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) throw new Error(`build.mjs: \`${version}\` is not a semver version`);
const { platforms } = JSON.parse(readFileSync(path.join(here, "platforms.json"), "utf8"));
const platform = platforms.find((p) => p.target === target);
if (!platform) {
  throw new Error(`build.mjs: no platform package for the target \`${target}\`; packaging/npm/platforms.json lists ${platforms.map((p) => p.target).join(", ")}`);
}

const common = {
  version,
  license: "MIT OR Apache-2.0",
  homepage: "https://example.invalid/tool-contracts",
  repository: { type: "git", url: "https://example.invalid/tool-contracts" },
};
const outDir = path.resolve(out);
mkdirSync(outDir, { recursive: true });

function pack(dir) {
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", outDir], { cwd: dir, encoding: "utf8" }).trim().split("\n").pop();
  process.stdout.write(`${path.join(outDir, name)}\n`);
}

// The platform package: the binary and nothing else.
const exe = platform.os === "win32" ? "tool-contracts.exe" : "tool-contracts";
const platformDir = path.join(outDir, "src", platform.package.replace("/", "__"));
rmSync(platformDir, { recursive: true, force: true });
mkdirSync(path.join(platformDir, "bin"), { recursive: true });
copyFileSync(path.resolve(binary), path.join(platformDir, "bin", exe));
chmodSync(path.join(platformDir, "bin", exe), 0o755);
const platformManifest = {
  name: platform.package,
  description: `The tool-contracts binary for ${platform.target}; installed by the tool-contracts package.`,
  ...common,
  os: [platform.os],
  cpu: [platform.cpu],
  ...(platform.libc ? { libc: [platform.libc] } : {}),
  files: [`bin/${exe}`],
  preferUnplugged: true,
};
writeFileSync(path.join(platformDir, "package.json"), `${JSON.stringify(platformManifest, null, 2)}\n`);
writeFileSync(path.join(platformDir, "README.md"), `# ${platform.package}\n\nThe \`tool-contracts\` binary for \`${platform.target}\`. Install \`tool-contracts\` instead: it picks this package on this platform.\n`);
pack(platformDir);

// The main package: the launcher, which runs the platform package's binary.
const mainDir = path.join(outDir, "src", "tool-contracts");
rmSync(mainDir, { recursive: true, force: true });
mkdirSync(path.join(mainDir, "bin"), { recursive: true });
copyFileSync(path.join(here, "launcher.js"), path.join(mainDir, "bin", "tool-contracts.js"));
chmodSync(path.join(mainDir, "bin", "tool-contracts.js"), 0o755);
copyFileSync(path.join(here, "platforms.json"), path.join(mainDir, "bin", "platforms.json"));
copyFileSync(path.join(root, "tool-contracts-cli", "README.md"), path.join(mainDir, "README.md"));
const mainManifest = {
  name: "tool-contracts",
  description: "Versioned, enforced output contracts for MCP tools: audit, pin and enforce any MCP server's tool contracts.",
  ...common,
  bin: { "tool-contracts": "bin/tool-contracts.js" },
  files: ["bin/"],
  engines: { node: ">=18" },
  optionalDependencies: Object.fromEntries(platforms.map((p) => [p.package, version])),
};
writeFileSync(path.join(mainDir, "package.json"), `${JSON.stringify(mainManifest, null, 2)}\n`);
pack(mainDir);
