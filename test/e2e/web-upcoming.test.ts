/**
 * The Upcoming view (`#/upcoming`) and the job page's panel in Debian's
 * chromium against the built svcd, across the 2027 spring-forward weekend in
 * America/New_York: days in the browser's zone or each job's, the DST change
 * noted on its day, the slot a DST rule moved marked with the rule, and an
 * excluded slot shown as such (or hidden).
 */
import type { BrowserContext, Page } from "playwright-core";
import { expect, it } from "vitest";
import { browserRig, NEEDS_CHROMIUM, poll, shot } from "../helpers/chromium.js";
import { describeUnless } from "../helpers/skip.js";

const YAML = `defaults:
  timezone: UTC
jobs:
  nightly:
    description: Nightly load, New York time
    command: "true"
    frequency: daily
    time: "0230"
    timezone: America/New_York
    tags: [etl]
    exclude: {dates: ["2027-03-15"]}
  berlin:
    command: "true"
    frequency: weekly
    weekday: sun
    time: "0900"
    timezone: Europe/Berlin
  chain:
    command: "true"
    frequency: after:nightly
`;

const WEEKEND = "#/upcoming?from=2027-03-13T00%3A00%3A00.000Z&days=3";

const suite = (name: string, fn: () => void) => describeUnless(NEEDS_CHROMIUM, name, fn);

