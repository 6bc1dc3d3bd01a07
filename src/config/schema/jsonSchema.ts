/** A JSON Schema document or subschema, as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The subschema at a JSON pointer (`#/properties/jobs`), or undefined.
 * Used to read `x-message` and `default` where ajv reports a schemaPath.
 */
export function schemaAt(root: JsonSchema, pointer: string): JsonSchema | undefined {
  const parts = pointer.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  let node: unknown = root;
  for (const raw of parts) {
    if (node === null || typeof node !== "object") return undefined;
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    node = (node as Record<string, unknown>)[key];
  }
  return node !== null && typeof node === "object" ? (node as JsonSchema) : undefined;
}

/**
 * The `default` of a property reached through `properties` (following one
 * level of `$ref`): `schemaDefault(daemonSchema, ["scheduler", "catchup_window"])`.
 */
export function schemaDefault(root: JsonSchema, path: readonly string[]): unknown {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    node = deref(root, node);
    const props = node?.properties as Record<string, JsonSchema> | undefined;
    node = props?.[key];
  }
  node = deref(root, node);
  if (node === undefined || !("default" in node)) {
    throw new Error(`schema has no default at ${path.join(".")}`);
  }
  return structuredClone(node.default);
}

function deref(root: JsonSchema, node: JsonSchema | undefined): JsonSchema | undefined {
  if (node && typeof node.$ref === "string") return schemaAt(root, node.$ref);
  return node;
}
