import type { ConfigIssue } from "../lib/types.js";

/** Config errors as `svc validate` prints them: `svc.yaml:12:5: jobs.extract.time: message`. */
export function issueText(i: ConfigIssue): string {
  const where = [i.file, i.line || null, i.column || null].filter((x) => x !== null && x !== "").join(":");
  const path = i.path ? i.path.replace(/^\//, "").replace(/\//g, ".") : "";
  return [where, path, i.message].filter(Boolean).join(": ");
}

export function IssueList({ issues, kind = "error" }: { issues: ConfigIssue[]; kind?: "error" | "warning" }) {
  if (issues.length === 0) return null;
  return (
    <ul class={`issues issues-${kind}`}>
      {issues.map((i, n) => (
        <li key={n}>
          <span class="issue-kind">{kind}</span> {issueText(i)}
        </li>
      ))}
    </ul>
  );
}
