// A count and its noun as a person writes them: `1 address`, `2 addresses`, `0 calls`.

export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
