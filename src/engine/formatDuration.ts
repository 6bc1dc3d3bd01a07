/** 5000 -> "5s", 90000 -> "1m30s", 3600000 -> "1h", 250 -> "250ms": the duration syntax of svc.yaml. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  let rest = Math.round(ms);
  let out = "";
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  if (rest > 0) out += `${rest}ms`;
  return out;
}
