/**
 * A whole `xds:///` channel on grpc-js: lbtree's resolver and policy tree (`register({ xds })`) beside
 * @grpc/grpc-js-xds's (`register()`), against the same lbtree control plane and the same loopback servers (both
 * in this process) in the same run. grpc-js keeps one resolver per scheme per process, so each channel runs in a
 * child process of its own (bench/xds-channel-client.ts); the two sides take turns, never overlapping in a
 * timed region.
 *
 * The service: Listener `bench` → RouteConfiguration → Cluster `bench-cluster` (lb_policy ROUND_ROBIN: both
 * sides build priority → cluster_impl → xds_wrr_locality → weighted_target → round_robin) → its
 * ClusterLoadAssignment. Baseline assignment: one locality with 3 real backends.
 *
 * Figures:
 *   - unary QPS: RPCS unary RPCs with INFLIGHT in flight over the baseline, rounds alternating between the two
 *     channels (both connected, the idle one does nothing); median of the rounds. Beside it, the channel
 *     process's CPU time (user + system) per RPC in those rounds: on a shared machine other processes' load
 *     moves the rate by 2x between rounds, the CPU a channel spends per RPC far less.
 *   - EDS push → picker in use: the control plane pushes an assignment of N endpoints in 10 localities: the 3
 *     backends (locality 0), a `marker` backend (locality 9) that only this assignment has, and N − 4 endpoints
 *     on a closed loopback port (127.x.y.z:1, each a distinct address). The time runs from the control plane
 *     sending the ClusterLoadAssignment to that client (its `sent` event) to the first RPC the marker answers:
 *     the new assignment decoded, the tree updated, N subchannels created and asked to connect, the marker
 *     connected, and a picker that includes it handed to the channel. The channel polls with one RPC at a time
 *     1 ms apart; times are process.hrtime (CLOCK_MONOTONIC, shared by the processes of one machine).
 *     Why a closed loopback port: ROUND_ROBIN connects every endpoint at once, and a refused connection costs
 *     both sides the same small amount (no packets leave the machine, no sockets pile up waiting for a
 *     timeout); the refused endpoints go to TRANSIENT_FAILURE and back off, identically on both sides, since
 *     both use grpc-js's own subchannels.
 *   - heap per endpoint: heapUsed after full GCs SETTLE_MS after the marker answered, minus heapUsed after
 *     full GCs on the baseline just before the push, divided by N.
 * Every push measurement runs in a fresh child process (nothing left over from a previous size); the sides
 * alternate which goes first. 1,000 endpoints: median of 3; 10,000 and 50,000: one run. A side that has not
 * reached the marker within CAP_MS (45 s) reports a lower bound (a process stuck past the cap in synchronous
 * work is killed, and then has no heap figure); a side that hit the cap is skipped at the next size, and the
 * table says so.
 * Both sides pay grpc-js's own per-subchannel costs here (its subchannel pool scans every subchannel of the
 * channel on each creation; channelz traces; the refused connections), so the ratios are of whole channels.
 * The grpc-js floor shows how much of each figure that is: a plain grpc-js channel (bench/xds-channel-floor.ts,
 * no xDS) whose resolver hands it the same addresses in the same order and whose policy only creates, connects
 * and rotates over one subchannel per address, measured the same way in the same run (its time runs from its
 * resolver's push, as it has no control plane). A second row per figure gives each xDS channel's cost above
 * that floor and their ratio, beside the whole-channel row.
 * Knobs: BENCH_XDS_SIZES, BENCH_XDS_REPEATS, BENCH_XDS_RPCS, BENCH_XDS_QPS_ROUNDS, BENCH_XDS_CAP_MS;
 * BENCH_XDS_FAULT_FILTER=1 (the listener carries istiod's empty A33 HTTPFault filter before the router);
 * BENCH_XDS_RETRY_POLICY=1 (the virtual host carries an A44 retry policy);
 * BENCH_XDS_LRS=1 (A27 load reporting: the cluster has lrs_server self and the control plane asks for every
 * cluster's load each second; the QPS rounds add lbtree on a twin service without lrs_server, and a table of
 * lbtree with LRS on / off);
 * BENCH_XDS_SIDES=lbtree (some of lbtree, grpc-js-xds, grpc-js-floor: raw figures), BENCH_XDS_PROFILE_DIR (a CPU
 * profile of each QPS round and push window), BENCH_XDS_HEAP_SNAPSHOT_DIR (heap snapshots where the heap is
 * measured, before and after: diff them), BENCH_XDS_NODE_FLAGS.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { type Backend, startBackends } from '../src/cli/loopback-backends.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  ControlPlane,
  faultFilter,
  LISTENER_TYPE_URL,
  type LocalitySpec,
  type ResourceJson,
  ROUTE_CONFIGURATION_TYPE_URL,
  xdsService,
} from '../src/control-plane/index.js';
import { median, printRow, printTableHeader } from './report.js';
import { bigLocalities } from './xds-channel-assignment.js';
import type { ClientAnswer, ClientCommand, FloorAddresses } from './xds-channel-client.js';

export type Side = 'lbtree' | 'grpc-js-xds' | 'grpc-js-floor' | 'lbtree-no-lrs';
/** Only these sides (comma-separated), e.g. while profiling one of them: then the raw figures are printed. */
const ONLY = process.env.BENCH_XDS_SIDES?.split(',');
const only = (sides: readonly Side[]) => sides.filter((s) => !ONLY || ONLY.includes(s));
/** BENCH_XDS_LRS=1: the cluster reports load (lrs_server self), every second. */
const LRS = process.env.BENCH_XDS_LRS === '1';
const LRS_INTERVAL_MS = 1_000;
/** The two xDS channels compared (QPS, and the push figures); with LRS, lbtree on the twin without it too. */
const SIDES = only(LRS ? ['lbtree', 'lbtree-no-lrs', 'grpc-js-xds'] : ['lbtree', 'grpc-js-xds']);
/** The push figures also run the grpc-js floor (see bench/xds-channel-floor.ts). */
const PUSH_SIDES = only(['grpc-js-floor', 'lbtree', 'grpc-js-xds']);

