// Shared pieces of resource validation: failing with a field path (the NACK reason), protobuf Durations and
// FractionalPercents as gRPC reads them, RE2 compilation, an Any's type name, and the decode wrapper every
// resource type uses (bytes are decoded by src/protos/decode.ts's decodeOrNack).

import type { Any, Duration } from '@bufbuild/protobuf/wkt';
import type { RE2JS } from 're2js';
import { re2js } from '../../hash/index.js';
import {
  type FractionalPercent,
  FractionalPercent_DenominatorType,
} from '../../protos/gen/envoy/type/v3/percent_pb.js';
import type { XdsDecodeResult } from '../client/resource-type.js';
import { XdsResourceError } from './errors.js';
import { chargeRe2, compiledBefore, re2EstimateProblem, resetRe2Budget } from './re2-limits.js';

/** Rejects the resource: `field` is the path inside it in proto field names, `problem` says what is wrong. */
export function fail(field: string, problem: string): never {
  throw new XdsResourceError(field, problem);
}

/** The largest Duration protobuf allows (10,000 years), as in the Duration documentation and A50 / A75. */
const MAX_DURATION_SECONDS = 315_576_000_000n;

/** A Duration in milliseconds, after the checks of the Duration documentation (seconds and nanos in range, not negative). */
export function durationMs(d: Duration, field: string): number {
  if (d.seconds < 0n || d.seconds > MAX_DURATION_SECONDS) {
    fail(`${field}.seconds`, `${d.seconds} is out of range [0, ${MAX_DURATION_SECONDS}]`);
  }
  if (d.nanos < 0 || d.nanos > 999_999_999)
    fail(`${field}.nanos`, `${d.nanos} is out of range [0, 999999999]`);
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

/** An optional Duration in milliseconds (undefined when unset). */
export function optionalDurationMs(d: Duration | undefined, field: string): number | undefined {
  return d === undefined ? undefined : durationMs(d, field);
}

/** A validated Duration in proto3 JSON form (`"1.500s"`), as gRPC LB configs take it. */
export function durationJson(d: Duration, field: string): string {
  durationMs(d, field);
  if (d.nanos === 0) return `${d.seconds}s`;
  return `${d.seconds}.${String(d.nanos).padStart(9, '0').replace(/0+$/, '')}s`;
}

const PARTS_PER_MILLION: Readonly<Record<number, number>> = {
  [FractionalPercent_DenominatorType.HUNDRED]: 10_000,
  [FractionalPercent_DenominatorType.TEN_THOUSAND]: 100,
  [FractionalPercent_DenominatorType.MILLION]: 1,
};

/** A FractionalPercent as parts per million, capped at 100%; an unknown denominator is rejected. */
export function perMillion(p: FractionalPercent, field: string): number {
  const factor = PARTS_PER_MILLION[p.denominator];
  if (factor === undefined) fail(`${field}.denominator`, `unknown value ${p.denominator}`);
  return Math.min(1_000_000, p.numerator * factor);
}

/**
 * Compiles an RE2 pattern (re2js, linear time); invalid syntax, or a program over the limits of
 * re2-limits.ts (per regex and per resource), is a NACK at `field`.
 */
export function compileRe2(pattern: string, field: string, flags = 0): RE2JS {
  const before = compiledBefore(pattern, flags);
  if (before !== undefined) return before;
  const tooBig = re2EstimateProblem(pattern);
  if (tooBig !== undefined) fail(field, `RE2 regular expression ${quoteShort(pattern)} ${tooBig}`);
  let regex: RE2JS;
  try {
    regex = re2js().RE2JS.compile(pattern, flags);
  } catch (e) {
    if (!(e instanceof re2js().RE2JSException)) throw e;
    return fail(field, `invalid RE2 regular expression ${quoteShort(pattern)}: ${e.message}`);
  }
  const over = chargeRe2(pattern, flags, regex);
  if (over !== undefined) fail(field, `RE2 regular expression ${quoteShort(pattern)} ${over}`);
  return regex;
}

/** A pattern for a NACK reason: quoted, and cut short when long (a hostile one can be kilobytes). */
function quoteShort(pattern: string): string {
  return pattern.length <= 100
    ? JSON.stringify(pattern)
    : `${JSON.stringify(pattern.slice(0, 100))}… (${pattern.length} characters)`;
}

/** The message name an Any's type URL names (its last `/` segment); an empty name is a NACK. */
export function anyTypeName(any: Any, field: string): string {
  const name = any.typeUrl.slice(any.typeUrl.lastIndexOf('/') + 1);
  if (name === '') fail(`${field}.type_url`, `invalid type URL ${JSON.stringify(any.typeUrl)}`);
  return name;
}

/**
 * Runs one resource's decode and validation: an {@link XdsResourceError} becomes `{ ok: false }` with its
 * message as the NACK reason and the resource name once it is known; any other exception is a bug and is
 * rethrown.
 */
export function decodeResource<M, T>(
  decode: () => M,
  nameOf: (message: M) => string,
  validate: (message: M) => T,
): XdsDecodeResult<T> {
  let name: string | undefined;
  resetRe2Budget();
  try {
    const message = decode();
    name = nameOf(message);
    return { ok: true, name, value: validate(message) };
  } catch (e) {
    if (!(e instanceof XdsResourceError)) throw e;
    return { ok: false, name, error: e.message };
  }
}
