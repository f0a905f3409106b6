// Dependency inference for the Trunchbull Pants plugin: the import specifiers
// of ONE module, as esbuild (the bundler of the compile steps) sees them.
// Every import is marked external, so the file is scanned alone (its imports
// need not be in the sandbox); Pants resolves the local ones to files.
// Usage: node scan_imports.mjs FILE  ->  stdout: {"imports":[{path,kind}],"errors":[...]}
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const toolchain = resolve(process.env.TRUNCHBULL_TOOLCHAIN || ".");
const esbuild = createRequire(join(toolchain, "package.json"))("esbuild");
const file = process.argv[2];
const imports = [];
let errors = [];
try {
  await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    outfile: "scan.mjs",
    logLevel: "silent",
    plugins: [{
      name: "trunchbull-scan",
      setup(build) {
        build.onResolve({ filter: /.*/ }, (args) => {
          if (args.kind === "entry-point") return undefined;
          imports.push({ path: args.path, kind: args.kind });
          return { path: args.path, external: true };
        });
      },
    }],
  });
} catch (err) {
  errors = (err.errors || [{ text: String(err && err.message) }]).map((e) => e.text);
}
process.stdout.write(JSON.stringify({ imports, errors }) + "\n");
await esbuild.stop?.();
