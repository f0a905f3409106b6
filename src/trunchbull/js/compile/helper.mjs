// Trusted Node helper of the compiler: reads static configs and bundles
// modules with esbuild. It never imports user code (inspect.mjs does that, in
// a sandboxed process). Protocol: one JSON request per stdin line, one
// message per stdout line (handle, below); or `helper.mjs REQUEST.json` for a
// single request.
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, renameSync, existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { readStaticConfig } from "./static_config.mjs";
import { regularFilesOnly } from "./regular_files.mjs";

const toolchain = process.env.TRUNCHBULL_TOOLCHAIN;
if (!toolchain) {
  process.stderr.write("TRUNCHBULL_TOOLCHAIN is not set\n");
  process.exit(2);
}
const requireTool = createRequire(join(toolchain, "package.json"));
// esbuild runs its service as a child process and does not wait for it when
// stopped: the helper keeps hold of it, so as to exit only after it.
const childProcess = requireTool("node:child_process");
const services = [];
const spawn = childProcess.spawn;
childProcess.spawn = function (...args) {
  const child = spawn.apply(this, args);
  services.push(child);
  return child;
};
// Resolves once the child has exited and been reaped (esbuild unrefs it when
// idle, which would let Node exit without waiting: it is ref'd again here).
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.ref();
  return new Promise((done) => child.once("exit", done));
}
const esbuild = requireTool("esbuild");
const parser = requireTool("@babel/parser");

// The config's text comes from the compiler, which reads only regular files.
function configOp({ source }) {
  return readStaticConfig(parser, source);
}

function esbuildMessage(m) {
  const where = m.location ? { file: m.location.file, line: m.location.line, col: m.location.column + 1 } : {};
  const notRegular = m.detail && m.detail.notRegular;
  return { ...where, message: m.text, hint: m.notes && m.notes.length ? m.notes.map((n) => n.text).join("; ") : undefined,
    ...(notRegular ? { notRegular } : {}) };
}

async function bundleOne(entry, { absWorkingDir, outDir }) {
  try {
    const result = await esbuild.build({
      entryPoints: [entry],
      absWorkingDir,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node22",
      packages: "external",
      write: false,
      metafile: true,
      outfile: "bundle.mjs",
      charset: "utf8",
      legalComments: "none",
      logLevel: "silent",
      plugins: [regularFilesOnly()],
    });
    const file = result.outputFiles.find((f) => f.path.endsWith(".mjs"));
    const sha256 = createHash("sha256").update(file.contents).digest("hex");
    const bundleFile = join(outDir, `${sha256}.mjs`);
    if (!existsSync(bundleFile)) {
      const tmp = `${bundleFile}.${process.pid}.tmp`;
      writeFileSync(tmp, file.contents);
      renameSync(tmp, bundleFile);
    }
    return {
      entry,
      ok: true,
      sha256,
      bundleFile,
      inputs: Object.keys(result.metafile.inputs).sort(),
      imports: Object.fromEntries(Object.entries(result.metafile.inputs).map(([input, info]) => [
        input,
        info.imports.filter((i) => !i.external).map((i) => ({ path: i.path, original: i.original })),
      ])),
      warnings: result.warnings.map(esbuildMessage),
    };
  } catch (err) {
    if (err.errors) return { entry, ok: false, errors: err.errors.map(esbuildMessage) };
    return { entry, ok: false, errors: [{ message: String(err && err.message) }] };
  }
}

async function bundleOp({ entries, absWorkingDir, outDir }) {
  mkdirSync(outDir, { recursive: true });
  return { results: await Promise.all(entries.map((e) => bundleOne(e, { absWorkingDir, outDir }))) };
}

const OPS = { config: configOp, bundle: bundleOp };

// One message (node/protocol.py: HELPER): ok <TAB> answer, or fatal <TAB> { message }.
async function handle(request) {
  const op = OPS[request.op];
  if (!op) return `fatal\t${JSON.stringify({ message: `unknown op ${request.op}` })}\n`;
  try {
    return `ok\t${JSON.stringify(await op(request))}\n`;
  } catch (err) {
    return `fatal\t${JSON.stringify({ message: String((err && err.stack) || err) })}\n`;
  }
}

// Stops esbuild's service, waits for it to exit, and exits (skipping the
// teardown of the heap: nothing is pending).
async function exit(code) {
  await esbuild.stop?.();
  await Promise.all(services.map(exited));
  process.exit(code);
}
// SIGTERM (the command was interrupted) ends the helper the same way.
process.on("SIGTERM", () => exit(143));

if (process.argv[2]) {
  process.stdout.write(await handle(JSON.parse(readFileSync(process.argv[2], "utf8"))));
  await exit(0);
} else {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    process.stdout.write(await handle(JSON.parse(line)));
  }
  await exit(0);
}
