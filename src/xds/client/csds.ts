import { create } from '@bufbuild/protobuf';
import { AnySchema, timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  ClientResourceStatus,
  UpdateFailureStateSchema,
} from '../../protos/gen/envoy/admin/v3/config_dump_shared_pb.js';
import {
  type ClientConfig,
  ClientConfig_GenericXdsConfigSchema,
  ClientConfigSchema,
} from '../../protos/gen/envoy/service/status/v3/csds_pb.js';
import type { XdsResourceStatus } from './cache-entry.js';
import type { XdsClientDump } from './dump.js';
import { nodeProto } from './node.js';

/** A88 added TIMEOUT (6) to ClientResourceStatus after the Envoy protos lbtree generates from. */
const TIMEOUT_STATUS = 6 as ClientResourceStatus;

const CLIENT_STATUS: Record<XdsResourceStatus, ClientResourceStatus> = {
  REQUESTED: ClientResourceStatus.REQUESTED,
  DOES_NOT_EXIST: ClientResourceStatus.DOES_NOT_EXIST,
  ACKED: ClientResourceStatus.ACKED,
  NACKED: ClientResourceStatus.NACKED,
  TIMEOUT: TIMEOUT_STATUS,
};

/**
 * The dump as a CSDS `ClientConfig` (A40): one GenericXdsConfig per resource, with the resource as received,
 * its version and status, and the failed update. The dump's times are Clock milliseconds; `wallNowMs` (the
 * wall time of the dump, default Date.now()) places them on the calendar.
 */
export function toCsdsClientConfig(dump: XdsClientDump, wallNowMs: number = Date.now()): ClientConfig {
  const wall = (clockMs: number) => timestampFromMs(Math.round(wallNowMs - dump.now + clockMs));
  return create(ClientConfigSchema, {
    node: nodeProto(dump.node),
    genericXdsConfigs: dump.resources.map((r) =>
      create(ClientConfig_GenericXdsConfigSchema, {
        typeUrl: r.typeUrl,
        name: r.name,
        versionInfo: r.version ?? '',
        clientStatus: CLIENT_STATUS[r.status],
        ...(r.raw && { xdsConfig: create(AnySchema, { typeUrl: r.typeUrl, value: r.raw }) }),
        ...(r.lastUpdated !== undefined && { lastUpdated: wall(r.lastUpdated) }),
        ...(r.error && {
          errorState: create(UpdateFailureStateSchema, {
            details: r.error.details,
            versionInfo: r.error.version,
            lastUpdateAttempt: wall(r.error.at),
          }),
        }),
      }),
    ),
  });
}
