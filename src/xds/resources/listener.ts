// LDS: a client-side envoy.config.listener.v3.Listener (A27 "Listener Proto"): its api_listener must hold an
// HttpConnectionManager that names a RouteConfiguration to fetch over RDS (ConfigSource ads or self) or carries
// one inline; its HTTP filters end in the router (A39); A31's default max_stream_duration comes from
// common_http_protocol_options.

import { type Listener, ListenerSchema } from '../../protos/gen/envoy/config/listener/v3/listener_pb.js';
import {
  type HttpConnectionManager,
  HttpConnectionManagerSchema,
} from '../../protos/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.js';
import { LISTENER_TYPE_URL } from '../../protos/type-urls.js';
import type { XdsResourceType } from '../client/resource-type.js';
import { isAdsOrSelf } from './config-source.js';
import { decodeOrNack } from './decode-or-nack.js';
import { type HttpFilterOptions, parseHttpFilters } from './http-filters.js';
import { parseRouteConfiguration } from './route-configuration.js';
import type { XdsListener, XdsRouteSource } from './types.js';
import { anyTypeName, decodeResource, fail, optionalDurationMs } from './validation.js';
import { decodeOptions } from './xds-options.js';

const HCM_AT = 'api_listener.api_listener';

export function parseListener(l: Listener, options: HttpFilterOptions = { overrideHost: true }): XdsListener {
  if (l.apiListener === undefined) fail('api_listener', 'field not present (not a client-side listener)');
  const any = l.apiListener.apiListener;
  if (any === undefined) fail(HCM_AT, 'field not present');
  const typeName = anyTypeName(any, HCM_AT);
  if (typeName !== HttpConnectionManagerSchema.typeName) {
    fail(HCM_AT, `expected ${HttpConnectionManagerSchema.typeName}, got ${typeName}`);
  }
  const hcm = decodeOrNack(HttpConnectionManagerSchema, any.value, HCM_AT);
  return {
    name: l.name,
    routeSource: routeSource(hcm),
    httpFilters: parseHttpFilters(hcm.httpFilters, `${HCM_AT}.http_filters`, options),
    maxStreamDurationMs: optionalDurationMs(
      hcm.commonHttpProtocolOptions?.maxStreamDuration,
      `${HCM_AT}.common_http_protocol_options.max_stream_duration`,
    ),
  };
}

function routeSource(hcm: HttpConnectionManager): XdsRouteSource {
  const spec = hcm.routeSpecifier;
  switch (spec.case) {
    case 'rds': {
      const at = `${HCM_AT}.rds`;
      if (spec.value.configSource === undefined) fail(`${at}.config_source`, 'field not present');
      if (!isAdsOrSelf(spec.value.configSource))
        fail(`${at}.config_source`, 'ConfigSource is not ads or self');
      if (spec.value.routeConfigName === '') fail(`${at}.route_config_name`, 'must not be empty');
      return { kind: 'rds', routeConfigName: spec.value.routeConfigName };
    }
    case 'routeConfig':
      return { kind: 'inline', routeConfig: parseRouteConfiguration(spec.value, `${HCM_AT}.route_config`) };
    case 'scopedRoutes':
      return fail(`${HCM_AT}.scoped_routes`, 'scoped routes are not supported (use rds or route_config)');
    case undefined:
      return fail(`${HCM_AT}.route_specifier`, 'field not present (expected rds or route_config)');
  }
}

/** LDS (A27): a Listener missing from a state-of-the-world response has been deleted. */
export const listenerResourceType: XdsResourceType<XdsListener> = {
  typeUrl: LISTENER_TYPE_URL,
  allResourcesRequiredInSotW: true,
  decode: (bytes, context) =>
    decodeResource(
      () => decodeOrNack(ListenerSchema, bytes),
      (l) => l.name,
      (l) => parseListener(l, decodeOptions(context)),
    ),
};
