// A78's XdsClient metrics (with A88's cache states): experimental, so off by default. The client records them
// through the MetricsRecorder the first channel with one hands it (A79: a client shared by channels uses the
// first channel's stats plugins).

import { type InstrumentDescriptor, registerInstrument, TARGET_LABEL } from '../../core/index.js';
import type { CacheEntry } from './cache-entry.js';

export const XDS_SERVER_LABEL = 'grpc.xds.server';
export const XDS_AUTHORITY_LABEL = 'grpc.xds.authority';
export const XDS_CACHE_STATE_LABEL = 'grpc.xds.cache_state';
export const XDS_RESOURCE_TYPE_LABEL = 'grpc.xds.resource_type';

export const XDS_CLIENT_CONNECTED = registerInstrument({
  name: 'grpc.xds_client.connected',
  description: 'Whether or not the xDS client currently has a working ADS stream to the xDS server.',
  unit: '{bool}',
  type: 'gauge',
  labels: [TARGET_LABEL, XDS_SERVER_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const XDS_CLIENT_SERVER_FAILURE = registerInstrument({
  name: 'grpc.xds_client.server_failure',
  description: 'A counter of xDS servers going from healthy to unhealthy.',
  unit: '{failure}',
  type: 'counter',
  labels: [TARGET_LABEL, XDS_SERVER_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const XDS_CLIENT_RESOURCE_UPDATES_VALID = registerInstrument({
  name: 'grpc.xds_client.resource_updates_valid',
  description: 'A counter of resources received that were considered valid.',
  unit: '{resource}',
  type: 'counter',
  labels: [TARGET_LABEL, XDS_SERVER_LABEL, XDS_RESOURCE_TYPE_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const XDS_CLIENT_RESOURCE_UPDATES_INVALID = registerInstrument({
  name: 'grpc.xds_client.resource_updates_invalid',
  description: 'A counter of resources received that were considered invalid.',
  unit: '{resource}',
  type: 'counter',
  labels: [TARGET_LABEL, XDS_SERVER_LABEL, XDS_RESOURCE_TYPE_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const XDS_CLIENT_RESOURCES = registerInstrument({
  name: 'grpc.xds_client.resources',
  description: 'Number of xDS resources.',
  unit: '{resource}',
  type: 'gauge',
  labels: [TARGET_LABEL, XDS_AUTHORITY_LABEL, XDS_CACHE_STATE_LABEL, XDS_RESOURCE_TYPE_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});

/** Every instrument the XdsClient records (a channel sharing the client shows these from the client's recorder). */
export const XDS_CLIENT_INSTRUMENTS: ReadonlySet<InstrumentDescriptor> = new Set<InstrumentDescriptor>([
  XDS_CLIENT_CONNECTED,
  XDS_CLIENT_SERVER_FAILURE,
  XDS_CLIENT_RESOURCE_UPDATES_VALID,
  XDS_CLIENT_RESOURCE_UPDATES_INVALID,
  XDS_CLIENT_RESOURCES,
]);

const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** A78's resource type label: the message name, e.g. "envoy.config.listener.v3.Listener". */
export function resourceTypeLabel(typeUrl: string): string {
  return typeUrl.startsWith(TYPE_URL_PREFIX) ? typeUrl.slice(TYPE_URL_PREFIX.length) : typeUrl;
}

/** A78's cache_state label, with A88's "timeout". */
export function cacheStateLabel(entry: CacheEntry<unknown>): string {
  switch (entry.status) {
    case 'REQUESTED':
      return 'requested';
    case 'DOES_NOT_EXIST':
      return 'does_not_exist';
    case 'ACKED':
      return 'acked';
    case 'NACKED':
      return entry.hasValue ? 'nacked_but_cached' : 'nacked';
    case 'TIMEOUT':
      return 'timeout';
  }
}
