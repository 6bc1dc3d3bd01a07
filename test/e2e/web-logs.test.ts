/**
 * The run page's log view with long logs, in Debian's chromium against the
 * built svcd: lines are drawn in blocks of 256 by their place in the log
 * (blocks the browser may skip off screen), every line is there in order, the
 * view follows the bottom, the stream toggles filter inside the blocks, and
 * past 20,000 lines the oldest give way with a count of those not shown.
 */
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { browserRig, NEEDS_CHROMIUM, poll } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `jobs:
  long:
    # 3,000 stdout lines, a stderr line after every 1,000th, then more a little later (a second batch).
    command: for i in $(seq 1 3000); do echo "out $i"; [ $((i % 1000)) = 0 ] && echo "err $i" >&2; done; sleep 1; seq 1 100 | sed 's/^/late /'
    frequency: manual
  huge:
    command: seq 1 20500 | sed 's/^/line /'
    frequency: manual
`;

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("the log view with long logs", () => {
  const rig = browserRig("svc-web-logs-", YAML);

  async function runPage(job: string): Promise<{ page: Page; id: number }> {
    const r = await rig.d.api<{ run_id: number }>("POST", `/api/jobs/${job}/run`, {});
    const id = r.body.run_id;
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${rig.d.base}/#/runs/${id}`);
    return { page, id };
  }

  it("3,104 lines (the attempt's marker line, 3,003 at once, 100 more a second later): blocks of 256 by place, every line in order, following the bottom, toggles filter within blocks", async () => {
    const { page, id } = await runPage("long");
    await page.locator('[data-testid="log-conn"][data-state="ended"]').waitFor();
    await until(`run ${id} SUCCESS`, async () => ((await rig.d.api<{ status: string }>("GET", `/api/runs/${id}`)).body.status === "SUCCESS" ? true : null), 20_000);
    const rows = page.locator(".log-box .ln");
    await poll(() => rows.count()).toBe(3_104);
    const texts = await page.locator(".log-box .ln-text").allTextContents();
    const expected = [
      ...Array.from({ length: 3_000 }, (_, i) => i + 1).flatMap((i) => (i % 1000 === 0 ? [`out ${i}`, `err ${i}`] : [`out ${i}`])),
      ...Array.from({ length: 100 }, (_, i) => `late ${i + 1}`),
    ];
    // stdout and stderr are two pipes: their order between each other is the daemon's, within each it is the job's.
    expect(texts[0]).toMatch(/^--- attempt 1 /); // svc's marker line opens the log
    expect(texts.slice(1).filter((t) => !t.startsWith("err"))).toEqual(expected.filter((t) => !t.startsWith("err")));
    expect(texts.filter((t) => t.startsWith("err"))).toEqual(["err 1000", "err 2000", "err 3000"]);
    // Blocks of 256 lines by their place in the log: ceil(3,104 / 256) = 13, the last one partly filled.
    const sizes = await page.locator(".log-box .ln-block").evaluateAll((bs) => bs.map((b) => b.children.length));
    expect(sizes).toEqual([...Array(12).fill(256), 3_104 - 12 * 256]);
    expect(await page.evaluate("getComputedStyle(document.querySelector('.log-box .ln-block')).contentVisibility")).toBe("auto");
    // It followed the stream to the bottom.
    const gap = () => page.evaluate<number>("(() => { const b = document.querySelector('.log-box'); return b.scrollHeight - b.scrollTop - b.clientHeight; })()");
    expect(await gap()).toBeLessThan(10);
    await page.getByRole("button", { name: "Following ↓" }).waitFor();

    // stdout off: the stderr lines alone, each still in the block of its place in the whole log.
    const errBlocks = texts.flatMap((t, i) => (t.startsWith("err") ? [Math.floor(i / 256)] : []));
    await page.getByRole("checkbox", { name: /stdout/i }).uncheck();
    await poll(() => rows.count()).toBe(3);
    const perBlock = await page.locator(".log-box .ln-block").evaluateAll((bs) => bs.map((b) => b.children.length));
    expect(perBlock).toEqual([...new Set(errBlocks)].map((k) => errBlocks.filter((x) => x === k).length));
    await page.getByRole("checkbox", { name: /stdout/i }).check();
    await poll(() => rows.count()).toBe(3_104);
    await page.context().close();
  }, 60_000);

  it("20,501 lines (the marker and 20,500): the newest 20,000 are drawn, the count says 501 are not, blocks keep their places", async () => {
    const { page, id } = await runPage("huge");
    await until(`run ${id} SUCCESS`, async () => ((await rig.d.api<{ status: string }>("GET", `/api/runs/${id}`)).body.status === "SUCCESS" ? true : null), 20_000);
    await page.locator('[data-testid="log-conn"][data-state="ended"]').waitFor();
    await poll(() => page.getByTestId("log-count").innerText()).toBe("20000 lines (501 older lines not shown)");
    const first = await page.locator(".log-box .ln-text").first().textContent();
    const last = await page.locator(".log-box .ln-text").last().textContent();
    expect([first, last]).toEqual(["line 501", "line 20500"]);
    // Lines 501..20,500 are places 501..20,500 (the marker is place 0): the first block (places 256-511) holds 11,
    // the last (places 20,480-20,735) 21.
    const sizes = await page.locator(".log-box .ln-block").evaluateAll((bs) => bs.map((b) => b.children.length));
    expect(sizes[0]).toBe(11);
    expect(sizes[sizes.length - 1]).toBe(21);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(20_000);
    await page.context().close();
  }, 60_000);
});
