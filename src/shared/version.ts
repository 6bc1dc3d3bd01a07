import { readFileSync } from "node:fs";

/** The package version (`svc --version`, `/api/status`, the dashboard badge). */
export const VERSION: string = (() => {
  // src/shared/version.ts and dist/shared/version.js both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
})();
