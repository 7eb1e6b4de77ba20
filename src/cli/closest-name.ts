// "Did you mean …?" for a misspelled key: the valid name nearest to what was typed, by edit distance.

/**
 * Edits (insert, delete, substitute, or swap two neighbouring letters: `fial` → `fail` is one) that turn `a`
 * into `b`, ignoring case: the optimal string alignment distance.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // d[i][j]: the distance between the first i letters of s and the first j of t.
  const d = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[s.length]![t.length]!;
}

/**
 * The name of `names` nearest to `typed`, when it is near enough to be what was meant: at most one edit in
 * three letters typed (so `fial` finds `fail`, and `explode` finds nothing). Ties go to the earlier name.
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.ceil(typed.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of names) {
    const distance = editDistance(typed, name);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}
