// Builders for xDS resources in proto3 JSON form, encoded to protobuf bytes for the byte-level API.
import assert from 'node:assert/strict';
import type { PolicyFactory } from '../../src/core/index.js';
import { type LeastRequestConfig, leastRequestFactory } from '../../src/policies/index.js';
import {
  type ClusterOptions,
  clusterLbConfig,
  convertLoadBalancingPolicy,
  encodeCluster,
  encodeLoadBalancingPolicy,
  type LbConfigList,
  XdsResourceError,
} from '../../src/xds/index.js';

const PREFIX = 'type.googleapis.com/';
export const TYPE = {
  ringHash: `${PREFIX}envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash`,
  roundRobin: `${PREFIX}envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin`,
  wrrLocality: `${PREFIX}envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality`,
  leastRequest: `${PREFIX}envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest`,
  pickFirst: `${PREFIX}envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst`,
  maglev: `${PREFIX}envoy.extensions.load_balancing_policies.maglev.v3.Maglev`,
  xdsTypedStruct: `${PREFIX}xds.type.v3.TypedStruct`,
  udpaTypedStruct: `${PREFIX}udpa.type.v1.TypedStruct`,
};

type Json = Record<string, unknown>;

/** A LoadBalancingPolicy with one Policy per typed config, named p0, p1, … */
export function lbp(...typedConfigs: Json[]): Json {
  return {
    policies: typedConfigs.map((typedConfig, i) => ({
      typedExtensionConfig: { name: `p${i}`, typedConfig },
    })),
  };
}

export const roundRobin = (): Json => ({ '@type': TYPE.roundRobin });
export const ringHash = (fields: Json = {}): Json => ({ '@type': TYPE.ringHash, ...fields });
export const wrrLocality = (child: Json): Json => ({
  '@type': TYPE.wrrLocality,
  endpointPickingPolicy: child,
});
export const leastRequest = (fields: Json = {}): Json => ({ '@type': TYPE.leastRequest, ...fields });
export const pickFirst = (fields: Json = {}): Json => ({ '@type': TYPE.pickFirst, ...fields });
export const maglev = (): Json => ({ '@type': TYPE.maglev });
export function typedStruct(typeUrl: string, value?: Json, which: 'xds' | 'udpa' = 'xds'): Json {
  return {
    '@type': which === 'xds' ? TYPE.xdsTypedStruct : TYPE.udpaTypedStruct,
    typeUrl,
    ...(value !== undefined ? { value } : {}),
  };
}

/** convertLoadBalancingPolicy on the encoded form of a LoadBalancingPolicy written as JSON. */
export function convert(policyJson: Json, options: ClusterOptions = {}): LbConfigList {
  return convertLoadBalancingPolicy(encodeLoadBalancingPolicy(policyJson), options);
}

/** clusterLbConfig on the encoded form of a Cluster written as JSON. */
export function clusterConfig(clusterJson: Json, options: ClusterOptions = {}): LbConfigList {
  return clusterLbConfig(encodeCluster(clusterJson), options);
}

/** Asserts that `fn` NACKs with exactly this field path and a problem matching `problem`. */
export function nacks(fn: () => unknown, field: string, problem: RegExp): XdsResourceError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof XdsResourceError, `expected an XdsResourceError, got ${e}`);
    assert.equal(e.field, field, e.message);
    assert.match(e.problem, problem);
    return e;
  }
  assert.fail('expected a NACK');
}

/** An EDS cluster using ADS, with extra fields. */
export function edsCluster(fields: Json = {}): Json {
  return { name: 'cluster-a', type: 'EDS', edsClusterConfig: { edsConfig: { ads: {} } }, ...fields };
}

export interface EndpointSpec {
  readonly address: string;
  readonly port?: number;
  readonly additional?: readonly string[];
  readonly weight?: number;
  readonly health?: string;
  readonly hashKey?: unknown;
}

function socket(address: string, port = 80): Json {
  return { socketAddress: { address, portValue: port } };
}

export function lbEndpoint(spec: EndpointSpec | string): Json {
  const s: EndpointSpec = typeof spec === 'string' ? { address: spec } : spec;
  return {
    endpoint: {
      address: socket(s.address, s.port),
      ...(s.additional
        ? { additionalAddresses: s.additional.map((a) => ({ address: socket(a, s.port) })) }
        : {}),
    },
    ...(s.weight !== undefined ? { loadBalancingWeight: s.weight } : {}),
    ...(s.health !== undefined ? { healthStatus: s.health } : {}),
    ...(s.hashKey !== undefined
      ? { metadata: { filterMetadata: { 'envoy.lb': { hash_key: s.hashKey } } } }
      : {}),
  };
}

export interface LocalitySpec {
  readonly zone: string;
  readonly weight?: number | null;
  readonly priority?: number;
  readonly endpoints: readonly (EndpointSpec | string)[];
}

/** A ClusterLoadAssignment; localities are in region "r", named by zone; weight defaults to 1. */
export function assignment(localities: readonly LocalitySpec[], clusterName = 'cluster-a'): Json {
  return {
    clusterName,
    endpoints: localities.map((l) => ({
      locality: { region: 'r', zone: l.zone },
      ...(l.weight !== null ? { loadBalancingWeight: l.weight ?? 1 } : {}),
      ...(l.priority !== undefined ? { priority: l.priority } : {}),
      lbEndpoints: l.endpoints.map(lbEndpoint),
    })),
  };
}

/** The LOCALITY key lbtree gives a locality in region "r" with this zone. */
export function zoneKey(zone: string): string {
  return `{region=r,zone=${zone},sub_zone=}`;
}

/**
 * A52's example custom policy: least_request under another name, recording each config it is built with, so
 * a test can see that the control plane's choice reached it.
 */
export function customLeastRequest(name = 'myorg.MyCustomLeastRequestPolicy'): {
  factory: PolicyFactory<LeastRequestConfig>;
  configs: LeastRequestConfig[];
  instances: number;
} {
  const record = { configs: [] as LeastRequestConfig[], instances: 0 };
  const factory: PolicyFactory<LeastRequestConfig> = {
    name,
    parseConfig: (json, path, registry) => leastRequestFactory.parseConfig(json, path, registry),
    create(helper, registry) {
      record.instances++;
      const inner = leastRequestFactory.create(helper, registry);
      return {
        update(update) {
          record.configs.push(update.config);
          return inner.update(update);
        },
        exitIdle: () => inner.exitIdle(),
        resetBackoff: () => inner.resetBackoff(),
        destroy: () => inner.destroy(),
      };
    },
  };
  return Object.assign(record, { factory });
}
