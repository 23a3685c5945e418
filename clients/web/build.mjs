// Builds the widget: generates the glossator.v1 messages (buf + the locked protoc-gen-es), then
// bundles with esbuild, tree-shaken and minified, two ways: dist/glossator-widget.js (an IIFE for
// the <script> embed) and dist/glossator-widget.mjs (the module the Docusaurus plugin imports).
// Prints each file's size, gzipped, and what the embed is made of.
//   node build.mjs            (buf from $BUF, else the repository's .venv, else PATH)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const venvBuf = join(root, ".venv", "bin", "buf");
const buf = process.env.BUF ?? (existsSync(venvBuf) ? venvBuf : "buf");
execFileSync(buf, ["generate", "--template", relative(root, join(here, "buf.gen.yaml"))], { cwd: root, stdio: "inherit" });

const common = { bundle: true, minify: true, target: "es2020", legalComments: "none", metafile: true };
const embed = await build({ ...common, entryPoints: [join(here, "src/embed.ts")], outfile: join(here, "dist/glossator-widget.js"), format: "iife" });
await build({ ...common, entryPoints: [join(here, "src/index.ts")], outfile: join(here, "dist/glossator-widget.mjs"), format: "esm" });

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} kB`;
for (const name of ["glossator-widget.js", "glossator-widget.mjs"]) {
  const bytes = readFileSync(join(here, "dist", name));
  console.log(`dist/${name}: ${kb(bytes.length)}, ${kb(gzipSync(bytes, { level: 9 }).length)} gzipped`);
}
const parts = {};
for (const output of Object.values(embed.metafile.outputs)) {
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const part = input.includes("src/gen/") ? "generated glossator.v1" : input.match(/node_modules\/(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? "widget";
    parts[part] = (parts[part] ?? 0) + bytesInOutput;
  }
}
console.log("embed, minified, by origin:", Object.entries(parts).map(([part, bytes]) => `${part} ${kb(bytes)}`).join(", "));