const RPCS = Number(process.env.BENCH_XDS_RPCS ?? 5_000);
const INFLIGHT = 32;
const QPS_ROUNDS = Number(process.env.BENCH_XDS_QPS_ROUNDS ?? 3);
/** Extra node flags for the channel processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_FLAGS = process.env.BENCH_XDS_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
const SIZES = (process.env.BENCH_XDS_SIZES ?? '1000,10000,50000').split(',').map(Number);
/** Push measurements per size and side (median), fewer for the large sizes. */
const repeatsFor = (n: number): number => Number(process.env.BENCH_XDS_REPEATS ?? (n <= 1_000 ? 3 : 1));
const SETTLE_MS = 300;
const CAP_MS = Number(process.env.BENCH_XDS_CAP_MS ?? 45_000);
const CLUSTER = 'bench-cluster';

/** BENCH_XDS_FAULT_FILTER=1: istiod's listener shape, an `HTTPFault{}` (no fault active) before the router. */
const FAULT_FILTER = process.env.BENCH_XDS_FAULT_FILTER === '1';
/** BENCH_XDS_RETRY_POLICY=1: an A44 retry policy on the virtual host (retry_on unavailable; no call fails, so none retries). */
const RETRY_POLICY = process.env.BENCH_XDS_RETRY_POLICY === '1';

function withRetryPolicy(resource: ResourceJson): ResourceJson {
  if (resource['@type'] !== ROUTE_CONFIGURATION_TYPE_URL) return resource;
  for (const host of resource.virtualHosts as Record<string, unknown>[]) {
    host.retryPolicy = { retryOn: 'unavailable', numRetries: 2 };
  }
  return resource;
}

function withFaultFilter(resource: ResourceJson): ResourceJson {
  if (resource['@type'] !== LISTENER_TYPE_URL) return resource;
  const hcm = (resource.apiListener as { apiListener: { httpFilters: unknown[] } }).apiListener;
  hcm.httpFilters.unshift(faultFilter());
  return resource;
}

function service(localities: LocalitySpec[], name = 'bench', lrs = LRS) {
  const resources = xdsService({
    name,
    clusters: [
      {
        name: name === 'bench' ? CLUSTER : `${name}-cluster`,
        lbPolicy: 'ROUND_ROBIN',
        localities,
        ...(lrs && { fields: { lrsServer: { self: {} } } }),
      },
    ],
  });
  const faulted = FAULT_FILTER ? resources.map(withFaultFilter) : resources;
  return RETRY_POLICY ? faulted.map(withRetryPolicy) : faulted;
}

