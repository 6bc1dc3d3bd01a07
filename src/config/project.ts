/**
 * svc.yaml -> ProjectConfig, in two stages (raw YAML checked by the JSON
 * Schema, then semantic rules), collecting every error with its position.
 */
import { basename, dirname, resolve } from "node:path";
import { DepGraph } from "../graph/depGraph.js";
import { findOutputRefs, findParamRefs } from "./outputRefs.js";
import type { ConfigIssue, IntegrationConfig, JobConfig, LoadResult, ProjectConfig } from "./types.js";
import { loadDotenv } from "./env.js";
import { buildIntegration } from "./integrations.js";
import { finalize, IssueList, type Locate, type PathSeg, type RawIssue } from "./issues.js";
import { buildJob, defaultExpression, unknownZoneMessage } from "./jobs.js";
import { outputEnvName } from "./params.js";
import { readConfigText } from "./readText.js";
import { closest } from "./suggest.js";
import { schemaIssues } from "./schemaCheck.js";
import { asDict, deepFreeze, isDict, isKnownZone, isString, isStringList, systemZone } from "./values.js";
import { parseYamlText } from "./yamlSource.js";
import { exposedSecrets } from "./redactText.js";
import { REDACTED } from "./views.js";

export interface LoadOptions {
  /**
   * Report warnings (default true). The daemon passes false: it shows none,
   * and locating them (file:line for each) means parsing the file again,
   * which is a third of the load time when many jobs lack a description.
   */
  warnings?: boolean;
}

/** Loads svc.yaml from disk. Never throws: every failure is a ConfigIssue. */
export function loadProject(file: string, env: NodeJS.ProcessEnv = process.env, opts: LoadOptions = {}): LoadResult<ProjectConfig> {
  const abs = resolve(file);
  const read = readConfigText(abs);
  if (!read.ok) {
    return {
      ok: false,
      errors: [{ file: abs, line: read.line, column: read.column, path: "", message: read.message }],
      warnings: [],
    };
  }
  return parseProjectText(read.text, abs, env, opts);
}

/**
 * Parses svc.yaml text as if it were the file `file` (its directory is the
 * jobs' working directory and where `.env` is read). Never throws.
 */
