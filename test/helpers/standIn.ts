/**
 * An object that stands for one a hook creates later (beforeAll/beforeEach):
 * every read, write and `in` goes to `current()`, methods bound to it. Lets a
 * test file write `const store = tempStore()` at the top and use `store` in
 * its tests. Touching it while `current()` is undefined throws, naming `what`.
 */
export function standIn<T extends object>(current: () => T | undefined, what: string): T {
  const target = (): T => {
    const v = current();
    if (v === undefined) throw new Error(`${what} is not there yet: use it inside tests or hooks, after the hook that creates it`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const t = target();
      const v: unknown = Reflect.get(t, key);
      return typeof v === "function" ? (v as (...args: unknown[]) => unknown).bind(t) : v;
    },
    set: (_, key, value) => Reflect.set(target(), key, value),
    has: (_, key) => Reflect.has(target(), key),
  });
}