/** With LRS, the twin service `bench-no-lrs` (same backends, no lrs_server) that the lbtree-no-lrs side dials. */
function noLrsTwin(backends: readonly Backend[]) {
  return LRS
    ? service([{ zone: 'zone-0', endpoints: backends.map((b) => b.address) }], 'bench-no-lrs', false)
    : [];
}

export function baseline(backends: readonly Backend[]) {
  return [
    ...service([{ zone: 'zone-0', endpoints: backends.map((b) => b.address) }]),
    ...noLrsTwin(backends),
  ];
}

/** N endpoints in LOCALITIES (or `count`) localities: the backends first in zone-0, the marker last in the last one. */
export function bigAssignment(
  n: number,
  backends: readonly Backend[],
  marker: Backend,
  shift = 0,
  count?: number,
) {
  const localities = bigLocalities(
    n,
    backends.map((b) => b.address),
    marker.address,
    shift,
    count,
  );
  return [
    ...service(localities.map((endpoints, z) => ({ zone: `zone-${z}`, endpoints }))),
    ...noLrsTwin(backends),
  ];
}

/** How a channel process starts beyond its side: more environment, a program to run it under (valgrind). */
export interface ChannelProcessOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly wrapper?: readonly string[];
}

/** A channel in its own process, connected and warmed up on the baseline. */
export class ChannelProcess {
  private readonly lines: AsyncIterator<string>;
  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, null>,
    readline: Interface,
  ) {
    this.lines = readline[Symbol.asyncIterator]();
  }

  /** The process id (valgrind runs its guest in the same process). */
  get pid(): number {
    return this.child.pid!;
  }

  static async start(
    side: Side,
    plane: ControlPlane,
    nodeId: string,
    floor: FloorAddresses,
    options: ChannelProcessOptions = {},
  ) {
    const [program, ...wrapperArgs] = options.wrapper ?? [process.execPath];
    const child = spawn(
      program!,
      [
        ...wrapperArgs,
        ...(options.wrapper ? [process.execPath] : []),
        ...NODE_FLAGS,
        '--expose-gc',
        '--import',
        'tsx',
        'bench/xds-channel-client.ts',
        side,
        String(floor.backends.length),
      ],
      {
        env: {
          ...process.env,
          BENCH_XDS_BOOTSTRAP: JSON.stringify(plane.bootstrap({ nodeId })),
          BENCH_XDS_FLOOR: JSON.stringify(floor),
          ...options.env,
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const channel = new ChannelProcess(child, createInterface({ input: child.stdout }));
    await channel.next();
    return channel;
  }

  async next(): Promise<ClientAnswer> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error('channel process ended early');
    return JSON.parse(value) as ClientAnswer;
  }

  send(command: ClientCommand): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  async request<K extends string>(
    command: ClientCommand,
    key: K,
  ): Promise<Extract<ClientAnswer, Record<K, unknown>>> {
    this.send(command);
    const a = await this.next();
    if (!(key in a)) throw new Error(`expected ${key}, got ${JSON.stringify(a)}`);
    return a as Extract<ClientAnswer, Record<K, unknown>>;
  }

  /** The next answer, or null when none came within `ms` (the process is then killed). */
  async nextWithin(ms: number): Promise<ClientAnswer | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => {
      timer = setTimeout(() => r(null), ms);
    });
    const answer = await Promise.race([this.next(), timeout]);
    clearTimeout(timer);
    if (answer === null) this.child.kill('SIGKILL');
    return answer;
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    // Killed at a cap: it is going, and its stdin takes nothing more.
    if (!this.child.killed) this.send({ cmd: 'exit' });
    await exited;
  }
}

interface PushRun {
  /** null: the marker never answered within CAP_MS (the time is then a lower bound, CAP_MS). */
  readonly ms: number | null;
  /** NaN when the channel process had to be killed at the cap (no heap figure). */
  readonly bytesPerEndpoint: number;
}

let nodeIds = 0;

export const floorAddresses = (backends: readonly Backend[], marker: Backend): FloorAddresses => ({
  backends: backends.map((b) => b.address),
  marker: marker.address,
});

