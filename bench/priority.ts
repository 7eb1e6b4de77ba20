/**
 * The xDS locality tree, lbtree beside @grpc/grpc-js-xds in the same process:
 *
 *   priority -> 3 priorities -> weighted_target -> 50 localities each -> round_robin -> pick_first per endpoint
 *
 * with N endpoints spread evenly over the 150 localities (10,000 endpoints is ~67 per locality). Both
 * libraries create priorities lazily, so only priority 0's subtree exists once it is READY. Subchannels are
 * the same synchronous fakes the round_robin section uses. Figures:
 *   - update -> first READY picker: the first update, the work it deferred to `process.nextTick` (grpc-js's
 *     pick_first asks its subchannel to connect there, after the update returns; lbtree's does inside the
 *     update), then driving subchannels READY, in creation order, until the root reports READY (one
 *     subchannel, in practice);
 *   - same update again: a fresh copy of the same list (new endpoint and attribute objects, as a resolver
 *     delivers it) applied to the live, READY tree;
 *   - retained heap: heap growth from the tree (policies, pickers, fake subchannels) after the first READY,
 *     measured after full GCs in separate runs (no GC is forced around the timed regions);
 *   - pick: ns per pick through priority -> weighted_target -> round_robin -> pick_first with all of
 *     priority 0 READY.
 */
import { experimental, connectivityState as GrpcState, Metadata } from '@grpc/grpc-js';
import * as grpcJsXdsPriority from '@grpc/grpc-js-xds/build/src/load-balancer-priority.js';
import * as grpcJsXdsWeightedTarget from '@grpc/grpc-js-xds/build/src/load-balancer-weighted-target.js';
import {
  type Address,
  Attributes,
  type Endpoint,
  HIERARCHICAL_PATH,
  type LoadBalancer,
  NO_CHANNEL_ARGS,
  ok,
  type ParsedLbConfig,
  Registry,
  registerAllPolicies,
} from 'lbtree';
import { BenchChannel } from './bench-channel.js';
import { gc } from './gc.js';
import { FakeSubchannel } from './grpc-js-harness.js';
import { deferredTicks, median, msAsync, printRow, printTableHeader } from './report.js';

const PRIORITIES = 3;
const LOCALITIES = 50;
const SIZES = [1_000, 3_000, 10_000];
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const WARMUP = 3;
const PICKS = 5_000_000;

/** One endpoint of the tree: its address and the (priority, locality) it belongs to. */
interface TreeEndpoint {
  readonly address: string;
  readonly priority: string;
  readonly locality: string;
}

