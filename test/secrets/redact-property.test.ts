/**
 * Redaction as a property over many random configs (CONTRACT §7.5), as pure
 * functions: random svc.yaml / svcd.yaml pairs with random secrets written
 * in random YAML forms (test/helpers/secretConfigs.ts). For each file:
 * no secret is left (in values or comments), every line stays, the answer
 * parses as YAML again, and it holds exactly the original data with each
 * secret read `***` (nothing else changed).
 * test/e2e/secrets-redaction.test.ts runs fewer of them through a real svcd.
 *
 * Replay a failure: SVC_SECRETS_SEED=<seed printed below> npx vitest run test/secrets/redact-property.test.ts
 */
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { redactConfigText } from "../../src/config/redactText.js";
import { configArb, MARK } from "../helpers/secretConfigs.js";

const SEED = Number(process.env.SVC_SECRETS_SEED ?? Date.now() % 1_000_000);
const RUNS = Number(process.env.SVC_SECRETS_RUNS ?? 300);

/** Why a redacted text is wrong, or null. */
function problem(kind: "svc.yaml" | "svcd.yaml", text: string, expected: unknown): string | null {
  const r = redactConfigText(kind, text);
  if (!r.ok) return `did not parse: ${JSON.stringify(r.errors)}`;
  if (r.text.includes(MARK)) return `a secret is left:\n${r.text}`;
  if (r.text.split("\n").length !== text.split("\n").length) return "the line count changed";
  let data: unknown;
  try {
    data = YAML.parse(r.text, { merge: true });
  } catch (e) {
    return `the answer is not YAML: ${String(e)}\n${r.text}`;
  }
  if (!isDeepStrictEqual(data, expected)) return `the data differs:\n${JSON.stringify(data)}\nexpected\n${JSON.stringify(expected)}\n${r.text}`;
  return null;
}

describe("redaction property", () => {
  it(`${RUNS} random configs in random YAML forms: no secret left, lines kept, the rest unchanged (seed ${SEED})`, { timeout: 60_000 + RUNS * 200 }, () => {
    process.stdout.write(`[secrets] redaction property: seed=${SEED} runs=${RUNS} (replay: SVC_SECRETS_SEED=${SEED})\n`);
    fc.assert(
      fc.property(configArb(), (c) => {
        for (const [kind, text, expected] of [
          ["svc.yaml", c.svc, c.expectedSvc],
          ["svcd.yaml", c.svcd, c.expectedSvcd],
        ] as const) {
          const why = problem(kind, text, expected);
          if (why) throw new Error(`${kind}:\n${text}\n--- ${why}`);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("the generator writes every form it promises (so the property above sees them)", () => {
    const seen: Record<string, number> = {};
    const forms: Record<string, RegExp> = {
      "block literal": /: (&\w+ )?\|[-+]?\d?[ \t]*(#.*)?\n/,
      folded: /: (&\w+ )?>[-+]?\d?[ \t]*(#.*)?\n/,
      "multi-line double-quoted": /"[^"\n]*\\\n/,
      "single-quoted": /'[^'\n]*ZQX/,
      "flow map": /\{ ?\w/,
      "flow sequence": /\[ ?\{?\w/,
      alias: /\*(shared|described|envs|base)\b/,
      "merge key": /<<:/,
      "quoted key": /^\s*["'][A-Za-z_]+["']:/m,
      "commented-out secret": new RegExp(`#[^\\n]*${MARK}`),
      "${env:} value": /\$\{env:/,
    };
    for (const c of fc.sample(configArb(), { numRuns: 200, seed: SEED })) {
      for (const text of [c.svc, c.svcd]) for (const [name, re] of Object.entries(forms)) if (re.test(text)) seen[name] = (seen[name] ?? 0) + 1;
    }
    for (const name of Object.keys(forms)) expect(seen[name] ?? 0, name).toBeGreaterThan(0);
  });
});
