// A39 "Filter Config Overrides": a typed_per_filter_config value is the filter's override config itself, or an
// envoy.config.route.v3.FilterConfig wrapping it. Each filter's override parser unwraps it here first.

import type { Any } from '@bufbuild/protobuf/wkt';
import { FilterConfigSchema } from '../../protos/gen/envoy/config/route/v3/route_components_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { anyTypeName } from './validation.js';

const FILTER_CONFIG_TYPE = FilterConfigSchema.typeName;

/** The override config and its path (`at`, or `at.config` inside a wrapper); undefined: a wrapper without one. */
export function unwrapFilterConfig(
  any: Any,
  at: string,
): { readonly config: Any; readonly at: string } | undefined {
  if (anyTypeName(any, at) !== FILTER_CONFIG_TYPE) return { config: any, at };
  const wrapper = decodeOrNack(FilterConfigSchema, any.value, at);
  if (wrapper.config === undefined) return undefined;
  return { config: wrapper.config, at: `${at}.config` };
}
