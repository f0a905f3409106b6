export default {
  protocolVersion: 1,
  title: "A small file system",
  version: "1.0.0",
  evals: ["evals/files.ts"],
  tools: ["tools/fs.ts"],
}
