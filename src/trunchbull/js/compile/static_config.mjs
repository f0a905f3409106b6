// Reads benchmark.config.{ts,mts,js,mjs} without executing it: parses the AST
// and accepts only `export default <JSON literal>` (optionally through one
// `const`), `as const` / `satisfies T`, and type-only declarations.

const WRAPPERS = new Set([
  "TSAsExpression",
  "TSSatisfiesExpression",
  "TSTypeAssertion",
  "TSNonNullExpression",
  "ParenthesizedExpression",
]);

const NODE_NAMES = {
  ArrayExpression: "an array",
  StringLiteral: "a string",
  NumericLiteral: "a number",
  BooleanLiteral: "a boolean",
  NullLiteral: "null",
  Identifier: "an identifier",
  CallExpression: "a function call",
  NewExpression: "a constructor call",
  ArrowFunctionExpression: "a function",
  FunctionExpression: "a function",
  ObjectMethod: "a method",
  SpreadElement: "a spread",
  TemplateLiteral: "a template literal with expressions",
  MemberExpression: "a property access",
  RegExpLiteral: "a regular expression",
  BigIntLiteral: "a BigInt",
};

function loc(node) {
  return node && node.loc ? { line: node.loc.start.line, col: node.loc.start.column + 1 } : {};
}

function unwrap(node) {
  while (node && WRAPPERS.has(node.type)) node = node.expression;
  return node;
}

function describe(node) {
  return NODE_NAMES[node.type] || "an expression";
}

const STATIC_HINT = "benchmark.config is read without running it: write values literally, with no variables, calls, functions or spreads";

class StaticReader {
  constructor() {
    this.errors = [];
    this.locations = {};
  }

  fail(node, code, message, hint) {
    this.errors.push({ ...loc(node), code, message, hint });
    return undefined;
  }

  // A string value must be valid Unicode text (it is written as UTF-8).
  text(node, value, path) {
    if (typeof value === "string" && value.isWellFormed()) return value;
    return this.fail(node, "config-not-static", `${path || "the config"} is a string with a lone surrogate, which is not valid Unicode text`,
      "write the text without unpaired \\uD800-\\uDFFF escapes");
  }

  literal(node, path) {
    node = unwrap(node);
    if (path) this.locations[path] ??= loc(node);
    switch (node.type) {
      case "StringLiteral":
        return this.text(node, node.value, path);
      case "NumericLiteral":
      case "BooleanLiteral":
        return node.value;
      case "NullLiteral":
        return null;
      case "UnaryExpression": {
        const arg = unwrap(node.argument);
        if (node.operator === "-" && arg.type === "NumericLiteral") return -arg.value;
        break;
      }
      case "TemplateLiteral":
        if (node.expressions.length === 0) return this.text(node, node.quasis.map((q) => q.value.cooked).join(""), path);
        break;
      case "ArrayExpression": {
        const out = [];
        node.elements.forEach((el, i) => {
          if (el === null) this.fail(node, "config-not-static", `${path}[${i}] is an array hole`, "write every element explicitly");
          else if (el.type === "SpreadElement") this.fail(el, "config-not-static", `${path} contains a spread`, STATIC_HINT);
          else {
            const value = this.literal(el, `${path}[${i}]`);
            if (value !== undefined) out.push(value);
          }
        });
        return out;
      }
      case "ObjectExpression": {
        const out = {};
        for (const prop of node.properties) {
          if (prop.type !== "ObjectProperty" || prop.computed) {
            const what = prop.computed ? "a computed key" : describe(prop);
            this.fail(prop, "config-not-static", `${path || "the config"} contains ${what}`, STATIC_HINT);
            continue;
          }
          const key = (prop.key.type === "Identifier" ? prop.key.name : String(prop.key.value)).toWellFormed();
          const childPath = path ? `${path}.${key}` : key;
          if (Object.prototype.hasOwnProperty.call(out, key)) {
            this.fail(prop.key, "config-duplicate-key", `duplicate key "${key}"`, "remove one of the two entries");
            continue;
          }
          this.locations[childPath] = loc(prop.key);
          const value = this.literal(prop.value, childPath);
          if (value !== undefined) out[key] = value;
        }
        return out;
      }
    }
    const where = path ? ` at ${path}` : "";
    return this.fail(node, "config-not-static", `the config contains ${describe(node)}${where}; only JSON-compatible literals are allowed`, STATIC_HINT);
  }
}

