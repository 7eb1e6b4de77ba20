// The xds_override_host_experimental config: A55's OverrideHostLoadBalancingPolicyConfig (child_policy,
// override_host_status) with A74's clusterName, whose XdsConfig entry supplies the override_host_status when
// the policy runs under lbtree's xds resolver. Without an XdsConfig (the simulator, a hand-written service
// config) the config's own overrideHostStatus applies, and without that A55's default set.

import {
  ConfigError,
  ConfigReader,
  describeValue,
  expectArray,
  type ParsedLbConfig,
  type PolicyLookup,
} from '../../../core/index.js';
import { XDS_OVERRIDE_HOST } from '../../policy-names.js';
import { DEFAULT_OVERRIDE_HOST_STATUS, type XdsHealthStatus } from '../../resources/health-status.js';

export { DEFAULT_OVERRIDE_HOST_STATUS, XDS_OVERRIDE_HOST };

const HEALTH_STATUSES: ReadonlySet<string> = new Set<XdsHealthStatus>(['UNKNOWN', 'HEALTHY', 'DRAINING']);

export interface OverrideHostConfig {
  /** A74: the cluster whose XdsConfig entry holds override_host_status (absent: use the fields below). */
  readonly clusterName: string | undefined;
  /** A55: the EDS health statuses an endpoint may have and still be picked by a cookie. */
  readonly overrideHostStatus: readonly XdsHealthStatus[];
  readonly childPolicy: ParsedLbConfig;
}

export function parseOverrideHostConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): OverrideHostConfig {
  const reader = new ConfigReader(json, path);
  const clusterName = reader.optionalString('clusterName');
  const statuses = reader.field('overrideHostStatus');
  let overrideHostStatus = DEFAULT_OVERRIDE_HOST_STATUS;
  if (statuses !== undefined) {
    const list = expectArray(statuses.value, statuses.path);
    overrideHostStatus = list.map((s, i) => {
      if (typeof s !== 'string' || !HEALTH_STATUSES.has(s)) {
        throw new ConfigError(
          `${statuses.path}[${i}]`,
          `expected "UNKNOWN", "HEALTHY" or "DRAINING", got ${describeValue(s)}`,
        );
      }
      return s as XdsHealthStatus;
    });
  }
  const child = reader.required('childPolicy');
  return {
    clusterName: clusterName === '' ? undefined : clusterName,
    overrideHostStatus,
    childPolicy: registry.parseLbConfigList(child.value, child.path),
  };
}
