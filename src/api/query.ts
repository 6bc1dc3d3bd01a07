/** Query filters without the absent and empty ones (`?job=` means no job filter). */
export function definedOnly<T extends object>(q: object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") out[k] = v;
  return out as T;
}
