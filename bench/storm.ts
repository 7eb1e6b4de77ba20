/**
 * Connect storms, lbtree beside grpc-js / @grpc/grpc-js-xds's same policies in the same process: what every
 * real channel does at start-up and after an outage. For each policy:
 *   - first update + connect storm: the first update of N endpoints, then each endpoint CONNECTING -> READY
 *     one at a time, each delivered (and reported up to the channel) before the next;
 *   - disconnect storm: then each READY endpoint loses its connection and fails to reconnect, one at a time
 *     (READY -> IDLE -> CONNECTING -> TRANSIENT_FAILURE), until none is left.
 * A policy that rebuilds its picker over every READY child on each report is quadratic here (the issue-10
 * figures: 1.1 s for 10,000 round_robin endpoints, 76 s for a 50,000-endpoint xDS locality in the simulator).
 * Subchannels are the same synchronous fakes the other sections use; lbtree's timers are held by a manual
 * clock (only ring_hash's zero-delay connection hops run), so nothing fires inside a timed region.
 *
 * The issue's own comparison sits beside round_robin and the xDS tree too: grpc-js given the whole first update
 * with fakes that connect inside it (each fake is READY from its creation), so every endpoint is READY when the
 * update returns and grpc-js aggregates once (linear) — lbtree's one-by-one figure is printed beside it, and
 * lbtree's own figure for the same connect-inside update beside that.
 *
 * Beside each first update + connect storm: the same runs' process CPU time and the host's steal (cpu-time.ts),
 * so a wall-time outlier on a virtual machine can be told from the code's own cost.
 *
 * Comparisons: round_robin from @grpc/grpc-js; priority, weighted_target, xds_wrr_locality and ring_hash from
 * @grpc/grpc-js-xds (registered through its setup functions, as its register() does). grpc-js 1.14 and
 * grpc-js-xds 1.14 have no least_request policy: lbtree's least_request is shown beside grpc-js's
 * round_robin, the nearest policy they have. A comparison whose previous size took long enough that this one
 * would take minutes (both are quadratic there) is skipped and says so, unless STORM_FULL=1: then it runs
 * once, without a warm-up (about two minutes for grpc-js round_robin at 10,000 endpoints).
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
  xxh64,
} from 'lbtree';
import { BenchChannel, type BenchSubchannel, ManualClock } from './bench-channel.js';
import { type CpuSample, startCpuSample, stealPercent } from './cpu-time.js';
import { FakeSubchannel } from './grpc-js-harness.js';
import { median, ms, printRow, printTableHeader } from './report.js';

const SIZES = (process.env.STORM_SIZES ?? '1000,10000,50000').split(',').map(Number);
/**
 * Runs per size (median), fewer for the large sizes. Nine: on this project's 2-core VM a burst of host steal
 * or a major collection of earlier runs' trees lands in one run of a few; with five, two bad runs in a row
 * already moved a 10,000-endpoint median by 2-4x.
 */
const repeatsFor = (n: number): number => (n <= 10_000 ? 9 : 1);
/**
 * Warm-up before the measured runs (JIT): runs until three have been made or they have taken 2 s together,
 * whichever comes first, for either library. A short run is too short to warm the code alone: with one
 * warm-up, a 10,000-endpoint lbtree storm's first two measured runs still ran partly unoptimised code and
 * read 2-5 times slower than the next ones. A run of seconds (a quadratic comparison) warms itself.
 */
const WARM_UP_RUNS = 3;
const WARM_UP_MS = 2_000;
/** A comparison expected to take longer than this (quadratic growth from the previous size) is skipped. */
const SKIP_ABOVE_MS = Number(process.env.STORM_SKIP_ABOVE_MS ?? 60_000);
/** STORM_FULL=1 runs every comparison, however long it is projected to take (once, no warm-up). */
const FULL = process.env.STORM_FULL === '1';

/** One policy tree under a fake channel, driven endpoint by endpoint. */
interface StormHarness {
  /** Delivers the (prepared) first update; grpc-js-xds's ring_hash answers in a promise callback. */
  firstUpdate(): void | Promise<void>;
  /** Endpoint i connects: CONNECTING (asked for by the policy, or by a pick for ring_hash) -> READY. */
  up(i: number): void;
  /** Endpoint i loses its connection and the retry fails: READY -> IDLE -> CONNECTING -> TRANSIENT_FAILURE. */
  down(i: number): void;
  readonly state: string;
  destroy(): void;
}

/** The shapes of endpoint list the cases use. */
type Shape =
  | 'plain' // round_robin, least_request, ring_hash
  | 'target-per-endpoint' // weighted_target: one target per endpoint
  | 'locality-per-endpoint' // xds_wrr_locality: one locality per endpoint
  | 'one-priority' // priority -> round_robin
  | 'xds-one-locality'; // priority -> xds_wrr_locality -> weighted_target -> round_robin, one locality

/** ring_hash: two entries per endpoint, so a pick can reach every endpoint (the default cap is 4,096). */
const ringSize = (n: number): number => 2 * n;