function tree(n: number): TreeEndpoint[] {
  return Array.from({ length: n }, (_, i) => ({
    address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`,
    priority: `p${i % PRIORITIES}`,
    locality: `l${Math.floor(i / PRIORITIES) % LOCALITIES}`,
  }));
}

const priorityNames = Array.from({ length: PRIORITIES }, (_, p) => `p${p}`);
const localityNames = Array.from({ length: LOCALITIES }, (_, l) => `l${l}`);

interface Harness {
  /** Converts the tree to the library's endpoint form, outside any timed region. */
  prepare(endpoints: readonly TreeEndpoint[]): unknown;
  apply(prepared: unknown): void;
  /** Drives subchannels READY in creation order until the root reports READY. */
  makeFirstReady(): void;
  makeAllReady(): void;
  pick(): unknown;
  readonly state: string;
  destroy(): void;
}

function createLbtreeTree(): Harness {
  const registry = registerAllPolicies(new Registry());
  const wt = {
    weighted_target_experimental: {
      targets: Object.fromEntries(
        localityNames.map((l) => [l, { weight: 1, childPolicy: [{ round_robin: {} }] }]),
      ),
    },
  };
  const parsed: ParsedLbConfig = registry.parseLbConfigList([
    {
      priority_experimental: {
        children: Object.fromEntries(priorityNames.map((p) => [p, { config: [wt] }])),
        priorities: priorityNames,
      },
    },
  ]);
  const channel = new BenchChannel();
  const lb: LoadBalancer = registry.create(parsed, channel);
  const pickArgs = channel.pickArgs;
  const intern = (text: string): Address => channel.intern(text);
  return {
    prepare: (endpoints) =>
      endpoints.map(
        (e): Endpoint => ({
          addresses: [intern(e.address)],
          attributes: Attributes.of(HIERARCHICAL_PATH, [e.priority, e.locality]),
        }),
      ),
    apply(prepared) {
      lb.update({
        endpoints: ok(prepared as Endpoint[]),
        config: parsed.config,
        attributes: NO_CHANNEL_ARGS,
      });
    },
    makeFirstReady: () => channel.makeFirstReady(),
    makeAllReady: () => channel.makeAllReady(),
    pick: () => channel.picker.pick(pickArgs),
    get state() {
      return channel.state;
    },
    destroy: () => lb.destroy(),
  };
}

let grpcJsXdsRegistered = false;

function createGrpcJsXdsTree(): Harness {
  if (!grpcJsXdsRegistered) {
    // What @grpc/grpc-js-xds's register() does for these two policies (without its resolver and filters).
    grpcJsXdsPriority.setup();
    grpcJsXdsWeightedTarget.setup();
    grpcJsXdsRegistered = true;
  }
  const wt = {
    weighted_target: {
      targets: Object.fromEntries(
        localityNames.map((l) => [l, { weight: 1, child_policy: [{ round_robin: {} }] }]),
      ),
    },
  };
  const config = experimental.parseLoadBalancingConfig({
    priority: {
      children: Object.fromEntries(
        priorityNames.map((p) => [p, { config: [wt], ignore_reresolution_requests: false }]),
      ),
      priorities: priorityNames,
    },
  });
  const interned = new Map<string, experimental.SubchannelAddress>();
  const pool = new Map<experimental.SubchannelAddress, FakeSubchannel>();
  let state = GrpcState.IDLE;
  let picker: experimental.Picker | null = null;
  const helper: experimental.ChannelControlHelper = {
    createSubchannel(address) {
      let sub = pool.get(address);
      if (!sub) {
        sub = new FakeSubchannel('path' in address ? address.path : `${address.host}:${address.port}`);
        pool.set(address, sub);
      }
      return sub;
    },
    updateState(s, p) {
      state = s;
      picker = p;
    },
    requestReresolution() {},
    addChannelzChild() {},
    removeChannelzChild() {},
  };
  const lb = new experimental.ChildLoadBalancerHandler(helper);
  const pickArgs: experimental.PickArgs = { metadata: new Metadata(), extraPickInfo: {} };
  const intern = (text: string): experimental.SubchannelAddress => {
    let a = interned.get(text);
    if (!a) {
      const colon = text.lastIndexOf(':');
      a = { host: text.slice(0, colon), port: Number(text.slice(colon + 1)) };
      interned.set(text, a);
    }
    return a;
  };
  return {
    // grpc-js-xds reads the hierarchical path from the endpoint's `localityPath` array.
    prepare: (endpoints) =>
      endpoints.map((e) => ({ addresses: [intern(e.address)], localityPath: [e.priority, e.locality] })),
    apply(prepared) {
      lb.updateAddressList(
        experimental.statusOrFromValue(prepared as experimental.Endpoint[]),
        config,
        {},
        '',
      );
    },
    makeFirstReady() {
      for (const sub of pool.values()) {
        if (state === GrpcState.READY) return;
        sub.startConnecting();
        sub.transition(GrpcState.READY);
      }
    },
    makeAllReady() {
      for (const sub of pool.values()) {
        sub.startConnecting();
        sub.transition(GrpcState.READY);
      }
    },
    pick() {
      return picker!.pick(pickArgs);
    },
    get state() {
      return GrpcState[state];
    },
    destroy: () => lb.destroy(),
  };
}

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap held by one tree after its first READY picker. In a function of its own, so that no stack slot of the
 * caller still holds the previous run's tree when the baseline is read (that made readings negative).
 */
async function retainedMB(
  create: () => Harness,
  endpoints: Parameters<Harness['prepare']>[0],
): Promise<number> {
  const h = create();
  const list = h.prepare(endpoints);
  const before = heapUsed();
  h.apply(list);
  await deferredTicks();
  h.makeFirstReady();
  const mb = (heapUsed() - before) / 2 ** 20;
  h.destroy();
  return mb;
}

interface Figures {
  firstReadyMs: number;
  againMs: number;
  heapMB: number;
  nsPerPick: number;
}

/**
 * The timed updates, medians in ms. A function of its own: an async function keeps the variables it uses
 * across an await, so a caller running these loops itself could still hold the last run's tree when the heap
 * baseline is read.
 */
async function timeUpdates(
  create: () => Harness,
  endpoints: readonly TreeEndpoint[],
): Promise<{ firstReadyMs: number; againMs: number }> {
  const first: number[] = [];
  const again: number[] = [];
  // The first WARMUP runs let the JIT settle and are not counted (the smallest size would otherwise carry the
  // compile time and make growth look sublinear). No GC is forced around timed regions: a full GC shrinks the
  // young generation and would charge both libraries extra scavenges.
  for (let r = 0; r < WARMUP + REPEATS; r++) {
    const h = create();
    const firstList = h.prepare(endpoints);
    const againList = h.prepare(endpoints);
    const firstMs = await msAsync(async () => {
      h.apply(firstList);
      await deferredTicks();
      h.makeFirstReady();
    });
    if (h.state !== 'READY') throw new Error(`expected READY after the first update, got ${h.state}`);
    const againMs = await msAsync(async () => {
      h.apply(againList);
      await deferredTicks();
    });
    if (h.state !== 'READY') throw new Error(`expected READY after the same update, got ${h.state}`);
    if (r >= WARMUP) {
      first.push(firstMs);
      again.push(againMs);
    }
    h.destroy();
  }
  return { firstReadyMs: median(first), againMs: median(again) };
}

/** ns per pick with all of priority 0 READY. */
async function nsPerPick(create: () => Harness, endpoints: readonly TreeEndpoint[]): Promise<number> {
  const h = create();
  h.apply(h.prepare(endpoints));
  await deferredTicks();
  h.makeAllReady();
  let sink = 0;
  for (let i = 0; i < 200_000; i++) if (h.pick()) sink++;
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < PICKS; i++) if (h.pick()) sink++;
    runs.push(Number(process.hrtime.bigint() - t) / PICKS);
  }
  h.destroy();
  if (sink === 0) throw new Error('no picks completed');
  return median(runs);
}

async function measure(create: () => Harness, n: number, withPicks: boolean): Promise<Figures> {
  const endpoints = tree(n);
  const updates = await timeUpdates(create, endpoints);
  // Memory, in runs of its own: the heap the tree holds after its first READY picker, after full GCs.
  const heap: number[] = [];
  for (let r = 0; r < 3; r++) heap.push(await retainedMB(create, endpoints));
  const picks = withPicks ? await nsPerPick(create, endpoints) : Number.NaN;
  return { ...updates, heapMB: median(heap), nsPerPick: picks };
}

export async function runPriorityBench(): Promise<void> {
  printTableHeader(
    `priority (${PRIORITIES}) -> weighted_target (${LOCALITIES} localities) -> round_robin -> pick_first, fake subchannels (median of ${REPEATS} runs)`,
    '@grpc/grpc-js-xds',
  );
  const growth: { n: number; ours: number; theirs: number }[] = [];
  for (const n of SIZES) {
    const withPicks = n === SIZES[SIZES.length - 1];
    // lbtree first, then grpc-js-xds: grpc-js's pick_first children leave timers that fire only once we yield.
    const ours = await measure(createLbtreeTree, n, withPicks);
    const theirs = await measure(createGrpcJsXdsTree, n, withPicks);
    printRow(`${n} endpoints: update -> first READY picker`, ours.firstReadyMs, theirs.firstReadyMs, 'ms');
    printRow(`${n} endpoints: same update again`, ours.againMs, theirs.againMs, 'ms');
    printRow(`${n} endpoints: retained heap`, ours.heapMB, theirs.heapMB, 'MB');
    if (withPicks) printRow(`${n} endpoints: pick (4 levels)`, ours.nsPerPick, theirs.nsPerPick, 'ns');
    growth.push({ n, ours: ours.firstReadyMs, theirs: theirs.firstReadyMs });
  }
  const a = growth[0]!;
  const b = growth[growth.length - 1]!;
  console.log(
    `\nGrowth of update -> first READY from ${a.n} to ${b.n} endpoints (x${b.n / a.n} endpoints): ` +
      `lbtree x${(b.ours / a.ours).toFixed(1)}, @grpc/grpc-js-xds x${(b.theirs / a.theirs).toFixed(1)}.`,
  );
}
