/**
 * `svc import crontab` (CONTRACT §7.1): a crontab's text -> svc.yaml text,
 * one job per crontab line. Pure: the command reads the file and writes
 * the result.
 *
 * - Each schedule becomes `frequency: "cron:<the five fields>"` (macros kept
 *   as written), checked with the loader's own parser.
 * - `VAR=value` lines go into the `env` of every following job; `CRON_TZ=`
 *   and `TZ=` set the `timezone` of the following jobs.
 * - `--system` (/etc/crontab, /etc/cron.d) reads a user field after the
 *   schedule; it is kept as a comment (svc runs every job as its own user).
 * - What svc cannot do stays as a comment saying why: `@reboot`, a `%` in the
 *   command (cron feeds what follows to the command's stdin), `MAILTO`,
 *   `SHELL`, unknown zones, bad lines.
 * - The crontab's own comments are kept above the job they precede.
 * - `\%` in a command is cron's escape for a literal `%`.
 */
import { CRON_MACROS, parseCron } from "./cron.js";
import { JOB_NAME_PATTERN, VAR_NAME_PATTERN } from "./schema/svcSchema.js";
import { cronNeverMatches } from "../schedule/cronMatch.js";

export interface ImportOptions {
  /** The /etc/crontab form, with a user field. */
  system: boolean;
  /** Where the text came from, for the header ("/etc/crontab", "stdin"). */
  source: string;
  /** Is this an IANA zone? (the loader's check) */
  isZone: (name: string) => boolean;
}

export interface ImportResult {
  yaml: string;
  jobs: number;
  /** Lines that stayed comments because svc cannot run them as written. */
  skipped: { line: number; text: string; why: string }[];
}

/** Programs that say little about a job: their first argument names it better (run-parts /etc/cron.daily). */
const RUNNERS = new Set([
  "run-parts", "sh", "bash", "dash", "zsh", "python", "python3", "perl", "php", "ruby", "node", "env", "nice", "ionice",
  "nohup", "flock", "timeout", "sudo", "su", "exec", "echo", "printf", "curl", "wget", "docker", "make", "chronic",
]);
const SCRIPT_EXT = /\.(?:sh|bash|py|pl|rb|php|js|mjs|ts)$/;
const YAML_WORDS = /^(?:true|false|null|yes|no|on|off|y|n|~)$/i;
const JOB_NAME = new RegExp(JOB_NAME_PATTERN);
const VAR_NAME = new RegExp(VAR_NAME_PATTERN);

export function importCrontab(text: string, opts: ImportOptions): ImportResult {
  const out: string[] = [];
  const skipped: ImportResult["skipped"] = [];
  const names = new Set<string>();
  const env: Record<string, string> = {};
  let timezone: string | null = null;
  let pending: string[] = []; // the crontab's own comments, waiting for the next job
  let jobs = 0;

  const keep = (line: number, raw: string, why: string): void => {
    skipped.push({ line, text: raw, why });
    pending.push(`# not imported (line ${line}): ${raw.trim()}`, `#   ${why}`);
  };

  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === "") return;
    if (trimmed.startsWith("#")) {
      pending.push(`# ${trimmed.replace(/^#\s?/, "")}`.trimEnd());
      return;
    }
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed);
    if (assign && !/^[0-9*@]/.test(trimmed)) {
      const name = assign[1]!;
      const value = unquote(assign[2]!);
      if (name === "CRON_TZ" || name === "TZ") {
        if (value === "") {
          // cron's reset: back to the system's zone.
          timezone = null;
          pending.push(`# ${trimmed}: the jobs below run in svc's default zone`);
        } else if (opts.isZone(value)) {
          timezone = value;
          pending.push(`# ${trimmed}: the jobs below run in timezone ${value}`);
        } else {
          timezone = null;
          keep(line, raw, `unknown time zone "${value}": the jobs below keep svc's default zone`);
        }
      } else if (name === "MAILTO" || name === "MAILFROM") {
        keep(line, raw, `svc does not mail job output: it keeps it in its log; use notify: (docs/NOTIFICATIONS.md) to be told of failures`);
      } else if (name === "SHELL" && (value === "/bin/sh" || value === "/usr/bin/sh")) {
        pending.push(`# ${trimmed}: svc's default shell too (executor.shell in svcd.yaml)`);
      } else if (name === "SHELL") {
        keep(line, raw, `svc runs string commands with executor.shell of svcd.yaml (default /bin/sh): set it there`);
      } else if (!VAR_NAME.test(name)) {
        keep(line, raw, `"${name}" is not a valid environment variable name for svc`);
      } else {
        env[name] = value;
      }
      return;
    }
    const entry = parseEntry(trimmed, opts.system);
    if ("why" in entry) {
      keep(line, raw, entry.why);
      return;
    }
    const command = commandText(entry.command);
    if ("why" in command) {
      keep(line, raw, command.why);
      return;
    }
    if (command.text.includes("{{")) {
      keep(line, raw, "its command holds {{, which svc reads as a placeholder ({{ params.x }}, {{ outputs.job.x }}): put the command in a script and run that");
      return;
    }
    const parsed = parseCron(entry.schedule);
    if (!parsed.ok) {
      keep(line, raw, parsed.message);
      return;
    }
    if (cronNeverMatches(parsed.spec)) {
      keep(line, raw, "the schedule can never match (no date passes its day fields)");
      return;
    }
    const name = uniqueName(nameFor(command.text), names);
    jobs += 1;
    out.push(...pending.map((c) => `  ${c}`));
    pending = [];
    out.push(`  # crontab line ${line}${entry.user ? `, ran as user ${entry.user} (svc runs it as the daemon's user)` : ""}`);
    out.push(`  ${yamlKey(name)}:`);
    out.push(`    description: ${JSON.stringify(`from crontab line ${line}: ${clip(command.text)}`)}`);
    out.push(`    command: ${JSON.stringify(command.text)}`);
    out.push(`    frequency: ${JSON.stringify(`cron:${entry.schedule}`)}`);
    if (timezone !== null) out.push(`    timezone: ${JSON.stringify(timezone)}`);
    const vars = Object.entries(env);
    if (vars.length > 0) {
      out.push(`    env:`);
      for (const [k, v] of vars) out.push(`      ${k}: ${JSON.stringify(v)}`);
    }
  });

  const header = [
    `# svc.yaml imported from ${opts.source} by \`svc import crontab${opts.system ? " --system" : ""}\`.`,
    "# Differences from cron to know: a job does not start while its previous run is still",
    "# running (concurrency: forbid; set concurrency: allow for cron's behaviour); output is",
    "# kept in svc's log instead of mailed; jobs run as the daemon's user, with its environment",
    "# plus env: below, from the directory of this file. Check with: svc validate; svc next <job>",
  ];
  const body = jobs === 0 ? ["jobs: {}", ...pending] : ["jobs:", ...out, ...pending.map((c) => `  ${c}`)];
  return { yaml: [...header, ...body, ""].join("\n"), jobs, skipped };
}

