/**
 * Accessibility of the timeline, upcoming and cycle-graph views, checked by
 * axe-core (WCAG 2 A and AA rules: names of controls, roles, contrast of
 * text in light and dark mode...) in Debian's chromium against the built
 * svcd, and their keyboard paths: every control is reached with Tab and
 * shows a focus ring, and so is every node and edge of a cycle's graph.
 */
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { beforeAll, expect, it } from "vitest";
import { until } from "../helpers/daemonKit.js";
import { browserRig, NEEDS_CHROMIUM } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

const YAML = `defaults:
  timezone: Europe/Berlin
jobs:
  extract:
    command: "printf '{\\"rows\\": 7}\\\\n'"
    output: {rows: "json_field:rows"}
    frequency: daily
    time: "0230"
    tags: [etl]
    exclude: {dates: ["2027-03-28"]}
  load:
    command: "exit 3"
    frequency: after:extract
    tags: [etl]
  slow:
    command: "sleep 1"
    frequency: hourly
    sla: 500ms
`;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("accessibility of the timeline, upcoming and cycle graph", () => {
  const rig = browserRig("svc-web-a11y-", YAML);
  let cycle = "";

  beforeAll(async () => {
    const started = await rig.d.api<{ cycle_id: string }>("POST", "/api/jobs/extract/run", {});
    cycle = started.body.cycle_id;
    await rig.d.api("POST", "/api/jobs/slow/run", {});
    await until("the chain to end", async () => {
      const r = await rig.d.api<{ rows: { job_name: string; status: string }[] }>("GET", `/api/db/job_runs?cycle_id=${cycle}&page_size=100`);
      return r.body.rows.some((x) => x.job_name === "load" && x.status === "FAILED");
    }, 30_000);
    await until("slow to end", async () => {
      const r = await rig.d.api<{ runs: { status: string }[] }>("GET", "/api/jobs/slow?runs=1");
      return r.body.runs[0]?.status === "SUCCESS";
    }, 30_000);
  }, 90_000);

  /** axe-core's serious and critical WCAG 2 A/AA violations inside `include`. */
  async function audit(page: Page, include: string): Promise<string[]> {
    await page.addScriptTag({ path: AXE });
    const result = (await page.evaluate(`axe.run({ include: [${JSON.stringify(include)}] }, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } })`)) as {
      violations: Violation[];
    };
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => `${n.target.join(" ")} ${n.failureSummary ?? ""}`.trim()).slice(0, 3).join(" | ")}`);
  }

  const views = () => {
    const now = Date.now();
    return [
      { name: "timeline", hash: `#/timeline?from=${new Date(now - 5 * 60_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`, ready: "a.tl-bar" },
      { name: "upcoming", hash: "#/upcoming?from=2027-03-27T00%3A00%3A00.000Z&days=3", ready: "table.upcoming tr.slot" },
      { name: "cycle graph", hash: `#/graph?cycle=${cycle}`, ready: 'svg.graph a.node[data-status="FAILED"]' },
      { name: "job page's upcoming panel", hash: "#/jobs/extract", ready: "table.upcoming tr.slot", include: "section.card:has(#upcoming-title)" },
    ];
  };

  for (const scheme of ["light", "dark"] as const) {
    it(`has no serious or critical axe violation in ${scheme} mode`, async () => {
      const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme, timezoneId: "Europe/Berlin" });
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      const found: Record<string, string[]> = {};
      for (const v of views()) {
        await page.goto("about:blank");
        await page.goto(`${rig.d.base}/${v.hash}`);
        await page.locator(v.ready).first().waitFor();
        found[v.name] = await audit(page, v.include ?? "main");
      }
      expect(found).toEqual(Object.fromEntries(views().map((v) => [v.name, []])));
      await context.close();
    });
  }

  it("reaches every control of the timeline and upcoming views with Tab, each with a visible focus ring", async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    for (const v of views().slice(0, 2)) {
      await page.goto("about:blank");
      await page.goto(`${rig.d.base}/${v.hash}`);
      await page.locator(v.ready).first().waitFor();
      // Every enabled control of the view's toolbars...
      const controls = await page.evaluate<string[]>(`[...document.querySelectorAll("main .toolbar button:not([disabled]), main .toolbar input, main .toolbar a")].map((el) => el.getAttribute("aria-label") || el.textContent.trim() || el.getAttribute("name") || el.type)`);
      expect(controls.length).toBeGreaterThan(5);
      // ...is reached from the skip link by Tab, and draws an outline when focused.
      const reached = new Set<string>();
      await page.keyboard.press("Tab"); // skip link
      for (let i = 0; i < 60 && reached.size < controls.length; i++) {
        await page.keyboard.press("Tab");
        const r = await page.evaluate<{ name: string; outline: string; inToolbar: boolean }>(`(() => {
          const el = document.activeElement;
          const s = getComputedStyle(el);
          return { name: el.getAttribute("aria-label") || el.textContent.trim() || el.getAttribute("name") || el.type, outline: s.outlineStyle + " " + s.outlineWidth, inToolbar: !!el.closest("main .toolbar") };
        })()`);
        if (!r.inToolbar) continue;
        expect(r.outline, `focus ring of ${r.name}`).not.toMatch(/^none|0px$/);
        reached.add(r.name);
      }
      expect([...reached].sort(), v.name).toEqual([...new Set(controls)].sort());
    }
    await context.close();
  });

  it("reaches every node and edge of the cycle graph with Tab, each marked when focused", async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const v = views()[2]!;
    await page.goto(`${rig.d.base}/${v.hash}`);
    await page.locator(v.ready).first().waitFor();
    // The nodes (links to their run) and, in a cycle, the edges (their outputs on focus).
    const targets = await page.evaluate<string[]>(`[...document.querySelectorAll("svg.graph a.node, svg.graph g.edge-g[tabindex]")].map((el) => el.getAttribute("aria-label"))`);
    expect(targets.filter((t) => t.startsWith("extract → load")).length).toBe(1);
    expect(targets.length).toBe(4); // extract, load, slow (not in the cycle) and one edge
    /** What marks the focused element: a node's border width, an edge's stroke colour. */
    const mark = `(el) => el.matches("a.node") ? getComputedStyle(el.querySelector("rect")).strokeWidth : getComputedStyle(el.querySelector("path.edge")).stroke`;
    const atRest = await page.evaluate<string[]>(`[...document.querySelectorAll("svg.graph a.node, svg.graph g.edge-g[tabindex]")].map(${mark})`);
    const reached = new Map<string, string>();
    for (let i = 0; i < 80 && reached.size < targets.length; i++) {
      await page.keyboard.press("Tab");
      const r = await page.evaluate<{ name: string; mark: string } | null>(`(() => {
        const el = document.activeElement;
        if (!el || !el.closest("svg.graph")) return null;
        return { name: el.getAttribute("aria-label"), mark: (${mark})(el) };
      })()`);
      if (r) reached.set(r.name, r.mark);
    }
    expect([...reached.keys()].sort()).toEqual([...targets].sort());
    targets.forEach((t, i) => expect(reached.get(t), `focus mark of ${t}`).not.toBe(atRest[i]));
    // An edge's outputs show on keyboard focus as on hover.
    await page.locator("svg.graph g.edge-g[tabindex]").focus();
    await page.getByTestId("edge-card").waitFor();
    await context.close();
  });
});
