// A stateful environment: a small in-memory file system whose commands a
// model must sequence (make a directory before writing into it, write a file
// before reading it). The state is a module-level variable, and that is
// enough: every sample gets a fresh instance of this module, so each one
// starts from the same empty tree, keeps its changes across the steps of
// its tool loop, and sees nothing another sample did.
import { tool } from "ai"
import { z } from "zod"

type Dir = { kind: "dir"; children: Map<string, Node> }
type File = { kind: "file"; text: string }
type Node = Dir | File

const root: Dir = { kind: "dir", children: new Map() }

function parts(path: string): string[] {
  if (!path.startsWith("/")) throw new Error(`${path}: paths are absolute (they start with /)`)
  return path.split("/").filter(Boolean)
}

function lookup(path: string): Node | undefined {
  let node: Node = root
  for (const name of parts(path)) {
    if (node.kind !== "dir") return undefined
    const next = node.children.get(name)
    if (!next) return undefined
    node = next
  }
  return node
}

function parentOf(path: string): { dir: Dir; name: string } {
  const names = parts(path)
  const name = names.pop()
  if (!name) throw new Error("/ already exists")
  const parent = lookup(`/${names.join("/")}`)
  if (!parent || parent.kind !== "dir") throw new Error(`${path}: no such directory: /${names.join("/")}`)
  return { dir: parent, name }
}

const path = z.object({ path: z.string() })

export const tools = {
  mkdir: tool({
    description: "Create a directory (its parent must exist).",
    inputSchema: path,
    execute: async ({ path }) => {
      const { dir, name } = parentOf(path)
      if (dir.children.has(name)) throw new Error(`${path}: already exists`)
      dir.children.set(name, { kind: "dir", children: new Map() })
      return { created: path }
    },
  }),
  write_file: tool({
    description: "Write a text file (its directory must exist).",
    inputSchema: z.object({ path: z.string(), text: z.string() }),
    execute: async ({ path, text }) => {
      const { dir, name } = parentOf(path)
      if (dir.children.get(name)?.kind === "dir") throw new Error(`${path}: is a directory`)
      dir.children.set(name, { kind: "file", text })
      return { written: path, bytes: text.length }
    },
  }),
  read_file: tool({
    description: "Read a text file.",
    inputSchema: path,
    execute: async ({ path }) => {
      const node = lookup(path)
      if (!node) throw new Error(`${path}: no such file`)
      if (node.kind !== "file") throw new Error(`${path}: is a directory`)
      return { path, text: node.text }
    },
  }),
  list: tool({
    description: "List a directory.",
    inputSchema: path,
    execute: async ({ path }) => {
      const node = lookup(path)
      if (!node || node.kind !== "dir") throw new Error(`${path}: no such directory`)
      return { path, entries: [...node.children.keys()].sort() }
    },
  }),
}