suite("upcoming runs against a real daemon", () => {
  const rig = browserRig("svc-web-upcoming-", YAML);

  const inZone = async (timezoneId: string): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 760 }, colorScheme: "light", timezoneId, locale: "en-US" });
    context.setDefaultTimeout(10_000);
    return { context, page: await context.newPage() };
  };
  const days = (page: Page) => page.locator("table.upcoming tr.day").evaluateAll((els) => els.map((e) => e.getAttribute("data-day")));
  const row = (page: Page, job: string, at: string) => page.locator(`table.upcoming tr.slot[data-job="${job}"][data-at="${at}"]`);

  it("lists the DST weekend by day in the browser's zone (New York): the change noted, the moved slot explained, the excluded one shown", async () => {
    const { context, page } = await inZone("America/New_York");
    await page.goto(`${rig.d.base}/${WEEKEND}`);
    await page.locator("table.upcoming tr.slot").first().waitFor();
    expect(await days(page)).toEqual(["2027-03-13", "2027-03-14", "2027-03-15"]);
    const sunday = page.locator('table.upcoming tr.day[data-day="2027-03-14"]');
    expect(await sunday.innerText()).toMatch(/Sunday, March 14, 2027[\s\S]*DST[\s\S]*Clocks go forward 1 h in America\/New_York \(EST → EDT\)/);
    expect(await page.locator('table.upcoming tr.day[data-day="2027-03-13"]').innerText()).not.toContain("Clocks");

    const moved = row(page, "nightly", "2027-03-14T07:00:00.000Z");
    expect(await moved.locator("td.when time").innerText()).toBe("03:00");
    expect(await moved.locator("td.notes").innerText()).toMatch(/DST\s+02:30 does not exist \(DST gap\): runs at 03:00/);
    expect(await row(page, "nightly", "2027-03-13T07:30:00.000Z").locator("td.when time").innerText()).toBe("02:30");
    const excluded = row(page, "nightly", "2027-03-15T06:30:00.000Z");
    expect(await excluded.getAttribute("class")).toContain("excluded");
    expect(await excluded.locator("td.notes").innerText()).toMatch(/excluded\s+2027-03-15 in exclude\.dates/);
    // (a string: this file is compiled without DOM types)
    const struck = `getComputedStyle(document.querySelector('tr.slot[data-at="2027-03-15T06:30:00.000Z"] td.when time')).textDecorationLine`;
    expect(await page.evaluate<string>(struck)).toBe("line-through");
    // Berlin's 09:00 is 04:00 in New York, and its own reading is beside it.
    expect(await row(page, "berlin", "2027-03-14T08:00:00.000Z").locator("td.when").innerText()).toBe("04:00 · 09:00 CET in Europe/Berlin");
    expect(await page.getByTestId("upcoming-summary").innerText()).toMatch(/^3 runs of 2 scheduled jobs .* over 3 days · 1 excluded · 1 job without a schedule/);
    await shot(page, rig.shots, "upcoming");

    await page.getByLabel("Show excluded slots").uncheck();
    await page.waitForURL(/excluded=hide/);
    await poll(() => excluded.count()).toBe(0);
    expect(await days(page)).toEqual(["2027-03-13", "2027-03-14"]);
    await context.close();
  });

  it("switches between the browser's zone (Berlin) and each job's zone, keyboard included", async () => {
    const { context, page } = await inZone("Europe/Berlin");
    await page.goto(`${rig.d.base}/${WEEKEND}`);
    const moved = row(page, "nightly", "2027-03-14T07:00:00.000Z");
    await moved.waitFor();
    // Here: 07:00Z is 08:00 in Berlin (CET until the 28th), no DST note on the 14th for Berlin.
    expect(await moved.locator("td.when").innerText()).toBe("08:00 · 03:00 EDT in America/New_York");
    expect(await page.locator('table.upcoming tr.day[data-day="2027-03-14"]').innerText()).not.toContain("Clocks");

    await page.getByRole("button", { name: "Each job's zone" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/zone=job/);
    await poll(() => moved.locator("td.when").innerText()).toBe("03:00 EDT · 08:00 GMT+1 here");
    // The toggle says which is on to a screen reader too.
    expect(await page.getByRole("button", { name: "Each job's zone" }).getAttribute("aria-pressed")).toBe("true");
    expect(await page.getByRole("button", { name: /^This browser's zone/ }).getAttribute("aria-pressed")).toBe("false");
    expect(await row(page, "berlin", "2027-03-14T08:00:00.000Z").locator("td.when time").innerText()).toBe("09:00 CET");
    expect(await page.locator('table.upcoming tr.day[data-day="2027-03-14"]').innerText()).toContain("Clocks go forward 1 h in America/New_York (EST → EDT)");
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, rig.shots, "upcoming-job-zone-dark");
    await context.close();
  });

  it("a chosen start date includes that day's 00:00 slot (Berlin's Sunday 09:00 is 00:00 in Los Angeles)", async () => {
    const { context, page } = await inZone("America/Los_Angeles");
    await page.goto(`${rig.d.base}/#/upcoming`);
    await page.getByLabel("Starting").fill("2027-03-14");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/from=/);
    const midnight = row(page, "berlin", "2027-03-14T08:00:00.000Z");
    await midnight.waitFor();
    expect(await midnight.locator("td.when time").first().innerText()).toBe("00:00");
    expect(await days(page)).toEqual(["2027-03-14"]);
    // The form and the summary read the chosen date, not the millisecond before it.
    expect(await page.getByLabel("Starting").inputValue()).toBe("2027-03-14");
    expect(await page.getByTestId("upcoming-summary").innerText()).toContain("3/14/2027, 12:00:00 AM");
    await context.close();
  });

  it("shows a job's next runs on its page, and says when a job has no schedule", async () => {
    const { context, page } = await inZone("Europe/Berlin");
    await page.goto(`${rig.d.base}/#/jobs/nightly`);
    const panel = page.locator("section.card", { has: page.getByRole("heading", { name: "Upcoming (next 7 days)" }) });
    await panel.locator("table.upcoming tr.slot").first().waitFor();
    // Seven days of a daily job, in its own zone first.
    expect(await panel.locator("table.upcoming tr.slot").count()).toBe(7);
    expect(await panel.locator("table.upcoming tr.slot td.when time").first().innerText()).toMatch(/^02:30 E[SD]T$/);
    await panel.getByRole("button", { name: "This browser's zone" }).click();
    await poll(() => panel.locator("table.upcoming tr.slot td.when time").first().innerText()).toMatch(/^0[78]:30$/);
    await shot(page, rig.shots, "job-upcoming");
    await page.goto(`${rig.d.base}/#/jobs/chain`);
    await page.getByText("chain has no schedule: it runs by hand or after its upstream jobs.").waitFor();
    await context.close();
  });
});
