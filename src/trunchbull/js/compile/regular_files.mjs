// An esbuild plugin: esbuild reads only regular files. Opening a named pipe
// with no writer would block esbuild forever, and a device can be read
// without end, so every file is checked before esbuild loads it, and before
// esbuild resolves an import into a directory, the files it reads there and
// in every directory above (package.json, tsconfig.json, jsconfig.json) are
// checked too. A file that is not regular fails the bundle with an error
// whose detail names it: { notRegular: { path, kind } }.
import { statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";

const READ_BESIDE = ["package.json", "tsconfig.json", "jsconfig.json"];

function kindOf(stats) {
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character-device";
  if (stats.isBlockDevice()) return "block-device";
  if (stats.isDirectory()) return "directory";
  return "other";
}

// The kind of what is at `path` when it is there and not a regular file.
function notRegular(path, allowDirectory) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return null; // missing or unreadable: esbuild reports it as it would
  }
  if (stats.isFile() || (allowDirectory && stats.isDirectory())) return null;
  return kindOf(stats);
}

function failure(path, kind) {
  return { errors: [{ text: `${path} is not a regular file (${kind})`, detail: { notRegular: { path, kind } } }] };
}

export function regularFilesOnly() {
  const checked = new Map(); // directory → failure or null, for it and its ancestors
  function checkDirectory(directory) {
    if (checked.has(directory)) return checked.get(directory);
    let found = null;
    for (const name of READ_BESIDE) {
      const path = resolve(directory, name);
      const kind = notRegular(path, true); // a directory of that name is not read
      if (kind) {
        found = failure(path, kind);
        break;
      }
    }
    const parent = dirname(directory);
    if (!found && parent !== directory) found = checkDirectory(parent);
    checked.set(directory, found);
    return found;
  }
  return {
    name: "trunchbull-regular-files",
    setup(build) {
      // Entry points and local imports: the directories esbuild is about to
      // look into (the target's, and the target itself for a directory import).
      build.onResolve({ filter: /.*/ }, (args) => {
        const local = args.kind === "entry-point" || args.path.startsWith(".") || isAbsolute(args.path);
        if (!local) return undefined; // a package import: external
        const target = resolve(args.resolveDir, args.path);
        return checkDirectory(dirname(target)) ?? checkDirectory(target) ?? undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "file" }, (args) => {
        const kind = notRegular(args.path, false);
        return kind ? failure(args.path, kind) : undefined;
      });
    },
  };
}
