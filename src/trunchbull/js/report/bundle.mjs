// Bundles the HTML report's front end (src/trunchbull/report/html/web/) with
// the pinned esbuild, its libraries (Observable Plot, TanStack Table and
// Virtual) resolved from the toolchain's node_modules. Usage (node/protocol.py:
// REPORT_BUNDLER):
//   bundle.mjs ENTRY.js  ->  stdout: ok <TAB> {"js": "...", "css": "..."}, or fatal <TAB> { message }
import { createRequire } from "node:module";
import { join } from "node:path";

const toolchain = process.env.TRUNCHBULL_TOOLCHAIN;
if (!toolchain) {
  process.stderr.write("TRUNCHBULL_TOOLCHAIN is not set\n");
  process.exit(2);
}
const esbuild = createRequire(join(toolchain, "package.json"))("esbuild");

try {
  const result = await esbuild.build({
    entryPoints: [process.argv[2]],
    bundle: true,
    minify: true,
    format: "iife",
    platform: "browser",
    target: ["chrome109", "firefox115", "safari16"],
    nodePaths: [join(toolchain, "node_modules")],
    write: false,
    outdir: "out",
    charset: "utf8",
    legalComments: "eof",
    logLevel: "silent",
  });
  const text = (ext) => result.outputFiles.filter((f) => f.path.endsWith(ext)).map((f) => f.text).join("\n");
  process.stdout.write(`ok\t${JSON.stringify({ js: text(".js"), css: text(".css") })}\n`); // node/protocol.py
} catch (err) {
  const messages = (err.errors || [{ text: String(err && err.message) }]).map((m) =>
    m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}` : m.text);
  process.stdout.write(`fatal\t${JSON.stringify({ message: messages.join("\n") })}\n`);
  process.exitCode = 1;
} finally {
  await esbuild.stop?.();
}