async function measurePush(
  side: Side,
  n: number,
  plane: ControlPlane,
  backends: readonly Backend[],
  marker: Backend,
): Promise<PushRun> {
  plane.setResources(baseline(backends));
  const nodeId = `xds-channel-${side}-${++nodeIds}`;
  const channel = await ChannelProcess.start(side, plane, nodeId, floorAddresses(backends, marker));
  try {
    const arm = { cmd: 'arm', marker: marker.name, settleMs: SETTLE_MS, capMs: CAP_MS } as const;
    if (side === 'grpc-js-floor') {
      // No control plane: the channel process pushes the same addresses to its own resolver once armed.
      await channel.request({ ...arm, n }, 'armed');
      const result = await channel.nextWithin(CAP_MS + 10_000);
      if (result === null) return { ms: null, bytesPerEndpoint: Number.NaN };
      if (!('pushedNs' in result) || result.pushedNs === undefined) {
        throw new Error(`expected the floor's push time, got ${JSON.stringify(result)}`);
      }
      const ms =
        result.markerNs === null ? null : Number(BigInt(result.markerNs) - BigInt(result.pushedNs)) / 1e6;
      return { ms, bytesPerEndpoint: result.heapBytes / n };
    }
    const resources = bigAssignment(n, backends, marker);
    await channel.request(arm, 'armed');
    let sentNs: bigint | null = null;
    const stop = plane.onEvent((e) => {
      if (e.kind === 'sent' && e.nodeId === nodeId && e.typeUrl === CLUSTER_LOAD_ASSIGNMENT_TYPE_URL) {
        sentNs ??= process.hrtime.bigint();
      }
    });
    plane.setResources(resources);
    stop();
    // A channel stuck in synchronous work cannot even notice its cap: it is killed a little after it.
    const result = await channel.nextWithin(CAP_MS + 10_000);
    if (result === null) return { ms: null, bytesPerEndpoint: Number.NaN };
    if (!('markerNs' in result)) throw new Error(`expected the marker's time, got ${JSON.stringify(result)}`);
    if (sentNs === null) throw new Error(`the control plane sent no ClusterLoadAssignment to ${nodeId}`);
    const ms = result.markerNs === null ? null : Number(BigInt(result.markerNs) - sentNs) / 1e6;
    return { ms, bytesPerEndpoint: result.heapBytes / n };
  } finally {
    await channel.exit();
  }
}

/**
 * A second ratio beside a whole-channel row: each xDS channel's figure minus the grpc-js floor's (what its own
 * resolver and policy tree add to grpc-js's subchannels), the floor's figure in the metric's name.
 */
function printAboveFloor(metric: string, floor: number, ours: number, theirs: number, unit: string): void {
  if ([floor, ours, theirs].some(Number.isNaN)) return;
  const digits = unit === 'B' ? 1 : 2;
  printRow(
    `${metric} above the grpc-js floor (floor: ${floor.toFixed(digits)} ${unit})`,
    ours - floor,
    theirs - floor,
    unit,
  );
}

/** BENCH_XDS_LRS=1: lbtree with load reporting on against lbtree with it off, beside grpc-js-xds with it on. */
function printLrsTable(qps: Record<Side, number[]>, cpu: Record<Side, number[]>, load: string[]): void {
  printTableHeader(
    `LRS load reporting on (every ${LRS_INTERVAL_MS / 1000} s) vs off, same run (load average at start ${load.join(' ')}; goal: within 2 %)`,
    'lbtree, LRS off',
  );
  printRow(
    `unary QPS, LRS on (median of ${QPS_ROUNDS}; higher is better)`,
    median(qps.lbtree),
    median(qps['lbtree-no-lrs']),
    'RPC/s',
  );
  printRow(
    `channel process CPU per RPC, LRS on (median; lower is better)`,
    median(cpu.lbtree),
    median(cpu['lbtree-no-lrs']),
    'µs',
  );
  printRow(
    `grpc-js-xds with LRS on: unary QPS (lbtree column: lbtree LRS on)`,
    median(qps.lbtree),
    median(qps['grpc-js-xds']),
    'RPC/s',
  );
  printRow(
    `grpc-js-xds with LRS on: CPU per RPC (lbtree column: lbtree LRS on)`,
    median(cpu.lbtree),
    median(cpu['grpc-js-xds']),
    'µs',
  );
}