const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`;

/**
 * ring_hash: the request hash that lands on endpoint i's first ring entry (Envoy's `<key>_0`), for the pick that
 * asks for its connection. Computed before the timed region, as the hash is the RPC's (a config selector's
 * work per call), not the policy's; XXH64 to a bigint costs about 0.5 µs, 5 ms per 10,000 endpoints.
 */
const requestHashes = (keys: readonly string[]): bigint[] => keys.map((k) => xxh64(`${k}_0`));

/**
 * The harness's own keys for finding endpoint i's fake subchannel in its pool, hashed before any timed region
 * (a fresh string is flattened and hashed at its first Map lookup, about a microsecond each, which would
 * otherwise be counted in the connect storm of both libraries).
 */
function lookupKeys(n: number): string[] {
  const keys = Array.from({ length: n }, (_, i) => address(i));
  new Set(keys);
  return keys;
}

// ---- lbtree ----

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
): StormHarness {
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
    get state() {
      return channel.state;
    },
    destroy: () => lb.destroy(),
  };
}

// ---- grpc-js / grpc-js-xds ----

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

function createGrpcJs(policy: string, shape: Shape, n: number, connectAtOnce = false): StormHarness {
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

// ---- measuring ----

interface StormFigures {
  upMs: number;
  downMs: number;
  /** Process CPU time of the first update + connect storm (median for several runs). */
  upCpuMs: number;
  /** The host's share of the machine's CPU time during those first updates + connect storms, in percent. */
  upStealPercent: number | null;
}

/**
 * A turn of the event loop before each timed region, for either library. The runs are synchronous, so without
 * it V8's garbage collection tasks (finishing the marking of earlier runs' discarded trees) never get a turn,
 * and that work lands in the next timed region as marking steps on allocation: a 10,000-endpoint ring_hash
 * storm read 80-105 ms in the bench against 35-45 ms in a driver that yielded between runs. A real channel's
 * connections complete in separate event-loop turns. Not a forced gc(): that discards optimised code (gc.ts).
 */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
const SETTLE_MS = 20;

async function runOnce(
  create: () => StormHarness,
  n: number,
  label: string,
): Promise<{ upMs: number; downMs: number; up: CpuSample }> {
  const h = create();
  await settle();
  const endSample = startCpuSample();
  const t0 = process.hrtime.bigint();
  await h.firstUpdate();
  for (let i = 0; i < n; i++) h.up(i);
  const upMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const up = endSample();
  if (h.state !== 'READY')
    throw new Error(`${label}: expected READY after the connect storm, got ${h.state}`);
  await settle();
  const downMs = ms(() => {
    for (let i = 0; i < n; i++) h.down(i);
  });
  if (h.state === 'READY') throw new Error(`${label}: still READY after the disconnect storm`);
  h.destroy();
  return { upMs, downMs, up };
}

async function warmUp(run: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  for (let w = 0; w < WARM_UP_RUNS && performance.now() - start < WARM_UP_MS; w++) await run();
}

/** `repeats` runs (median) after {@link warmUp} (JIT), unless `once`. */
async function measure(
  create: () => StormHarness,
  n: number,
  label: string,
  once = false,
): Promise<StormFigures> {
  const repeats = once ? 1 : repeatsFor(n);
  if (!once) await warmUp(() => runOnce(create, n, label));
  const up: number[] = [];
  const down: number[] = [];
  const samples: CpuSample[] = [];
  for (let r = 0; r < repeats; r++) {
    const f = await runOnce(create, n, label);
    up.push(f.upMs);
    down.push(f.downMs);
    samples.push(f.up);
  }
  return {
    upMs: median(up),
    downMs: median(down),
    upCpuMs: median(samples.map((s) => s.cpuMicros / 1000)),
    upStealPercent: stealPercent(samples),
  };
}

/**
 * The first update alone, its subchannels READY from creation: READY when it returns. Medians, in ms, of its
 * wall and process CPU time.
 */
async function measureConnectAtOnce(
  create: () => StormHarness,
  n: number,
  label: string,
): Promise<{ ms: number; cpuMs: number }> {
  const once = async (): Promise<{ ms: number; cpuMs: number }> => {
    const h = create();
    await settle();
    const endSample = startCpuSample();
    const t0 = process.hrtime.bigint();
    await h.firstUpdate();
    const took = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = endSample();
    if (h.state !== 'READY')
      throw new Error(`${label}: expected READY after the first update, got ${h.state}`);
    h.destroy();
    return { ms: took, cpuMs: cpu.cpuMicros / 1000 };
  };
  await warmUp(once);
  const runs: { ms: number; cpuMs: number }[] = [];
  for (let r = 0; r < repeatsFor(n); r++) runs.push(await once());
  return { ms: median(runs.map((r) => r.ms)), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

interface StormCase {
  readonly policy: string;
  readonly shape: Shape;
  readonly title: string;
  readonly comparison: string;
  /** Also print the comparison: grpc-js's first update with fakes that connect inside it. */
  readonly connectAtOnce?: boolean;
}

const CASES: readonly StormCase[] = [
  {
    policy: 'round_robin',
    shape: 'plain',
    title: 'round_robin',
    comparison: '@grpc/grpc-js round_robin',
    connectAtOnce: true,
  },
  {
    policy: 'least_request',
    shape: 'plain',
    title: 'least_request',
    comparison: '@grpc/grpc-js round_robin (no least_request in grpc-js 1.14)',
  },
  { policy: 'ring_hash', shape: 'plain', title: 'ring_hash', comparison: '@grpc/grpc-js-xds ring_hash' },
  {
    policy: 'weighted_target',
    shape: 'target-per-endpoint',
    title: 'weighted_target, one target (round_robin) per endpoint',
    comparison: '@grpc/grpc-js-xds weighted_target',
  },
  {
    policy: 'xds_wrr_locality',
    shape: 'locality-per-endpoint',
    title: 'xds_wrr_locality, one locality per endpoint',
    comparison: '@grpc/grpc-js-xds xds_wrr_locality',
  },
  {
    policy: 'priority',
    shape: 'one-priority',
    title: 'priority -> round_robin',
    comparison: '@grpc/grpc-js-xds priority',
  },
  {
    policy: 'priority',
    shape: 'xds-one-locality',
    title: 'xDS tree: priority -> xds_wrr_locality -> weighted_target -> round_robin, one locality',
    comparison: '@grpc/grpc-js-xds',
    connectAtOnce: true,
  },
];

/**
 * Beside the wall times: the same runs' process CPU time, and the host's steal meanwhile. A wall time well over
 * its CPU time with steal beside it was the host's doing, not the code's.
 */
function printCpuRows(n: number, ours: StormFigures, theirs: StormFigures | null): void {
  const metric = `${n} endpoints: first update + connect storm, process CPU time (median of the same runs)`;
  if (theirs === null) console.log(`| ${metric} | ${ours.upCpuMs.toFixed(2)} ms | not run | |`);
  else printRow(metric, ours.upCpuMs, theirs.upCpuMs, 'ms');
  const steal = (f: StormFigures | null): string =>
    f === null ? 'not run' : f.upStealPercent === null ? 'unknown' : `${f.upStealPercent.toFixed(0)} %`;
  console.log(
    `| ${n} endpoints: the host's steal of the machine's CPU time during those runs | ${steal(ours)} | ${steal(theirs)} | |`,
  );
}

export async function runStormBench(): Promise<void> {
  // STORM_CASES: the cases whose title starts with one of these (comma-separated), e.g. `round_robin,xDS`.
  const only = process.env.STORM_CASES?.split(',');
  for (const c of CASES) {
    if (only && !only.some((o) => c.title.startsWith(o))) continue;
    printTableHeader(`connect storm: ${c.title}`, c.comparison);
    let theirsPrevious: { n: number; ms: number } | null = null;
    for (const n of SIZES) {
      const ours = await measure(() => createLbtreeStorm(c.policy, c.shape, n), n, `lbtree ${c.title}`);
      const projected =
        theirsPrevious === null ? 0 : theirsPrevious.ms * (n / theirsPrevious.n) ** 2 * repeatsFor(n);
      const long = projected > SKIP_ABOVE_MS;
      if (long && !FULL) {
        console.log(
          `| ${n} endpoints: first update + connect storm | ${ours.upMs.toFixed(2)} ms | not run (~${(projected / 1000).toFixed(0)} s projected from ${theirsPrevious!.n}; STORM_FULL=1 runs it) | |`,
        );
        console.log(`| ${n} endpoints: disconnect storm | ${ours.downMs.toFixed(2)} ms | not run | |`);
        printCpuRows(n, ours, null);
      } else {
        const theirs = await measure(() => createGrpcJs(c.policy, c.shape, n), n, `grpc-js ${c.title}`, long);
        const note = long ? ' (comparison: one run)' : '';
        printRow(`${n} endpoints: first update + connect storm${note}`, ours.upMs, theirs.upMs, 'ms');
        printRow(`${n} endpoints: disconnect storm${note}`, ours.downMs, theirs.downMs, 'ms');
        printCpuRows(n, ours, theirs);
        theirsPrevious = { n, ms: theirs.upMs + theirs.downMs };
      }
      if (c.connectAtOnce) {
        const theirsAtOnce = await measureConnectAtOnce(
          () => createGrpcJs(c.policy, c.shape, n, true),
          n,
          `grpc-js ${c.title}, connecting inside the first update`,
        );
        const oursAtOnce = await measureConnectAtOnce(
          () => createLbtreeStorm(c.policy, c.shape, n, true),
          n,
          `lbtree ${c.title}, connecting inside the first update`,
        );
        printRow(
          `${n} endpoints: lbtree first update + connect storm (one by one) / grpc-js first update with every fake connecting inside it (the issue's comparison)`,
          ours.upMs,
          theirsAtOnce.ms,
          'ms',
        );
        printRow(
          `${n} endpoints: the same two, process CPU time (medians)`,
          ours.upCpuMs,
          theirsAtOnce.cpuMs,
          'ms',
        );
        printRow(
          `${n} endpoints: first update with every subchannel connecting inside it (both)`,
          oursAtOnce.ms,
          theirsAtOnce.ms,
          'ms',
        );
      }
    }
  }
}
