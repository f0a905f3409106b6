export default {
  id: "files",
  title: "File system tasks",
  systemPrompt: "You operate a file system through its tools. Paths are absolute.",
  tools: ["mkdir", "write_file", "read_file", "list"],
  evaluate: { kind: "contains", expected: "buy milk" },
  cases: [
    {
      id: "files.note",
      prompt: "[files-note] Create the directory /notes, write 'buy milk' to /notes/todo.txt, read it back and say what it holds.",
    },
    {
      id: "files.order",
      prompt: "[files-order] Write 'buy milk' to /notes/todo.txt and list /notes.",
      evaluate: {
        kind: "tool_call_syntax",
        version: 1,
        alternatives: [[
          { toolName: "mkdir", input: { path: "/notes" } },
          { toolName: "write_file", input: { path: "/notes/todo.txt" } },
          { toolName: "list", input: { path: "/notes" } },
        ]],
      },
    },
    {
      id: "files.fresh",
      prompt: "[files-fresh] Read /notes/todo.txt and say what it holds.",
      evaluate: { kind: "contains", expected: "no such file" },
    },
  ],
}
