/** Did-you-mean suggestions for misspelt field and job names. */

/** The allowed name nearest to `word` by edit distance, when it is close enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDist = Infinity;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestDist) {
      best = c;
      bestDist = d;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return best !== null && bestDist <= limit ? best : null;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
