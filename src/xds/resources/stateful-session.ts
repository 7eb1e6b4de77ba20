// A55 "Listener and Route Configuration through xDS": the stateful_session HTTP filter
// (envoy.extensions.filters.http.stateful_session.v3.StatefulSession whose session_state is the cookie
// extension, CookieBasedSessionState) and its per-route override (StatefulSessionPerRoute), validated as gRPC
// does: the session state must be the cookie extension, the cookie needs a name, ttl must be a valid
// non-negative Duration. A filter without a session_state does nothing.

import type { Any } from '@bufbuild/protobuf/wkt';
import {
  type StatefulSession,
  type StatefulSessionPerRoute,
  StatefulSessionPerRouteSchema,
  StatefulSessionSchema,
} from '../../protos/gen/envoy/extensions/filters/http/stateful_session/v3/stateful_session_pb.js';
import { CookieBasedSessionStateSchema } from '../../protos/gen/envoy/extensions/http/stateful_session/cookie/v3/cookie_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { unwrapFilterConfig } from './filter-config.js';
import type { XdsSessionCookie, XdsStatefulSession, XdsStatefulSessionOverride } from './types.js';
import { anyTypeName, durationMs, fail } from './validation.js';

export const STATEFUL_SESSION_FILTER_TYPE = StatefulSessionSchema.typeName;
export const STATEFUL_SESSION_PER_ROUTE_TYPE = StatefulSessionPerRouteSchema.typeName;
const COOKIE_SESSION_STATE_TYPE = CookieBasedSessionStateSchema.typeName;

/** The filter's config in a listener's http_filters (`at` names its typed_config). */
export function parseStatefulSessionFilter(config: Any, at: string): XdsStatefulSession {
  return statefulSession(decodeOrNack(StatefulSessionSchema, config.value, at), at);
}

function statefulSession(s: StatefulSession, at: string): XdsStatefulSession {
  const state = s.sessionState;
  if (state === undefined) return { cookie: undefined };
  const typedAt = `${at}.session_state.typed_config`;
  if (state.typedConfig === undefined) fail(typedAt, 'field not present');
  const typeName = anyTypeName(state.typedConfig, typedAt);
  if (typeName !== COOKIE_SESSION_STATE_TYPE) {
    fail(typedAt, `unsupported session state ${typeName} (expected ${COOKIE_SESSION_STATE_TYPE})`);
  }
  const cookie = decodeOrNack(CookieBasedSessionStateSchema, state.typedConfig.value, typedAt).cookie;
  const cookieAt = `${typedAt}.cookie`;
  if (cookie === undefined || cookie.name === '') fail(`${cookieAt}.name`, 'must not be empty');
  const parsed: XdsSessionCookie = {
    name: cookie.name,
    path: cookie.path,
    ttlMs: cookie.ttl === undefined ? 0 : durationMs(cookie.ttl, `${cookieAt}.ttl`),
  };
  return { cookie: parsed };
}

/**
 * A typed_per_filter_config entry that is a StatefulSessionPerRoute, bare or inside a route FilterConfig;
 * undefined for any other type (kept opaque for other filters). `stateful_session` replaces the listener's
 * config for the virtual host / route / weighted cluster; `disabled` (or neither field) turns the filter off.
 */
export function parseStatefulSessionOverride(any: Any, at: string): XdsStatefulSessionOverride | undefined {
  const unwrapped = unwrapFilterConfig(any, at);
  if (unwrapped === undefined) return undefined;
  const { config, at: configAt } = unwrapped;
  if (anyTypeName(config, configAt) !== STATEFUL_SESSION_PER_ROUTE_TYPE) return undefined;
  const perRoute: StatefulSessionPerRoute = decodeOrNack(
    StatefulSessionPerRouteSchema,
    config.value,
    configAt,
  );
  const override = perRoute.override;
  if (override.case === 'statefulSession') {
    return { disabled: false, config: statefulSession(override.value, `${configAt}.stateful_session`) };
  }
  // `disabled: true`; as in gRPC C-core, an override with neither field also leaves no cookie to use.
  return { disabled: true };
}
