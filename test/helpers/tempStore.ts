/**
 * A test file's store, through the hooks: kept out of src/store/testkit.ts,
 * which subprocesses also load (open.test.ts runs it as nobody) where vitest
 * is not there.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { OpenStoreOptions, Store } from "../../src/store/api.js";
import { open, tempDir, type TempDir } from "../../src/store/testkit.js";
import { standIn } from "./standIn.js";

/**
 * A store on a database file in its own temp directory, opened before each
 * test (`per: "test"`) or once before the file's tests (`per: "file"`), closed
 * and removed after. The object returned stands for the open store (standIn).
 */
export function tempStore(per: "test" | "file" = "test", opts: Partial<OpenStoreOptions> = {}): Store {
  let tmp: TempDir | undefined;
  let store: Store | undefined;
  (per === "test" ? beforeEach : beforeAll)(() => {
    tmp = tempDir();
    store = open(tmp.file(), opts);
  });
  (per === "test" ? afterEach : afterAll)(() => {
    store?.close();
    tmp?.remove();
    store = tmp = undefined;
  });
  return standIn(() => store, "the temp store");
}
