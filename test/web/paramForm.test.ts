/**
 * The run form's pure parts (src/web/lib/paramForm.ts): what the
 * form starts with and the `params` it sends.
 */
import { describe, expect, it } from "vitest";
import { initialInputs, paramsBody, type ParamDecl } from "../../src/web/lib/paramForm.js";

const decl = (over: Partial<ParamDecl>): ParamDecl => ({ type: "string", default: null, required: false, values: null, pattern: null, description: null, secret: false, ...over });

describe("the run form's params", () => {
  it("a secret boolean's default is not shown and not overridden: left out until ticked or unticked", () => {
    // The job's config view shows a secret default as ***.
    const decls = { flag: decl({ type: "boolean", default: "***", secret: true }), plain: decl({ type: "boolean", default: true }) };
    const start = initialInputs(decls);
    expect(start).toEqual({ flag: "", plain: true });
    expect(paramsBody(decls, start)).toEqual({ plain: true });
    expect(paramsBody(decls, { ...start, flag: false })).toEqual({ flag: false, plain: true });
    expect(paramsBody(decls, { ...start, flag: true })).toEqual({ flag: true, plain: true });
  });

  it("other secret defaults stay empty and are left out; plain ones are sent typed", () => {
    const decls = { tok: decl({ default: "***", secret: true }), n: decl({ type: "integer", default: 3 }) };
    const start = initialInputs(decls);
    expect(start).toEqual({ tok: "", n: "3" });
    expect(paramsBody(decls, start)).toEqual({ n: 3 });
  });
});
