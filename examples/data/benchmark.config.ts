export default {
  protocolVersion: 1,
  title: "Data-driven evals",
  version: "0.3.0",
} satisfies Record<string, unknown>
