import type { JobConfig } from "../config/types.js";
import { resolveEnvRefs } from "../config/index.js";
import { paramEnvName, paramText } from "../config/params.js";
import type { SpawnSpec } from "../executor/index.js";
import type { RunRecord } from "../store/types.js";
import type { EngineContext } from "./context.js";
import { findOutputRefs, OutputValues, outputEnvName, renderLiteral, renderShell } from "./renderOutputs.js";

/**
 * Everything resolved at dispatch (SPEC rule 7, CONTRACT §2): output values of
 * the current cycle, the run's params and slot (§7.2, §7.3), `${env:VAR}` in
 * env values, the environment layers.
 * Returns a one-line dispatch error instead when something is missing.
 */
export function prepareSpawn(ctx: EngineContext, run: RunRecord, job: JobConfig, attempt: number): SpawnSpec | { error: string } {
  const values = new OutputValues();
  // The daemon's environment is inherited, not copied: this object holds the run's own variables
  // over the frozen ctx.spawnEnv (child_process reads inherited variables; posixSpawn builds the
  // base's K=V strings once for all runs instead of ~100 per spawn, docs/perf/FIXES.md).
  // Variables are set with setVar: `env[k] = v` throws where the frozen base has k (a read-only inherited property).
  const env = Object.create(ctx.spawnEnv) as Record<string, string>;

  // Every output of the direct upstreams in this cycle is exported as SVC_OUTPUT_*.
  if (job.upstreams.length > 0) {
    const upstreams = new Set(job.upstreams);
    // Newest first: the first value of each (job, name) is the latest attempt's, and it stays.
    for (const row of ctx.store.outputs.search({ cycle_id: run.cycle_id }, 10_000, 0).rows) {
      if (upstreams.has(row.job_name) && values.get(row.job_name, row.var_name) === undefined) values.set(row.job_name, row.var_name, row.value);
    }
  }
  // Every declared param is exported (empty when it has no value); the values are the run's own,
  // a param declared after the run was created takes its default.
  const declared = Object.values(job.params);
  if (declared.length > 0) {
    const stored = ctx.store.runs.paramValues(run.id)?.values ?? {};
    for (const p of declared) {
      const v = stored[p.name] ?? p.default;
      const text = v === null || v === undefined ? "" : paramText(v);
      values.setParam(p.name, text);
      setVar(env, paramEnvName(p.name), text);
    }
  }
  values.setScheduledAt(run.scheduled_at ?? "");
  const texts = [...(typeof job.command === "string" ? [job.command] : job.command), ...Object.values(job.env)];
  for (const text of texts) {
    for (const ref of findOutputRefs(text)) {
      if (values.get(ref.job, ref.varName) !== undefined) continue;
      const value = ctx.store.outputs.lookup(run.cycle_id, ref.job, ref.varName);
      if (value === null) {
        return {
          error:
            `dispatch: no value for outputs.${ref.job}.${ref.varName} in this cycle (${run.cycle_id}): ` +
            `job ${ref.job} recorded no "${ref.varName}" output in it`,
        };
      }
      values.set(ref.job, ref.varName, value);
    }
  }
  for (const [k, v] of Object.entries(job.env)) {
    const resolved = resolveEnvRefs(v, ctx.baseEnv, ctx.project.dotenv);
    if ("unset" in resolved) {
      return {
        error:
          `dispatch: environment variable ${resolved.unset} is not set (jobs.${job.name}.env.${k} uses \${env:${resolved.unset}}): ` +
          `set it in the daemon's environment or in .env beside svc.yaml`,
      };
    }
    setVar(env, k, renderLiteral(resolved.value, values));
  }
  for (const row of exportedOutputs(values, texts, job)) setVar(env, row.name, row.value);
  setVar(env, "SVC_JOB", job.name);
  setVar(env, "SVC_RUN_ID", String(run.id));
  setVar(env, "SVC_CYCLE_ID", run.cycle_id);
  setVar(env, "SVC_ATTEMPT", String(attempt));
  setVar(env, "SVC_TRIGGER", run.trigger);
  setVar(env, "SVC_SCHEDULED_AT", run.scheduled_at ?? "");
  const command =
    typeof job.command === "string" ? renderShell(job.command, values) : job.command.map((a) => renderLiteral(a, values));
  return { command, shell: ctx.daemon.executor.shell, cwd: ctx.project.dir, env };
}

/** A run's own variable, over the inherited one of the same name if any. */
function setVar(env: Record<string, string>, name: string, value: string): void {
  Object.defineProperty(env, name, { value, writable: true, enumerable: true, configurable: true });
}

function exportedOutputs(values: OutputValues, texts: string[], job: JobConfig): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  const seen = new Set<string>();
  const add = (j: string, v: string) => {
    const value = values.get(j, v);
    const name = outputEnvName(j, v);
    if (value !== undefined && !seen.has(name)) {
      seen.add(name);
      out.push({ name, value });
    }
  };
  for (const text of texts) for (const ref of findOutputRefs(text)) add(ref.job, ref.varName);
  for (const up of job.upstreams) for (const v of values.varsOf(up)) add(up, v);
  return out;
}
