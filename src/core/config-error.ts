/**
 * A rejected configuration. `path` is the JSON path of the first problem (`$.loadBalancingConfig[0]
 * .priority_experimental.children.p0`), so the message tells an operator exactly what to fix.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/** `$.a` + `b` → `$.a.b`; names that are not identifiers are bracket-quoted. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
