// A tool's JSON Schema (as the release stored it) as the JSON Schema subset
// node-llama-cpp turns into a grammar for function-call parameters
// (GbnfJsonSchema). Keywords it does not know are dropped, so the grammar is
// looser than the schema where they were; the tool's own validation still
// checks every call before `execute` runs.
const BASIC = ["string", "number", "integer", "boolean", "null"];
const FORMATS = new Set(["date-time", "time", "date"]);
const ANY = { oneOf: [{ type: BASIC }, { type: "object", additionalProperties: true }, { type: "array" }] };

function withDescription(out, schema) {
  if (typeof schema.description === "string") out.description = schema.description;
  return out;
}

export function toGbnfSchema(schema) {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return ANY;
  if ("const" in schema) return withDescription({ const: schema.const }, schema);
  if (Array.isArray(schema.enum)) return withDescription({ enum: schema.enum }, schema);
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) return withDescription({ oneOf: alternatives.map(toGbnfSchema) }, schema);
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.every((t) => BASIC.includes(t))) return withDescription({ type }, schema);
    return withDescription({ oneOf: type.map((t) => toGbnfSchema({ ...schema, type: t })) }, schema);
  }
  if (type === "object" || (type === undefined && schema.properties)) {
    const out = { type: "object" };
    if (schema.properties && typeof schema.properties === "object") {
      out.properties = {};
      for (const [key, value] of Object.entries(schema.properties)) out.properties[key] = toGbnfSchema(value);
    }
    if (Array.isArray(schema.required)) out.required = schema.required.filter((key) => out.properties && key in out.properties);
    if (typeof schema.additionalProperties === "boolean") out.additionalProperties = schema.additionalProperties;
    else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      out.additionalProperties = toGbnfSchema(schema.additionalProperties);
    } else if (!out.properties) out.additionalProperties = true;
    for (const key of ["minProperties", "maxProperties"]) if (Number.isInteger(schema[key])) out[key] = schema[key];
    return withDescription(out, schema);
  }
  if (type === "array") {
    const out = { type: "array" };
    if (schema.items && typeof schema.items === "object" && !Array.isArray(schema.items)) out.items = toGbnfSchema(schema.items);
    if (Array.isArray(schema.prefixItems)) out.prefixItems = schema.prefixItems.map(toGbnfSchema);
    for (const key of ["minItems", "maxItems"]) if (Number.isInteger(schema[key])) out[key] = schema[key];
    return withDescription(out, schema);
  }
  if (type === "string") {
    if (FORMATS.has(schema.format)) return withDescription({ type, format: schema.format }, schema);
    const out = { type };
    for (const key of ["minLength", "maxLength"]) if (Number.isInteger(schema[key])) out[key] = schema[key];
    return withDescription(out, schema);
  }
  if (BASIC.includes(type)) return withDescription({ type }, schema);
  return ANY;
}
