/** The connect storm's lbtree harness: a policy tree under lbtree's bench channel, driven endpoint by endpoint. */
import {
  Attributes,
  type Endpoint,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  NO_CHANNEL_ARGS,
  ok,
  Registry,
  RING_SIZE_CAP_ARG,
  registerAllPolicies,
} from 'lbtree';
import { BenchChannel, type BenchSubchannel, ManualClock } from './bench-channel.js';
import {
  address,
  lookupKeys,
  requestHashes,
  ringSize,
  type Shape,
  type StormHarness,
} from './storm-shapes.js';

function lbtreeConfig(policy: string, shape: Shape, n: number): unknown {
  const rr = [{ round_robin: {} }];
  switch (policy) {
    case 'weighted_target':
      return {
        weighted_target_experimental: {
          targets: Object.fromEntries(
            Array.from({ length: n }, (_, i) => [`t${i}`, { weight: 1 + (i % 3), childPolicy: rr }]),
          ),
        },
      };
    case 'xds_wrr_locality':
      return { xds_wrr_locality_experimental: { childPolicy: rr } };
    case 'priority':
      if (shape === 'xds-one-locality') {
        return {
          priority_experimental: {
            children: { p0: { config: [{ xds_wrr_locality_experimental: { childPolicy: rr } }] } },
            priorities: ['p0'],
          },
        };
      }
      return { priority_experimental: { children: { p0: { config: rr } }, priorities: ['p0'] } };
    case 'least_request':
      return { least_request_experimental: {} };
    case 'ring_hash':
      return { ring_hash_experimental: { minRingSize: ringSize(n), maxRingSize: ringSize(n) } };
    default:
      return { round_robin: {} };
  }
}

function lbtreeEndpoints(shape: Shape, n: number, channel: BenchChannel): Endpoint[] {
  const locality = (i: number) => Attributes.of(LOCALITY, `l${i}`).with(LOCALITY_WEIGHT, 1 + (i % 3));
  const oneLocality = Attributes.of(HIERARCHICAL_PATH, ['p0']).with(LOCALITY, 'l0').with(LOCALITY_WEIGHT, 1);
  const onePriority = Attributes.of(HIERARCHICAL_PATH, ['p0']);
  return Array.from({ length: n }, (_, i) => {
    const addresses = [channel.intern(address(i))];
    switch (shape) {
      case 'target-per-endpoint':
        return { addresses, attributes: Attributes.of(HIERARCHICAL_PATH, [`t${i}`]) };
      case 'locality-per-endpoint':
        return { addresses, attributes: locality(i) };
      case 'one-priority':
        return { addresses, attributes: onePriority };
      case 'xds-one-locality':
        return { addresses, attributes: oneLocality };
      default:
        return { addresses, attributes: Attributes.EMPTY };
    }
  });
}

/**
 * `connectAtOnce`: each fake subchannel is READY from its creation (its connection comes up inside the first
 * update), so the first update returns with every endpoint READY (the grpc-js comparison, for lbtree).
 */
export function createLbtreeStorm(
  policy: string,
  shape: Shape,
  n: number,
  connectAtOnce = false,
): LbtreeStormHarness {
  const registry = registerAllPolicies(new Registry());
  const parsed = registry.parseLbConfigList([lbtreeConfig(policy, shape, n)]);
  const clock = new ManualClock();
  const channel = new BenchChannel(clock);
  channel.connected = connectAtOnce;
  const lb = registry.create(parsed, channel);
  const endpoints = lbtreeEndpoints(shape, n, channel);
  const keys = lookupKeys(n);
  const metadata = { get: () => [] };
  const lazy = policy === 'ring_hash';
  const hashes = lazy ? requestHashes(keys) : [];
  const attributes = lazy ? { [RING_SIZE_CAP_ARG]: ringSize(n) } : NO_CHANNEL_ARGS;
  const addresses = endpoints.map((e) => e.addresses[0]!);
  /**
   * Endpoint i's subchannel: the i-th created when the policy created them in list order (every case here;
   * ring_hash creates them in the order the storm's picks ask for them), else found in the pool by key. The
   * harness's own lookups then cost an array read, not a Map lookup with cold strings (~0.5 µs each).
   */
  const sub = (i: number): BenchSubchannel | undefined => {
    const s = channel.created[i];
    return s !== undefined && s.address === addresses[i] ? s : channel.pool.get(keys[i]!);
  };
  /** Gets endpoint i's subchannel CONNECTING, the way its policy would. */
  const connecting = (i: number): BenchSubchannel => {
    if (lazy && sub(i)?.state !== 'CONNECTING') {
      // A pick whose hash is endpoint i's ring entry (Envoy's `<key>_0`) asks for its connection.
      channel.picker.pick({ metadata, hash: hashes[i]! });
      clock.runZeroDelay();
    }
    const s = sub(i);
    if (s === undefined) throw new Error(`lbtree ${policy}: no subchannel for ${keys[i]}`);
    s.requestConnection();
    return s;
  };
  return {
    firstUpdate: () => {
      lb.update({ endpoints: ok(endpoints), config: parsed.config, attributes });
    },
    up: (i) => connecting(i).transition('READY'),
    down: (i) => {
      sub(i)!.transition('IDLE');
      connecting(i).transition('TRANSIENT_FAILURE');
    },
    prepareAgain: () => {
      // A fresh copy of the same list, as a resolver re-delivers it: new endpoint objects, the same addresses.
      const list = lbtreeEndpoints(shape, n, channel);
      return () => {
        lb.update({ endpoints: ok(list), config: parsed.config, attributes });
      };
    },
    pick: () => channel.picker.pick(channel.pickArgs),
    get state() {
      return channel.state;
    },
    destroy: () => lb.destroy(),
  };
}

/** lbtree's storm harness also re-delivers the list and picks (bench/storm-rounds.ts). */
export interface LbtreeStormHarness extends StormHarness {
  /** A fresh copy of the same list (new endpoint and attribute objects, the same addresses), and its delivery. */
  prepareAgain(): () => void;
  pick(): unknown;
}