type Entry = { schedule: string; user: string | null; command: string } | { why: string };

function parseEntry(line: string, system: boolean): Entry {
  if (line.startsWith("@")) {
    const m = system ? /^(@\S+)\s+(\S+)\s+(.+)$/.exec(line) : /^(@\S+)\s+(.+)$/.exec(line);
    if (!m) return { why: `a macro line needs ${system ? "a user and " : ""}a command` };
    const macro = m[1]!.toLowerCase();
    if (macro === "@reboot") {
      return { why: "@reboot runs at boot, and svc has no boot event: start it from a systemd unit, or give it a schedule" };
    }
    if (CRON_MACROS[macro] === undefined) return { why: `unknown macro ${m[1]}` };
    return { schedule: m[1]!, user: system ? m[2]! : null, command: (system ? m[3] : m[2])!.trim() };
  }
  const re = system ? /^(\S+\s+\S+\s+\S+\s+\S+\s+\S+)\s+(\S+)\s+(.+)$/ : /^(\S+\s+\S+\s+\S+\s+\S+\s+\S+)\s+(.+)$/;
  const m = re.exec(line);
  if (!m) {
    return { why: system ? "expected 5 schedule fields, a user and a command (the /etc/crontab form)" : "expected 5 schedule fields and a command" };
  }
  return { schedule: m[1]!.split(/\s+/).join(" "), user: system ? m[2]! : null, command: (system ? m[3] : m[2])!.trim() };
}

/** cron's `%` rules: `\%` is a literal %, an unescaped % starts the command's stdin (which svc cannot give). */
function commandText(command: string): { text: string } | { why: string } {
  let text = "";
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\" && command[i + 1] === "%") {
      text += "%";
      i++;
    } else if (c === "%") {
      return { why: "an unescaped % sends the rest of the line to the command's stdin in cron; svc gives jobs no stdin (write the input to a file, or escape it as \\% if you meant a literal %)" };
    } else {
      text += c;
    }
  }
  return { text };
}

/** A readable job name from the command: its program, or for runners (run-parts, sh, python...) also what they run. */
function nameFor(command: string): string {
  const tokens = command.split(/\s+/).filter((t) => t !== "");
  let i = 0;
  // Skip what guards or prepares the real command: `cd / &&`, `test -x x ||`, `[ ... ] &&`, VAR=x, braces.
  for (let guard = 0; guard < 20 && i < tokens.length; guard++) {
    const t = tokens[i]!;
    const sep = tokens.slice(i).findIndex((x) => x === "&&" || x === "||" || x === ";" || x.endsWith(";"));
    if ((t === "cd" || t === "test" || t === "[" || t === "[[") && sep > 0) i += sep + 1;
    else if (t === "{" || t === "(" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) i += 1;
    else break;
  }
  const word = (t: string | undefined) => (t ?? "").replace(/^["'({]+|["');}]+$/g, "");
  const base = (t: string) => (t.split("/").pop() ?? t).replace(SCRIPT_EXT, "");
  const program = base(word(tokens[i]));
  let name = program;
  if (RUNNERS.has(program)) {
    const arg = tokens.slice(i + 1).map(word).find((t) => t !== "" && !t.startsWith("-") && !/^[0-9]+$/.test(t));
    if (arg) name = `${program}-${base(arg)}`;
  }
  return sanitize(name);
}

function sanitize(name: string): string {
  const s = name
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/[-.]+$/, "")
    .slice(0, 56);
  return s === "" ? "job" : s;
}

function uniqueName(name: string, taken: Set<string>): string {
  let n = name;
  for (let k = 2; taken.has(n) || !JOB_NAME.test(n); k++) n = `${name}-${k}`;
  taken.add(n);
  return n;
}

function yamlKey(name: string): string {
  return YAML_WORDS.test(name) || /^[0-9]/.test(name) ? JSON.stringify(name) : name;
}

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t[t.length - 1] === t[0]) return t.slice(1, -1);
  return t;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