function isTypeOnlyImport(stmt) {
  if (stmt.importKind === "type") return true;
  return stmt.specifiers.length > 0 && stmt.specifiers.every((s) => s.importKind === "type");
}

function statementName(stmt) {
  return stmt.type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

export function readStaticConfig(parser, source) {
  let ast;
  try {
    ast = parser.parse(source, { sourceType: "module", plugins: ["typescript"] });
  } catch (err) {
    const where = err.loc ? { line: err.loc.line, col: err.loc.column + 1 } : {};
    const message = `syntax error: ${err.message.replace(/ \(\d+:\d+\)$/, "")}`;
    return { errors: [{ ...where, code: "config-syntax", message, hint: "fix the syntax of the config module" }] };
  }
  const reader = new StaticReader();
  const consts = new Map();
  const defaults = [];
  for (const stmt of ast.program.body) {
    switch (stmt.type) {
      case "ImportDeclaration":
        if (!isTypeOnlyImport(stmt)) reader.fail(stmt, "config-not-static", "the config imports values; only type-only imports are allowed", "use `import type { … }`, or write the values literally");
        break;
      case "TSTypeAliasDeclaration":
      case "TSInterfaceDeclaration":
      case "EmptyStatement":
        break;
      case "VariableDeclaration": {
        const [decl] = stmt.declarations;
        if (stmt.kind !== "const" || stmt.declarations.length !== 1 || decl.id.type !== "Identifier" || !decl.init) {
          reader.fail(stmt, "config-not-static", "only a single `const name = <literal>` declaration is allowed in the config", "export the object literal directly");
        } else consts.set(decl.id.name, decl);
        break;
      }
      case "ExportDefaultDeclaration":
        defaults.push(stmt);
        break;
      case "ExportNamedDeclaration":
        reader.fail(stmt, "config-not-static", "the config has a named export; it must have only a default export", "write `export default { … }` instead of `export const …`");
        break;
      default:
        reader.fail(stmt, "config-not-static", `the config contains code (${statementName(stmt)}); it must not run setup code`, "keep only `export default { … }` and type-only imports");
    }
  }
  if (defaults.length === 0) {
    reader.fail(null, "config-no-default", "the config has no default export", "add `export default { protocolVersion: 1 }`");
    return { errors: reader.errors };
  }
  for (const extra of defaults.slice(1)) reader.fail(extra, "config-not-static", "the config has more than one default export", "keep one");
  let node = unwrap(defaults[0].declaration);
  let exportedName = null;
  if (node.type === "Identifier") {
    exportedName = node.name;
    const decl = consts.get(node.name);
    if (!decl) {
      reader.fail(node, "config-not-static", `the default export refers to "${node.name}", which is not a const literal in this file`, "export the object literal directly");
      return { errors: reader.errors };
    }
    node = unwrap(decl.init);
  }
  for (const [name, decl] of consts) {
    if (name !== exportedName) reader.fail(decl, "config-not-static", `the config declares "${name}" but does not export it as the default`, "keep only the exported object literal");
  }
  if (node.type !== "ObjectExpression") {
    reader.fail(node, "config-not-object", `the default export must be an object literal, found ${describe(node)}`, "write `export default { protocolVersion: 1, … }`");
    return { errors: reader.errors };
  }
  const value = reader.literal(node, "");
  return { value, locations: reader.locations, errors: reader.errors };
}
