/** A JSON Schema document or subschema, as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/** The subschema at a JSON pointer into the schema (`#/properties/jobs`), or undefined. */
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

/**
 * The subschema that applies at an instance path (`["jobs", "extract",
 * "tags", "0"]`), following properties, additionalProperties, items and
 * $ref. ajv reports `schemaPath` relative to a referenced schema, so error
 * messages are looked up this way instead.
 */
export function schemaForInstance(root: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  let node = deref(root, root);
  for (const seg of path) {
    if (node === undefined) return undefined;
    const props = node.properties as Record<string, JsonSchema> | undefined;
    const additional = node.additionalProperties;
    const items = node.items;
    if (props && Object.prototype.hasOwnProperty.call(props, seg)) node = props[seg];
    else if (/^[0-9]+$/.test(seg) && items !== null && typeof items === "object") node = items as JsonSchema;
    else if (additional !== null && typeof additional === "object") node = additional as JsonSchema;
    else return undefined;
    node = deref(root, node);
  }
  return node;
}

function deref(root: JsonSchema, node: JsonSchema | undefined): JsonSchema | undefined {
  if (node && typeof node.$ref === "string") return schemaAt(root, node.$ref);
  return node;
}
