/** Did-you-mean for a mistyped name (a profile, a node, a command): the closest known name, if it is close. */

/** Levenshtein distance; transposed neighbours count once (`bets` → `best` is 1), as people mistype. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** The one known name closest to `name` (at most a third of its letters off, at least one; names of 3+ letters), or null. */
export function closest(name: string, known: Iterable<string>): string | null {
  if (name.length < 3) return null; // `z` is one letter from every one-letter name: no guess
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestD = Infinity;
  let ties = 0;
  for (const k of known) {
    const dist = distance(name.toLowerCase(), k.toLowerCase());
    if (dist < bestD) [best, bestD, ties] = [k, dist, 0];
    else if (dist === bestD) ties += 1;
  }
  // spark9 is as close to spark1 as to spark2: no guess then.
  return bestD <= limit && ties === 0 ? best : null;
}

/** `unknown node "spark9"; did you mean spark1? known nodes: …` — one line, the suggestion only when one is close. */
export function unknownName(what: string, name: string, known: readonly string[]): string {
  const guess = closest(name, known);
  return `unknown ${what} "${name}"; ${guess ? `did you mean ${guess}? ` : ''}known ${what}s: ${known.join(', ')}`;
}
