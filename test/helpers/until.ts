/**
 * Polls `pred` (real time) every `everyMs` until it returns a truthy value, and returns that value;
 * after `ms` it fails with what was awaited. The one polling loop of the test kits (daemonKit,
 * engineKit, the API's testkit) and of tests that wait for a thread or a checkpoint.
 */
export async function until<T>(
  what: string,
  pred: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  ms = 15_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
