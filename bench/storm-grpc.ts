/**
 * The connect storm's comparison harness: @grpc/grpc-js's round_robin and @grpc/grpc-js-xds's priority,
 * weighted_target, xds_wrr_locality and ring_hash (registered through their setup functions, as grpc-js-xds's
 * register() does) under a fake channel helper, driven endpoint by endpoint.
 */
import {
  experimental,
  connectivityState as GrpcState,
  type LoadBalancingConfig,
  Metadata,
} from '@grpc/grpc-js';
// Loaded first for its side effect: grpc-js-xds parses Envoy protos when its policies load, and finds
// google/protobuf/descriptor.proto only once proto-loader has registered the well-known protos.
import '@grpc/proto-loader';
import * as grpcJsXdsPriority from '@grpc/grpc-js-xds/build/src/load-balancer-priority.js';
import * as grpcJsXdsRingHash from '@grpc/grpc-js-xds/build/src/load-balancer-ring-hash.js';
import * as grpcJsXdsWeightedTarget from '@grpc/grpc-js-xds/build/src/load-balancer-weighted-target.js';
import * as grpcJsXdsWrrLocality from '@grpc/grpc-js-xds/build/src/load-balancer-xds-wrr-locality.js';
import { FakeSubchannel } from './grpc-js-harness.js';
import {
  address,
  lookupKeys,
  requestHashes,
  ringSize,
  type Shape,
  type StormHarness,
} from './storm-shapes.js';

let grpcJsXdsRegistered = false;
function registerGrpcJsXds(): void {
  if (grpcJsXdsRegistered) return;
  grpcJsXdsPriority.setup();
  grpcJsXdsWeightedTarget.setup();
  grpcJsXdsWrrLocality.setup();
  grpcJsXdsRingHash.setup();
  grpcJsXdsRegistered = true;
}

const localityName = (i: number) => `{region=r,zone=z${i},sub_zone=}`;

function grpcConfig(policy: string, shape: Shape, n: number): Record<string, unknown> {
  const rr = [{ round_robin: {} }];
  switch (policy) {
    case 'weighted_target':
      return {
        weighted_target: {
          targets: Object.fromEntries(
            Array.from({ length: n }, (_, i) => [`t${i}`, { weight: 1 + (i % 3), child_policy: rr }]),
          ),
        },
      };
    case 'xds_wrr_locality':
      return { xds_wrr_locality: { child_policy: rr } };
    case 'priority': {
      const child = shape === 'xds-one-locality' ? [{ xds_wrr_locality: { child_policy: rr } }] : rr;
      return {
        priority: {
          children: { p0: { config: child, ignore_reresolution_requests: false } },
          priorities: ['p0'],
        },
      };
    }
    case 'ring_hash':
      return { ring_hash: { min_ring_size: ringSize(n), max_ring_size: ringSize(n) } };
    default:
      return { round_robin: {} };
  }
}

function grpcEndpoints(shape: Shape, n: number): experimental.Endpoint[] {
  return Array.from({ length: n }, (_, i) => {
    const a = address(i);
    const colon = a.lastIndexOf(':');
    const addresses = [{ host: a.slice(0, colon), port: Number(a.slice(colon + 1)) }];
    switch (shape) {
      case 'target-per-endpoint':
        return { addresses, localityPath: [`t${i}`] };
      case 'locality-per-endpoint':
        return {
          addresses,
          localityPath: [localityName(i)],
          locality: { region: 'r', zone: `z${i}`, sub_zone: '' },
          localityWeight: 1 + (i % 3),
        };
      case 'one-priority':
        return { addresses, localityPath: ['p0'] };
      case 'xds-one-locality':
        return {
          addresses,
          localityPath: ['p0', localityName(0)],
          locality: { region: 'r', zone: 'z0', sub_zone: '' },
          localityWeight: 1,
        };
      default:
        return { addresses };
    }
  }) as experimental.Endpoint[];
}

export function createGrpcJs(policy: string, shape: Shape, n: number, connectAtOnce = false): StormHarness {
  registerGrpcJsXds();
  const pool = new Map<string, FakeSubchannel>();
  let state: GrpcState = GrpcState.IDLE;
  let picker: experimental.Picker | null = null;
  let reported: (() => void) | null = null;
  const helper: experimental.ChannelControlHelper = {
    createSubchannel(a) {
      const key = experimental.subchannelAddressToString(a);
      let sub = pool.get(key);
      if (!sub) {
        sub = new FakeSubchannel(key);
        if (connectAtOnce) {
          // Its connection is up when the policy creates it: READY from the start. (grpc-js's pick_first asks
          // for connections in a process.nextTick, after the update has returned.)
          sub.startConnecting();
          sub.transition(GrpcState.READY);
        }
        pool.set(key, sub);
      }
      return sub;
    },
    updateState(s, p) {
      state = s;
      picker = p;
      reported?.();
    },
    requestReresolution() {},
    addChannelzChild() {},
    removeChannelzChild() {},
  };
  const lb = new experimental.ChildLoadBalancerHandler(helper);
  const config = experimental.parseLoadBalancingConfig(grpcConfig(policy, shape, n) as LoadBalancingConfig);
  const endpoints = grpcEndpoints(shape, n);
  const keys = lookupKeys(n);
  const lazy = policy === 'ring_hash';
  // grpc-js-xds's config selector passes the hash as a decimal string.
  const hashes = lazy ? requestHashes(keys).map(String) : [];
  const options = lazy ? { 'grpc.lb.ring_hash.ring_size_cap': ringSize(n) } : {};
  const metadata = new Metadata();
  const connecting = (i: number): FakeSubchannel => {
    let s = pool.get(keys[i]!);
    if (lazy && s?.getConnectivityState() !== GrpcState.CONNECTING) {
      picker!.pick({ metadata, extraPickInfo: { hash: hashes[i]! } });
      s = pool.get(keys[i]!);
    }
    if (s === undefined) throw new Error(`grpc-js ${policy}: no subchannel for ${keys[i]}`);
    s.startConnecting();
    return s;
  };
  return {
    firstUpdate() {
      if (!lazy) {
        lb.updateAddressList(experimental.statusOrFromValue(endpoints), config, options, '');
        return;
      }
      // Its ring is built in a promise callback, then reported: wait for that report.
      const done = new Promise<void>((resolve) => {
        reported = () => {
          reported = null;
          resolve();
        };
      });
      lb.updateAddressList(experimental.statusOrFromValue(endpoints), config, options, '');
      return done;
    },
    up: (i) => connecting(i).transition(GrpcState.READY),
    down: (i) => {
      pool.get(keys[i]!)!.transition(GrpcState.IDLE);
      connecting(i).transition(GrpcState.TRANSIENT_FAILURE);
    },
    get state() {
      return GrpcState[state];
    },
    destroy: () => lb.destroy(),
  };
}
