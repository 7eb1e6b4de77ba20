// A33: the fault injection filter's config, envoy.extensions.filters.http.fault.v3.HTTPFault, in a listener's
// http_filters and as a typed_per_filter_config override (A39: the same message type for both). gRPC reads
// delay (fixed_delay or header_delay, with its percentage), abort (grpc_status, http_status mapped to a gRPC
// code, or header_abort, with its percentage) and max_active_faults. The fields A33 defers or leaves out
// (response_rate_limit, headers, upstream_cluster, downstream_nodes, the runtime keys) are ignored, as gRPC
// ignores them. Rejected, naming the field: a delay or abort without its kind (the proto's required oneofs),
// an invalid fixed_delay Duration, a grpc_status that is no gRPC code, an http_status outside the proto's
// [200, 600), a percentage whose denominator is none of HUNDRED / TEN_THOUSAND / MILLION.

import type { Any } from '@bufbuild/protobuf/wkt';
import { Code } from '../../core/index.js';
import type { FaultDelay } from '../../protos/gen/envoy/extensions/filters/common/fault/v3/fault_pb.js';
import {
  type FaultAbort,
  type HTTPFault,
  HTTPFaultSchema,
} from '../../protos/gen/envoy/extensions/filters/http/fault/v3/fault_pb.js';
import {
  type FractionalPercent,
  FractionalPercent_DenominatorType,
} from '../../protos/gen/envoy/type/v3/percent_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { unwrapFilterConfig } from './filter-config.js';
import type { XdsFaultAbort, XdsFaultDelay, XdsFaultFraction, XdsFaultInjection } from './types.js';
import { anyTypeName, durationMs, fail } from './validation.js';

export const FAULT_FILTER_TYPE = HTTPFaultSchema.typeName;

/** The filter's config in a listener's http_filters (`at` names its typed_config). */
export function parseFaultFilter(config: Any, at: string): XdsFaultInjection {
  if (anyTypeName(config, at) !== FAULT_FILTER_TYPE) {
    fail(at, `${FAULT_FILTER_TYPE} must be given as itself, not in a TypedStruct`);
  }
  return faultInjection(decodeOrNack(HTTPFaultSchema, config.value, at), at);
}

/**
 * A typed_per_filter_config entry that is an HTTPFault, bare or inside a route FilterConfig; undefined for any
 * other type (other filters' overrides). It replaces the listener's fault config in its scope.
 */
export function parseFaultOverride(any: Any, at: string): XdsFaultInjection | undefined {
  const unwrapped = unwrapFilterConfig(any, at);
  if (unwrapped === undefined || anyTypeName(unwrapped.config, unwrapped.at) !== FAULT_FILTER_TYPE) {
    return undefined;
  }
  return faultInjection(decodeOrNack(HTTPFaultSchema, unwrapped.config.value, unwrapped.at), unwrapped.at);
}

function faultInjection(h: HTTPFault, at: string): XdsFaultInjection {
  return {
    delay: h.delay === undefined ? undefined : faultDelay(h.delay, `${at}.delay`),
    abort: h.abort === undefined ? undefined : faultAbort(h.abort, `${at}.abort`),
    maxActiveFaults: h.maxActiveFaults,
  };
}

function faultDelay(d: FaultDelay, at: string): XdsFaultDelay {
  const spec = d.faultDelaySecifier;
  switch (spec.case) {
    case 'fixedDelay':
      return {
        kind: 'fixed',
        delayMs: durationMs(spec.value, `${at}.fixed_delay`),
        percentage: fraction(d.percentage, `${at}.percentage`),
      };
    case 'headerDelay':
      return { kind: 'header', percentage: fraction(d.percentage, `${at}.percentage`) };
    default:
      return fail(`${at}.fault_delay_secifier`, 'field not present (expected fixed_delay or header_delay)');
  }
}

/** The largest gRPC status code, UNAUTHENTICATED (16). */
const MAX_GRPC_CODE = Code.UNAUTHENTICATED;

function faultAbort(a: FaultAbort, at: string): XdsFaultAbort {
  const spec = a.errorType;
  switch (spec.case) {
    case 'grpcStatus':
      if (spec.value > MAX_GRPC_CODE) {
        fail(`${at}.grpc_status`, `${spec.value} is not a gRPC status code (0-${MAX_GRPC_CODE})`);
      }
      return {
        kind: 'status',
        code: spec.value as Code,
        httpStatus: undefined,
        percentage: fraction(a.percentage, `${at}.percentage`),
      };
    case 'httpStatus':
      if (!isHttpStatus(spec.value)) fail(`${at}.http_status`, `${spec.value} is out of range [200, 600)`);
      return {
        kind: 'status',
        code: grpcCodeOfHttpStatus(spec.value),
        httpStatus: spec.value,
        percentage: fraction(a.percentage, `${at}.percentage`),
      };
    case 'headerAbort':
      return { kind: 'header', percentage: fraction(a.percentage, `${at}.percentage`) };
    default:
      return fail(
        `${at}.error_type`,
        'field not present (expected http_status, grpc_status or header_abort)',
      );
  }
}

/** FaultAbort.http_status's range in the proto ([200, 600)); the abort header's values outside it are ignored. */
export function isHttpStatus(code: number): boolean {
  return Number.isInteger(code) && code >= 200 && code < 600;
}

const DENOMINATORS: Readonly<Record<number, number>> = {
  [FractionalPercent_DenominatorType.HUNDRED]: 100,
  [FractionalPercent_DenominatorType.TEN_THOUSAND]: 10_000,
  [FractionalPercent_DenominatorType.MILLION]: 1_000_000,
};

/** A percentage as a fraction; unset is Envoy's default, 0 / 100 (no call gets the fault). */
function fraction(p: FractionalPercent | undefined, at: string): XdsFaultFraction {
  if (p === undefined) return { numerator: 0, denominator: 100 };
  const denominator = DENOMINATORS[p.denominator];
  if (denominator === undefined) fail(`${at}.denominator`, `unknown value ${p.denominator}`);
  return { numerator: p.numerator, denominator };
}

/**
 * A33 "Status Code Mapping": an HTTP status as a gRPC code, by gRPC's HTTP to gRPC status mapping
 * (doc/http-grpc-status-mapping.md). Any other status, 200 included ("200/OK Error Injection"), is UNKNOWN.
 */
export function grpcCodeOfHttpStatus(httpStatus: number): Code {
  switch (httpStatus) {
    case 400:
      return Code.INTERNAL;
    case 401:
      return Code.UNAUTHENTICATED;
    case 403:
      return Code.PERMISSION_DENIED;
    case 404:
      return Code.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.UNAVAILABLE;
    default:
      return Code.UNKNOWN;
  }
}
