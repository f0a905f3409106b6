// Checks of the local model runtime while it is installed (trunchbull/run/
// local_runtime.py), each loading node-llama-cpp from the directory given:
//   test  node-llama-cpp's own test of its prebuilt CPU binary on this machine
//         (it forks a test process: run unsandboxed, by the installer only)
//   load  the load a run worker makes: the binary recorded as the last build,
//         with no test process (run under the workers' permission model)
// Exits 0 when the binary loads; otherwise prints why and exits 1.
import { pathToFileURL } from "node:url";

const [mode, packageDir] = process.argv.slice(2);
try {
  const { getLlama } = await import(pathToFileURL(`${packageDir}/dist/index.js`).href);
  const quiet = { logLevel: "error", progressLogs: false };
  const llama = mode === "test"
    ? await getLlama({ ...quiet, gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true })
    : await getLlama("lastBuild", { ...quiet, tempDir: false });
  if (mode === "load" && llama.buildType !== "localBuild") {
    throw new Error(`node-llama-cpp loaded its ${llama.buildType} binary, not the recorded one`);
  }
  await llama.dispose();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
}
