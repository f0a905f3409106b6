// BFCL v4 (Berkeley Function Calling Leaderboard), its seven AST categories, 1,390 cases: each
// question with its functions offered as tools, the model's native function calling, graded by a
// port of BFCL's AST checker on the model's first step (docs/benchmarks.md).
export default {
  protocolVersion: 1,
  title: "BFCL v4 (AST categories)",
  version: "1.0.0",
  evals: [
    "evals/simple_python.ts",
    "evals/simple_java.ts",
    "evals/simple_javascript.ts",
    "evals/multiple.ts",
    "evals/parallel.ts",
    "evals/parallel_multiple.ts",
    "evals/irrelevance.ts",
  ],
  tools: ["tools/bfcl.ts"],
}
