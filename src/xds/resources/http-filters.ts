// HttpConnectionManager.http_filters on a gRPC client (A39 "HTTP filters", as A27 / A28 / A31 use them): the
// filters run in order and the router, the one terminal filter, must be last; the A55 stateful_session filter
// and the A33 fault injection filter may come before it. A filter type this client does
// not know is a NACK unless the filter is marked is_optional, in which case it is left out.

import type { Any } from '@bufbuild/protobuf/wkt';
import { RouterSchema } from '../../protos/gen/envoy/extensions/filters/http/router/v3/router_pb.js';
import type { HttpFilter } from '../../protos/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.js';
import { TypedStructSchema as UdpaTypedStructSchema } from '../../protos/gen/udpa/type/v1/typed_struct_pb.js';
import { TypedStructSchema } from '../../protos/gen/xds/type/v3/typed_struct_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { FAULT_FILTER_TYPE, parseFaultFilter } from './fault.js';
import { parseStatefulSessionFilter, STATEFUL_SESSION_FILTER_TYPE } from './stateful-session.js';
import type { XdsHttpFilter } from './types.js';
import { anyTypeName, fail } from './validation.js';

/** What the client knows about one HTTP filter type. */
interface HttpFilterType {
  /** Only the router is terminal: it must be the last filter, and the last filter must be terminal. */
  readonly terminal: boolean;
  /** Checks the filter's config (the Any's bytes), rejecting it naming `at`, and returns what it parsed. */
  parse(config: Any, at: string): Pick<XdsHttpFilter, 'statefulSession' | 'fault'>;
}

export const ROUTER_FILTER_TYPE = RouterSchema.typeName;

const ROUTER: HttpFilterType = {
  terminal: true,
  // The Router's fields are all ignored by gRPC, but its bytes must decode (a TypedStruct is taken as is).
  parse: (config: Any, at: string) => {
    if (anyTypeName(config, at) === ROUTER_FILTER_TYPE) decodeOrNack(RouterSchema, config.value, at);
    return {};
  },
};

/** A55 (on unless GRPC_EXPERIMENTAL_XDS_ENABLE_OVERRIDE_HOST is "false"). */
const STATEFUL_SESSION: HttpFilterType = {
  terminal: false,
  parse: (config: Any, at: string) => {
    if (anyTypeName(config, at) !== STATEFUL_SESSION_FILTER_TYPE) {
      fail(at, `${STATEFUL_SESSION_FILTER_TYPE} must be given as itself, not in a TypedStruct`);
    }
    return { statefulSession: parseStatefulSessionFilter(config, at) };
  },
};

/** A33 (on in gRPC since GRPC_XDS_EXPERIMENTAL_FAULT_INJECTION was retired). */
const FAULT: HttpFilterType = {
  terminal: false,
  parse: (config: Any, at: string) => ({ fault: parseFaultFilter(config, at) }),
};

function clientFilter(typeName: string, options: HttpFilterOptions): HttpFilterType | undefined {
  if (typeName === ROUTER_FILTER_TYPE) return ROUTER;
  if (typeName === FAULT_FILTER_TYPE) return FAULT;
  if (typeName === STATEFUL_SESSION_FILTER_TYPE && options.overrideHost) return STATEFUL_SESSION;
  return undefined;
}

/** The feature switches that decide which filter types are known. */
export interface HttpFilterOptions {
  readonly overrideHost: boolean;
}

const TYPED_STRUCTS = new Set<string>([TypedStructSchema.typeName, UdpaTypedStructSchema.typeName]);

/** The filter's type: the Any's message name, or the name inside a TypedStruct wrapper. */
function filterTypeName(config: Any, at: string): string {
  const name = anyTypeName(config, at);
  if (!TYPED_STRUCTS.has(name)) return name;
  const schema = name === TypedStructSchema.typeName ? TypedStructSchema : UdpaTypedStructSchema;
  const struct = decodeOrNack(schema, config.value, at);
  const inner = struct.typeUrl.slice(struct.typeUrl.lastIndexOf('/') + 1);
  if (inner === '')
    fail(`${at}.type_url`, `invalid type URL ${JSON.stringify(struct.typeUrl)} in the TypedStruct`);
  return inner;
}

/** Validates the filter chain; `at` is the path of the http_filters field. */
export function parseHttpFilters(
  filters: readonly HttpFilter[],
  at: string,
  options: HttpFilterOptions = { overrideHost: true },
): XdsHttpFilter[] {
  if (filters.length === 0) fail(at, 'must not be empty (the router filter must be last)');
  const result: XdsHttpFilter[] = [];
  const indices: number[] = [];
  const names = new Map<string, number>();
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    const fat = `${at}[${i}]`;
    if (f.name === '') fail(`${fat}.name`, 'must not be empty');
    const first = names.get(f.name);
    if (first !== undefined) fail(`${fat}.name`, `duplicate filter name "${f.name}" (also ${at}[${first}])`);
    names.set(f.name, i);
    const configType = f.configType;
    if (configType.case !== 'typedConfig') {
      if (f.isOptional) continue;
      if (configType.case === 'configDiscovery') {
        fail(`${fat}.config_discovery`, 'filter config discovery is not supported');
      }
      fail(`${fat}.typed_config`, 'field not present');
    }
    const config = configType.value;
    const configAt = `${fat}.typed_config`;
    const typeName = filterTypeName(config, configAt);
    const type = clientFilter(typeName, options);
    if (type === undefined) {
      if (f.isOptional) continue;
      fail(configAt, `unsupported HTTP filter type ${typeName} (not marked is_optional)`);
    }
    const parsed = type.parse(config, configAt);
    result.push({
      name: f.name,
      typeName,
      config: { typeUrl: config.typeUrl, value: config.value },
      ...parsed,
    });
    indices.push(i);
  }
  // The terminal rules apply to the filters kept (optional filters left out do not count), as in gRPC.
  if (result.length === 0)
    fail(at, `no supported filter (the router filter, ${ROUTER_FILTER_TYPE}, must be last)`);
  for (let k = 0; k < result.length; k++) {
    const terminal = clientFilter(result[k]!.typeName, options)!.terminal;
    const last = k === result.length - 1;
    if (terminal && !last)
      fail(`${at}[${indices[k]}]`, `the terminal filter ${result[k]!.typeName} must be the last filter`);
    if (!terminal && last)
      fail(`${at}[${indices[k]}]`, `the last filter must be the router (${ROUTER_FILTER_TYPE})`);
  }
  return result;
}
