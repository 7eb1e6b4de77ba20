import { ConfigError } from './config-error.js';

/** google.protobuf.Duration's largest value: 10,000 years in seconds. */
const MAX_DURATION_SECONDS = 315_576_000_000;

/**
 * A google.protobuf.Duration in a JSON config, as milliseconds. Accepts proto3 JSON's string form (`"10s"`,
 * `"0.250s"`) and the object form (`{ seconds, nanos }`) that some config generators emit. Negative and
 * out-of-range values are rejected, as A50 and A58 require for their durations.
 */
export function expectDurationMs(value: unknown, path: string): number {
  let seconds: number;
  let nanos: number;
  if (typeof value === 'string') {
    const m = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(value);
    if (!m)
      throw new ConfigError(
        path,
        `expected a duration such as "10s" or "0.5s", got ${JSON.stringify(value)}`,
      );
    if (m[1] === '-') throw new ConfigError(path, `must not be negative, got ${value}`);
    seconds = Number(m[2]);
    nanos = m[3] === undefined ? 0 : Number(m[3].padEnd(9, '0'));
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    seconds = durationPart(o.seconds, `${path}.seconds`);
    nanos = durationPart(o.nanos, `${path}.nanos`);
    if (nanos > 999_999_999)
      throw new ConfigError(`${path}.nanos`, `must be at most 999999999, got ${nanos}`);
  } else {
    throw new ConfigError(path, `expected a duration such as "10s", got ${describeValue(value)}`);
  }
  if (seconds > MAX_DURATION_SECONDS) {
    throw new ConfigError(path, `must be at most ${MAX_DURATION_SECONDS} seconds, got ${seconds}`);
  }
  return seconds * 1000 + nanos / 1e6;
}

function durationPart(value: unknown, path: string): number {
  if (value === undefined || value === null) return 0;
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) {
    throw new ConfigError(path, `expected an integer, got ${describeValue(value)}`);
  }
  if (n < 0) throw new ConfigError(path, `must not be negative, got ${n}`);
  return n;
}

function describeValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return `number ${String(value)}`;
  return value === null ? 'null' : `${typeof value} ${JSON.stringify(value)}`;
}