export function parseProjectText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: LoadOptions = {},
): LoadResult<ProjectConfig> {
  const abs = resolve(file);
  try {
    return parseUnsafe(text, abs, env, opts.warnings ?? true);
  } catch (e) {
    // A bug here must still not escape as a stack trace to the CLI or the API.
    const message = `internal error while loading: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, errors: [{ file: abs, line: 0, column: 0, path: "", message }], warnings: [] };
  }
}

function parseUnsafe(text: string, file: string, env: NodeJS.ProcessEnv, wantWarnings: boolean): LoadResult<ProjectConfig> {
  const parsed = parseYamlText(text);
  if (!parsed.ok) return { ok: false, errors: finalize(parsed.issues, file, null), warnings: [] };
  const data = parsed.value;
  const issues = new IssueList();
  if (data === null || data === undefined) {
    issues.error([], "the file is empty: expected a map with a jobs: section");
  } else {
    issues.errors.push(...schemaIssues("svc", data));
  }

  const dotenv = loadDotenv(file);
  if (dotenv.error) issues.warn([], dotenv.error);
  const built = buildProject(asDict(data), file, env, dotenv.vars, issues, () => fileOrder(asDict(asDict(data).jobs), parsed.locator));
  if (parsed.aliased) hideExposedDescriptions(built, exposedSecrets("svc.yaml", text));

  if (issues.errors.length === 0 && (issues.warnings.length === 0 || !wantWarnings) && built.graph.cycle === null) {
    return { ok: true, value: deepFreezeProject(built), warnings: [] };
  }
  const locate = parsed.locator();
  if (built.graph.cycle) issues.errors.push(cycleIssue(built.graph, built.jobs, file, locate));
  const errors = sortIssues(finalize(issues.errors, file, locate));
  const warnings = sortIssues(finalize(issues.warnings, file, locate));
  if (errors.length > 0) return { ok: false, errors, warnings };
  built.warnings.push(...warnings);
  return { ok: true, value: deepFreezeProject(built), warnings };
}

/**
 * Records the secrets also written in plain fields through an anchor, and
 * hides a description that is one: descriptions are shown in every view of a
 * job (the job list, notifications), not only the config views that
 * hideExposed covers (views.ts).
 */
function hideExposedDescriptions(project: ProjectConfig, exposed: string[]): void {
  project.exposedSecrets = exposed;
  const hidden = new Set(exposed);
  for (const job of project.jobs.values()) if (job.description !== null && hidden.has(job.description)) job.description = REDACTED;
}

/**
 * Job names in file order. A parsed map is a JavaScript object, which lists
 * integer-like keys ("0", "42") first whatever the file says; only when
 * such a name is present are positions computed to put them back.
 */
function fileOrder(jobsRaw: Record<string, unknown>, locator: () => Locate): string[] {
  const names = Object.keys(jobsRaw);
  if (!names.some((n) => /^(?:0|[1-9]\d*)$/.test(n) && Number(n) < 2 ** 32 - 1)) return names;
  const locate = locator();
  const at = new Map(names.map((n) => [n, locate(["jobs", n])]));
  return names.sort((a, b) => at.get(a)!.line - at.get(b)!.line || at.get(a)!.column - at.get(b)!.column);
}

function buildProject(
  root: Record<string, unknown>,
  file: string,
  env: NodeJS.ProcessEnv,
  dotenv: Record<string, string>,
  issues: IssueList,
  jobOrder: () => string[] = () => Object.keys(asDict(root.jobs)),
): ProjectConfig {
  const defaults = asDict(root.defaults);
  let defaultTimezone: string | null = null;
  if (isString(defaults.timezone) && defaults.timezone !== "") {
    if (isKnownZone(defaults.timezone)) defaultTimezone = defaults.timezone;
    else issues.error(["defaults", "timezone"], unknownZoneMessage(defaults.timezone));
  }
  // Only asked for when needed: the first Intl call of a process costs ~20-40 ms here.
  defaultTimezone ??= systemZone();

  const integrations = new Map<string, IntegrationConfig>();
  const broken = new Set<string>();
  for (const [name, raw] of Object.entries(asDict(root.integrations))) {
    const built = buildIntegration(name, raw, env, dotenv, issues);
    if (built) integrations.set(name, built);
    else broken.add(name);
  }

  const jobsRaw = asDict(root.jobs);
  const jobs = new Map<string, JobConfig>();
  const ctx = {
    defaults,
    defaultTz: defaultTimezone,
    integrations,
    brokenIntegrations: broken,
    issues,
    dir: dirname(file),
    calendars: new Map(),
    defaultCron: defaultExpression(defaults, issues),
  };
  for (const name of jobOrder()) {
    const raw = jobsRaw[name];
    if (!isDict(raw)) continue; // schema reported it
    jobs.set(name, buildJob(name, raw, ctx));
  }
  checkTargets(jobsRaw, jobs, issues);
  const graph = new DepGraph(jobs.values());
  if (!graph.cycle) checkOutputRefs(jobs, graph, issues);
  checkParamRefs(jobs, issues);
  checkOutputEnvNames(jobs, issues);

  return {
    file,
    dir: dirname(file),
    jobs,
    integrations,
    dotenv,
    warnings: [],
    graph,
    defaultTimezone,
    exposedSecrets: [],
  };
}

/** Unknown `depends_on` and `after:` targets, named with where they are written. */
function checkTargets(jobsRaw: Record<string, unknown>, jobs: ReadonlyMap<string, JobConfig>, issues: IssueList): void {
  const names = [...jobs.keys()];
  for (const job of jobs.values()) {
    const raw = asDict(jobsRaw[job.name]);
    if (isStringList(raw.depends_on)) {
      raw.depends_on.forEach((dep, i) => {
        if (!jobs.has(dep)) {
          issues.error(["jobs", job.name, "depends_on", i], `unknown job "${dep}" in depends_on of job "${job.name}"${suggest(dep, names)}`);
        }
      });
    }
    if (job.after !== null && !jobs.has(job.after)) issues.error(["jobs", job.name, "frequency"], unknownAfter(job.name, job.after, names));
  }
}

/**
 * `{{ outputs.<job>.<var> }}` must name an upstream (direct or transitive) job
 * and one of its `output` variables: values only flow down one trigger chain,
 * so any other reference could never have a value at dispatch.
 */
function checkOutputRefs(jobs: ReadonlyMap<string, JobConfig>, graph: DepGraph, issues: IssueList): void {
  for (const job of jobs.values()) {
    const places = placeholderPlaces(job);
    let ancestors: Set<string> | null = null;
    for (const [path, text] of places) {
      for (const ref of findOutputRefs(text)) {
        const source = jobs.get(ref.job);
        if (!source) {
          issues.error(path, `${ref.text}: there is no job "${ref.job}"${suggest(ref.job, [...jobs.keys()])}`);
          continue;
        }
        // Both problems at once: fixing only the output would still leave a value that never arrives.
        ancestors ??= new Set(graph.ancestors(job.name));
        const upstream = ancestors.has(ref.job);
        const notUpstream = `job "${ref.job}" is not upstream of "${job.name}", so its outputs never reach it; add "${ref.job}" to jobs.${job.name}.depends_on or use frequency after:${ref.job}`;
        if (!Object.hasOwn(source.output, ref.varName)) {
          const known = Object.keys(source.output);
          const noOutput =
            `job "${ref.job}" has no output "${ref.varName}"` +
            (known.length ? ` (it captures ${known.join(", ")})` : ` (declare it under jobs.${ref.job}.output, e.g. ${ref.varName}: last_line)`);
          issues.error(path, `${ref.text}: ${noOutput}${upstream ? "" : `, and ${notUpstream}`}`);
          continue;
        }
        if (!upstream) issues.error(path, `${ref.text}: ${notUpstream}`);
      }
    }
  }
}

/** Where a job's placeholders can be: each command (or argument) and env value, with its path. */
function placeholderPlaces(job: JobConfig): [PathSeg[], string][] {
  const places: [PathSeg[], string][] =
    typeof job.command === "string"
      ? [[["jobs", job.name, "command"], job.command]]
      : job.command.map((arg, i): [PathSeg[], string] => [["jobs", job.name, "command", i], arg]);
  for (const [k, v] of Object.entries(job.env)) places.push([["jobs", job.name, "env", k], v]);
  return places;
}

/**
 * A job gets its direct upstreams' outputs as `SVC_OUTPUT_<JOB>_<VAR>` (upper case, other characters as
 * `_`): two of them with one name (`rows` and `ROWS`; jobs `x-y` and `x_y` upstream of one job) would pass
 * one value for both. Unrelated jobs may share a name: no job gets both.
 */
function checkOutputEnvNames(jobs: ReadonlyMap<string, JobConfig>, issues: IssueList): void {
  const reported = new Set<string>();
  for (const consumer of jobs.values()) {
    const seen = new Map<string, string>();
    for (const up of consumer.upstreams) {
      const job = jobs.get(up);
      if (!job) continue;
      for (const varName of Object.keys(job.output)) {
        const env = outputEnvName(job.name, varName);
        const mine = `outputs.${job.name}.${varName}`;
        const other = seen.get(env);
        if (other === undefined) seen.set(env, mine);
        else if (other !== mine && !reported.has(mine)) {
          reported.add(mine);
          issues.error(["jobs", job.name, "output", varName], `${mine} and ${other} both reach job ${consumer.name} as ${env}: rename one`);
        }
      }
    }
  }
}

/** `{{ params.<name> }}` must name a param the job declares (CONTRACT §7.2). */
function checkParamRefs(jobs: ReadonlyMap<string, JobConfig>, issues: IssueList): void {
  for (const job of jobs.values()) {
    for (const [path, text] of placeholderPlaces(job)) {
      for (const ref of findParamRefs(text)) {
        if (Object.hasOwn(job.params, ref.name)) continue;
        const declared = Object.keys(job.params);
        issues.error(
          path,
          `${ref.text}: job "${job.name}" declares no param "${ref.name}"${suggest(ref.name, declared)}` +
            (declared.length ? ` (it declares ${declared.join(", ")})` : ` (declare it under jobs.${job.name}.params)`),
        );
      }
    }
  }
}

/**
 * `after:<job>` naming no job, with a did-you-mean for each name it could
 * have meant: `after:extrct`, `after: extract` (a space), `after:a,b` (a
 * list, which depends_on is for).
 */
function unknownAfter(job: string, after: string, names: readonly string[]): string {
  const where = `in frequency after:${after} of job "${job}"`;
  const parts = after.split(",").map((p) => p.trim());
  if (parts.length > 1) {
    const hints = parts.filter((p) => !names.includes(p)).map((p) => `"${p}"${suggest(p, names) || " is not a job"}`);
    return `after: names one job, but ${where} lists ${parts.length}: write them as depends_on: [${parts.join(", ")}]${hints.length ? ` (${hints.join("; ")})` : ""}`;
  }
  const name = parts[0]!;
  if (name !== after && names.includes(name)) return `unknown job "${after}" ${where}: remove the space, after:${name}`;
  return `unknown job "${name}" ${where}${suggest(name, names)}`;
}

function suggest(name: string, names: readonly string[]): string {
  const hit = closest(name, names);
  return hit ? ` (did you mean "${hit}"?)` : "";
}

/**
 * The cycle as one error at its first edge, naming every edge and the
 * file:line where it is declared:
 *   dependency cycle: a -> b -> a (b depends_on a at svc.yaml:9; a after:b at svc.yaml:4)
 */
function cycleIssue(graph: DepGraph, jobs: ReadonlyMap<string, JobConfig>, file: string, locate: Locate): RawIssue {
  const cycle = graph.cycle!;
  const name = basename(file);
  const parts: string[] = [];
  let firstPath: PathSeg[] | null = null;
  for (let i = 0; i + 1 < cycle.length; i++) {
    const from = cycle[i]!;
    const to = cycle[i + 1]!;
    const edge = graph.edge(from, to);
    const job = jobs.get(to)!;
    const path: PathSeg[] =
      edge?.kind === "after" ? ["jobs", to, "frequency"] : ["jobs", to, "depends_on", job.dependsOn.indexOf(from)];
    firstPath ??= path;
    const how = edge?.kind === "after" ? `after:${from}` : `depends_on ${from}`;
    parts.push(`${to} ${how} at ${name}:${locate(path).line}`);
  }
  return {
    path: firstPath ?? ["jobs"],
    message: `dependency cycle: ${cycle.join(" -> ")} (${parts.join("; ")}); remove one of these edges`,
  };
}

function sortIssues(list: ConfigIssue[]): ConfigIssue[] {
  return list.sort((a, b) => a.line - b.line || a.column - b.column);
}

function deepFreezeProject(p: ProjectConfig): ProjectConfig {
  for (const job of p.jobs.values()) deepFreeze(job);
  for (const i of p.integrations.values()) deepFreeze(i);
  deepFreeze(p.dotenv);
  deepFreeze(p.warnings);
  return Object.freeze(p);
}
