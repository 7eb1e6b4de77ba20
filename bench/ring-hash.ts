/**
 * ring_hash with fake subchannels, lbtree beside @grpc/grpc-js-xds's `ring_hash` in the same process, plus
 * XXH64 itself. Figures:
 *   - ring build: the first update of N endpoints until the policy reports its picker (grpc-js-xds builds its
 *     ring in a promise callback, so its figure is measured up to that report). Each run uses a fresh
 *     policy; the first runs warm the JIT up and are not counted, as many for either library (fewer runs in
 *     the cases where one grpc-js-xds build takes seconds). "ring 4,096" and "ring 1,048,576" set
 *     minRingSize = maxRingSize = cap to that size (Envoy's running sum makes 1,000 equal endpoints 4,097);
 *   - pick: ns per pick with every endpoint READY, hashes spread over the whole ring (lbtree reads
 *     `PickArgs.hash`, a bigint; grpc-js-xds reads `extraPickInfo.hash`, a decimal string, as its
 *     config selector passes it);
 *   - bytes per ring entry: lbtree's exact typed-array footprint, and both libraries' heap growth for a
 *     1,048,576-entry ring after a full GC;
 *   - XXH64 ns per 20-byte key: the forms ring building uses (bytes in, no bigint for lbtree) and the public
 *     string -> bigint form, lbtree beside xxhash-wasm (what grpc-js-xds uses).
 * Ratio column: lbtree / grpc-js-xds (below 1 = lbtree faster or smaller).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { experimental, connectivityState as GrpcState, Metadata } from '@grpc/grpc-js';
// Loaded first for its side effect: grpc-js-xds's ring_hash module parses Envoy protos when it loads, and
// finds google/protobuf/descriptor.proto only once proto-loader has registered the well-known protos.
import '@grpc/proto-loader';
import * as grpcJsXdsRingHash from '@grpc/grpc-js-xds/build/src/load-balancer-ring-hash.js';
import {
  Attributes,
  buildRing,
  type Endpoint,
  ok,
  type PickArgs,
  parseAddress,
  parseRingHashConfig,
  RING_SIZE_CAP_ARG,
  RingHash,
  xxh64,
  xxh64Into,
} from 'lbtree';
import xxhashWasm from 'xxhash-wasm';
import { BenchChannel, ManualClock } from './bench-channel.js';
import { FakeSubchannel } from './grpc-js-harness.js';
import { median, printRow, printTableHeader } from './report.js';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const WARMUP = 5;
/** Builds where one grpc-js-xds build takes seconds (10,000 endpoints; a 1,048,576-entry ring). */
const HEAVY_REPEATS = 3;
const HEAVY_WARMUP = 1;
const PICKS = 2_000_000;
const PICK_HASHES = 4096;

interface Case {
  readonly name: string;
  readonly endpoints: number;
  /** minRingSize = maxRingSize = cap = this, so the ring has exactly this many entries. */
  readonly ringSize: number;
  /**
   * Ring builds timed (median) after `warmup` uncounted ones, the same for both libraries: fewer where one
   * grpc-js-xds build takes seconds.
   */
  readonly repeats: number;
  readonly warmup: number;
}

const CASES: readonly Case[] = [
  {
    name: '1,000 endpoints, ring 4,096',
    endpoints: 1_000,
    ringSize: 4_096,
    repeats: REPEATS,
    warmup: WARMUP,
  },
  {
    name: '10,000 endpoints, ring 4,096',
    endpoints: 10_000,
    ringSize: 4_096,
    repeats: HEAVY_REPEATS,
    warmup: HEAVY_WARMUP,
  },
  {
    name: '1,000 endpoints, ring 1,048,576',
    endpoints: 1_000,
    ringSize: 1_048_576,
    repeats: HEAVY_REPEATS,
    warmup: HEAVY_WARMUP,
  },
];

function addresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`);
}

/** Request hashes spread over the ring, the same for both libraries. */
function pickHashes(): bigint[] {
  return Array.from({ length: PICK_HASHES }, (_, i) => xxh64(`request-${i}`));
}

interface Harness {
  /** Converts an endpoint list to the library's form, outside any timed region. */
  prepare(endpoints: readonly string[]): unknown;
  /** Delivers a prepared list; resolves once the policy has reported a picker for it. */
  build(prepared: unknown): Promise<void>;
  /** Drives every endpoint on the ring to READY. */
  connectAll(endpoints: readonly string[]): void;
  readonly state: string;
  /**
   * `count` picks cycling through the prepared hashes, in a loop inside the harness (so the call into the
   * library's picker is the same monomorphic call for both); returns how many completed.
   */
  pickMany(count: number): number;
  destroy(): void;
}

function createLbtree(ringSize: number, hashes: readonly bigint[]): Harness {
  const clock = new ManualClock();
  const channel = new BenchChannel(clock);
  const lb = new RingHash(channel);
  const config = parseRingHashConfig({ minRingSize: ringSize, maxRingSize: ringSize }, '$');
  const attributes = { [RING_SIZE_CAP_ARG]: ringSize };
  const metadata = { get: () => [] };
  const args: PickArgs[] = hashes.map((hash) => ({ metadata, hash }));
  return {
    prepare: (list) =>
      list.map((a): Endpoint => ({ addresses: [parseAddress(a)], attributes: Attributes.EMPTY })),
    async build(prepared) {
      lb.update({ endpoints: ok(prepared as Endpoint[]), config, attributes });
    },
    connectAll(list) {
      for (const a of list) channel.picker.pick({ metadata, hash: xxh64(`${a}_0`) });
      clock.runAll();
      channel.makeAllReady();
      clock.runAll();
    },
    get state() {
      return channel.state;
    },
    pickMany(count) {
      const p = channel.picker;
      let completed = 0;
      for (let i = 0; i < count; i++)
        if (p.pick(args[i & (PICK_HASHES - 1)]!).type === 'complete') completed++;
      return completed;
    },
    destroy: () => lb.destroy(),
  };
}

function createGrpcJsXds(ringSize: number, hashes: readonly bigint[]): Harness {
  grpcJsXdsRingHash.setup();
  const pool = new Map<string, FakeSubchannel>();
  let state: GrpcState = GrpcState.IDLE;
  let picker: experimental.Picker | null = null;
  let reported: (() => void) | null = null;
  const helper: experimental.ChannelControlHelper = {
    createSubchannel(address) {
      const key = experimental.subchannelAddressToString(address);
      let sub = pool.get(key);
      if (!sub) {
        sub = new FakeSubchannel(key);
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
  const config = experimental.parseLoadBalancingConfig({
    ring_hash: { min_ring_size: ringSize, max_ring_size: ringSize },
  });
  const options = { 'grpc.lb.ring_hash.ring_size_cap': ringSize };
  const metadata = new Metadata();
  const args: experimental.PickArgs[] = hashes.map((hash) => ({
    metadata,
    extraPickInfo: { hash: hash.toString() },
  }));
  return {
    prepare: (list) =>
      list.map((a) => {
        const colon = a.lastIndexOf(':');
        return { addresses: [{ host: a.slice(0, colon), port: Number(a.slice(colon + 1)) }] };
      }),
    build(prepared) {
      const endpoints = prepared as experimental.Endpoint[];
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
    connectAll(list) {
      for (const a of list) picker!.pick({ metadata, extraPickInfo: { hash: xxh64(`${a}_0`).toString() } });
      for (const sub of pool.values()) {
        sub.startConnecting();
        sub.transition(GrpcState.READY);
      }
    },
    get state() {
      return GrpcState[state];
    },
    pickMany(count) {
      const p = picker!;
      let completed = 0;
      for (let i = 0; i < count; i++) {
        if (p.pick(args[i & (PICK_HASHES - 1)]!).pickResultType === experimental.PickResultType.COMPLETE) {
          completed++;
        }
      }
      return completed;
    },
    destroy: () => lb.destroy(),
  };
}

async function timeBuild(
  create: () => Harness,
  list: readonly string[],
  repeats: number,
  warmup: number,
): Promise<number> {
  const runs: number[] = [];
  // The first `warmup` runs let the JIT compile the library's code and are not counted.
  for (let r = 0; r < warmup + repeats; r++) {
    const h = create();
    const prepared = h.prepare(list);
    const t = process.hrtime.bigint();
    await h.build(prepared);
    const elapsed = Number(process.hrtime.bigint() - t) / 1e6;
    if (r >= warmup) runs.push(elapsed);
    h.destroy();
  }
  return median(runs);
}

function timePicks(h: Harness, count: number): number {
  if (h.pickMany(200_000) !== 200_000) throw new Error('expected every pick to complete');
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    const completed = h.pickMany(count);
    runs.push(Number(process.hrtime.bigint() - t) / count);
    if (completed !== count) throw new Error('expected every pick to complete');
  }
  return median(runs);
}

async function pickFigure(create: () => Harness, list: readonly string[], count: number): Promise<number> {
  const h = create();
  await h.build(h.prepare(list));
  h.connectAll(list);
  if (h.state !== 'READY') throw new Error(`expected READY after connectAll, got ${h.state}`);
  const figure = timePicks(h, count);
  h.destroy();
  return figure;
}

let gc: (() => void) | null = null;
function fullGc(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
}

function retainedBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Heap (plus ArrayBuffer) growth per ring entry of a harness holding a built ring. */
async function bytesPerEntry(
  create: () => Harness,
  list: readonly string[],
  entries: number,
): Promise<number> {
  fullGc();
  const h = create();
  const prepared = h.prepare(list);
  fullGc();
  const before = retainedBytes();
  await h.build(prepared);
  fullGc();
  const grown = retainedBytes() - before;
  h.destroy();
  return grown / entries;
}

function xxh64Figures(api: Awaited<ReturnType<typeof xxhashWasm>>): void {
  const N = 2_000_000;
  const key = new TextEncoder().encode('10.0.12.34:50051_123');
  const text = '10.0.12.34:50051_123';
  const out = new Uint32Array(2);
  const time = (fn: (i: number) => number): number => {
    let sink = 0;
    for (let i = 0; i < 200_000; i++) sink += fn(i);
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < N; i++) sink += fn(i);
      runs.push(Number(process.hrtime.bigint() - t) / N);
    }
    if (sink === 0) throw new Error('unused');
    return median(runs);
  };
  const oursRaw = time((i) => {
    key[19] = 0x30 + (i % 10);
    xxh64Into(key, 20, out);
    return out[1]! | 1;
  });
  const theirsRaw = time((i) => {
    key[19] = 0x30 + (i % 10);
    return api.h64Raw(key, 0n) === 0n ? 0 : 1;
  });
  const oursString = time(() => (xxh64(text) === 0n ? 0 : 1));
  const theirsString = time(() => (api.h64(text, 0n) === 0n ? 0 : 1));
  printRow('XXH64, 20-byte key, bytes in (ring building)', oursRaw, theirsRaw, 'ns');
  printRow('XXH64, 20-byte string in, bigint out', oursString, theirsString, 'ns');
}

export async function runRingHashBench(): Promise<void> {
  const hashes = pickHashes();
  const api = await xxhashWasm();
  printTableHeader(
    `ring_hash, fake subchannels (build: median of ${REPEATS} runs after ${WARMUP} warm-up runs, ${HEAVY_REPEATS} after ${HEAVY_WARMUP} where a grpc-js-xds build takes seconds; the same for both)`,
    '@grpc/grpc-js-xds',
  );
  for (const c of CASES) {
    const list = addresses(c.endpoints);
    const ours = () => createLbtree(c.ringSize, hashes);
    const theirs = () => createGrpcJsXds(c.ringSize, hashes);
    const oursBuild = await timeBuild(ours, list, c.repeats, c.warmup);
    const theirsBuild = await timeBuild(theirs, list, c.repeats, c.warmup);
    printRow(`${c.name}: ring build`, oursBuild, theirsBuild, 'ms');
    const oursPick = await pickFigure(ours, list, PICKS);
    const theirsPick = await pickFigure(theirs, list, PICKS / 10);
    printRow(`${c.name}: pick`, oursPick, theirsPick, 'ns');
    if (c.ringSize > 100_000) {
      const oursBytes = await bytesPerEntry(ours, list, c.ringSize);
      const theirsBytes = await bytesPerEntry(theirs, list, c.ringSize);
      printRow(`${c.name}: heap growth per ring entry`, oursBytes, theirsBytes, 'B');
      const keys = list;
      const ring = buildRing(keys, new Float64Array(keys.length).fill(1), c.ringSize, c.ringSize);
      console.log(
        `| (lbtree ring arrays alone: ${(ring.byteLength / ring.size).toFixed(2)} B per entry) | | | |`,
      );
    }
  }
  xxh64Figures(api);
  // Let grpc-js's deferred work from the destroyed harnesses drain before the next section.
  await new Promise((resolve) => setTimeout(resolve, 10));
}