export async function runXdsChannelBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const servers = await startBackends(['b1', 'b2', 'b3', 'marker']);
  const backends = servers.slice(0, 3);
  const marker = servers[3]!;
  const plane = new ControlPlane({
    resources: baseline(backends),
    loadReporting: { clusters: 'all', intervalMs: LRS_INTERVAL_MS },
  });
  await plane.listen('127.0.0.1:0');
  try {
    // Unary QPS: both channels up at once, rounds alternating.
    const channels = await Promise.all(
      (QPS_ROUNDS > 0 ? SIDES : []).map((side) =>
        ChannelProcess.start(side, plane, `xds-channel-qps-${side}`, floorAddresses(backends, marker)),
      ),
    );
    const qps: Record<Side, number[]> = {
      lbtree: [],
      'grpc-js-xds': [],
      'grpc-js-floor': [],
      'lbtree-no-lrs': [],
    };
    const cpu: Record<Side, number[]> = {
      lbtree: [],
      'grpc-js-xds': [],
      'grpc-js-floor': [],
      'lbtree-no-lrs': [],
    };
    for (let round = 0; round < QPS_ROUNDS; round++) {
      for (const [i, side] of SIDES.entries()) {
        const a = await channels[i]!.request({ cmd: 'qps', rpcs: RPCS, inflight: INFLIGHT }, 'qps');
        qps[side].push(a.qps);
        cpu[side].push(a.cpuUsPerRpc);
      }
    }
    await Promise.all(channels.map((c) => c.exit()));

    const pushes = new Map<number, Record<Side, PushRun[] | 'skipped'>>();
    /** Per side, the previous size's runs: a side that hit the cap there is skipped. */
    const previous = new Map<Side, { capped: boolean }>();
    for (const n of SIZES) {
      const runs: Record<Side, PushRun[] | 'skipped'> = {
        lbtree: [],
        'grpc-js-xds': [],
        'grpc-js-floor': [],
        'lbtree-no-lrs': [],
      };
      const skip = (side: Side) => {
        const p = previous.get(side);
        return p?.capped === true;
      };
      for (const side of PUSH_SIDES) if (skip(side)) runs[side] = 'skipped';
      for (let r = 0; r < repeatsFor(n); r++) {
        const order = r % 2 === 0 ? PUSH_SIDES : [...PUSH_SIDES].reverse();
        for (const side of order) {
          const list = runs[side];
          if (list !== 'skipped') list.push(await measurePush(side, n, plane, backends, marker));
        }
      }
      for (const side of PUSH_SIDES) {
        const list = runs[side];
        if (list === 'skipped') continue;
        const capped = list.some((r) => r.ms === null);
        previous.set(side, { capped });
      }
      pushes.set(n, runs);
    }

    if (SIDES.length < (LRS ? 3 : 2)) {
      console.log(JSON.stringify({ qps, cpu, pushes: Object.fromEntries(pushes) }, null, 1));
      return;
    }
    printTableHeader(
      `xds:/// channel on grpc-js, lbtree's control plane, loopback servers (load average at start ${load.join(' ')})`,
      'grpc-js-xds',
    );
    if (QPS_ROUNDS > 0) {
      printRow(
        `unary QPS, ${RPCS.toLocaleString('en')} RPCs, ${INFLIGHT} in flight, 3 backends (median of ${QPS_ROUNDS}; higher is better)`,
        median(qps.lbtree),
        median(qps['grpc-js-xds']),
        'RPC/s',
      );
      printRow(
        `channel process CPU per RPC in those rounds (median; user + system; lower is better)`,
        median(cpu.lbtree),
        median(cpu['grpc-js-xds']),
        'µs',
      );
    }
    if (LRS && QPS_ROUNDS > 0) {
      printLrsTable(qps, cpu, load);
      printTableHeader('xds:/// channel, continued (LRS on for lbtree and grpc-js-xds)', 'grpc-js-xds');
    }
    const notes: string[] = [];
    for (const [n, runs] of pushes) {
      const label = `${n.toLocaleString('en')} endpoints`;
      const ours = runs.lbtree;
      const theirs = runs['grpc-js-xds'];
      if (ours === 'skipped' || theirs === 'skipped') {
        const side = ours === 'skipped' ? 'lbtree' : 'grpc-js-xds';
        const other = ours === 'skipped' ? theirs : ours;
        notes.push(`${side} skipped at ${label}: it hit the ${CAP_MS / 1000} s cap at the previous size.`);
        if (other !== 'skipped') {
          if (other.some((r) => r.ms === null)) {
            const otherSide = side === 'lbtree' ? 'grpc-js-xds' : 'lbtree';
            notes.push(`${otherSide} at ${label}: no marker RPC within ${CAP_MS / 1000} s (a lower bound).`);
          }
          const fig = (f: (r: PushRun) => number, unit: string) => {
            const x = median(other.map(f));
            return Number.isNaN(x) ? 'not measured (killed at the cap)' : `${x.toFixed(1)} ${unit}`;
          };
          const cells = (x: string) => (side === 'lbtree' ? `skipped | ${x}` : `${x} | skipped`);
          console.log(
            `| EDS push → picker in use, ${label} | ${cells(fig((r) => r.ms ?? CAP_MS, 'ms'))} | — |`,
          );
          console.log(`| heap per endpoint, ${label} | ${cells(fig((r) => r.bytesPerEndpoint, 'B'))} | — |`);
        }
        continue;
      }
      for (const [side, list] of [
        ['lbtree', ours],
        ['grpc-js-xds', theirs],
      ] as const) {
        if (list.some((r) => r.ms === null)) {
          notes.push(
            `${side} at ${label}: no marker RPC within ${CAP_MS / 1000} s, so its time is a lower bound (its heap was taken at the cap, or not at all when its process had to be killed).`,
          );
        }
      }
      const time = (list: PushRun[]) => median(list.map((r) => r.ms ?? CAP_MS));
      const heap = (list: PushRun[]) => median(list.map((r) => r.bytesPerEndpoint));
      printRow(
        `EDS push → picker in use, ${label} (median of ${repeatsFor(n)})`,
        time(ours),
        time(theirs),
        'ms',
      );
      const [heapOurs, heapTheirs] = [heap(ours), heap(theirs)];
      if (Number.isNaN(heapOurs) || Number.isNaN(heapTheirs)) {
        const cell = (x: number) =>
          Number.isNaN(x) ? 'not measured (killed at the cap)' : `${x.toFixed(1)} B`;
        console.log(`| heap per endpoint, ${label} | ${cell(heapOurs)} | ${cell(heapTheirs)} | — |`);
      } else {
        printRow(`heap per endpoint, ${label}`, heapOurs, heapTheirs, 'B');
      }
      const floor = runs['grpc-js-floor'];
      if (floor !== 'skipped' && floor.length > 0) {
        printAboveFloor(`EDS push → picker in use, ${label}`, time(floor), time(ours), time(theirs), 'ms');
        printAboveFloor(`heap per endpoint, ${label}`, heap(floor), heap(ours), heap(theirs), 'B');
      }
    }
    if (QPS_ROUNDS > 0) {
      // The rounds themselves, in order: on a shared machine a load spike shows as one side's outlier.
      const rounds = (side: Side) =>
        qps[side].map((x, i) => `${x.toFixed(0)} (${cpu[side][i]!.toFixed(0)} µs)`).join(', ');
      notes.unshift(
        `QPS rounds, in order (RPC/s, CPU per RPC): lbtree ${rounds('lbtree')}; grpc-js-xds ${rounds('grpc-js-xds')}` +
          (LRS ? `; lbtree with LRS off ${rounds('lbtree-no-lrs')}.` : '.'),
      );
      if (LRS) {
        const reports = plane.loadReports;
        const from = (prefix: string) => reports.filter((r) => r.nodeId.startsWith(prefix)).length;
        notes.push(
          `LRS reports received during the run: lbtree ${from('xds-channel-qps-lbtree')} (LRS-off side: ${from('xds-channel-qps-lbtree-no-lrs')}), grpc-js-xds ${from('xds-channel-qps-grpc-js-xds')}.`,
        );
      }
    }
    for (const note of notes) console.log(`\n${note}`);
  } finally {
    await plane.close();
    for (const s of servers) s.stop();
  }
}
