/**
 * lbtree's own part of a big EDS push, in one process (issue 25 §5): the tree a cds policy runs for a cluster
 * given a ClusterLoadAssignment of N endpoints (bench/xds-channel-assignment.ts, each push shifted by one as
 * in the xds-eds-stall bench), in the simulator with every connection attempt hanging (no connect storm in the
 * figures), for several shapes of the same N endpoints: 10 localities under ROUND_ROBIN (priority →
 * xds_cluster_impl → xds_override_host → xds_wrr_locality → weighted_target → round_robin), 100 localities
 * under ROUND_ROBIN, 10 localities under RING_HASH (… xds_override_host → ring_hash), and a locality per
 * endpoint under ROUND_ROBIN. Side by side, push by push: the update applied in one turn (the simulator
 * without update turns), and the same update spread (the turn it arrives in, then each step). What a channel
 * process adds (decode, grpc-js's subchannels) is the xds-eds-stall bench's. Knobs: BENCH_TURNS_N,
 * BENCH_TURNS_PUSHES, BENCH_TURNS_SHAPES (names, comma-separated).
 */
import { loadavg } from 'node:os';
import { addressKey } from '../src/core/index.js';
import { Simulation } from '../src/sim/index.js';
import {
  encodeCluster,
  encodeClusterLoadAssignment,
  XdsClusterTreeGenerator,
} from '../src/xds/balancer/cluster-tree.js';
import { median } from './report.js';
import { bigLocalities } from './xds-channel-assignment.js';

const N = Number(process.env.BENCH_TURNS_N ?? 10_000);
const PUSHES = Number(process.env.BENCH_TURNS_PUSHES ?? 15);
const SHAPES = process.env.BENCH_TURNS_SHAPES?.split(',');

const BACKENDS = ['127.0.0.1:1001', '127.0.0.1:1002', '127.0.0.1:1003'];
const MARKER = '127.0.0.1:1004';

/** One shape of the pushed cluster: its LB policy and how many localities the N endpoints are in. */
interface Shape {
  readonly name: string;
  readonly lbPolicy: 'ROUND_ROBIN' | 'RING_HASH';
  readonly localities: number;
}

const ALL_SHAPES: readonly Shape[] = [
  { name: '10-localities', lbPolicy: 'ROUND_ROBIN', localities: 10 },
  { name: '100-localities', lbPolicy: 'ROUND_ROBIN', localities: 100 },
  { name: 'ring-hash', lbPolicy: 'RING_HASH', localities: 10 },
  { name: 'locality-per-endpoint', lbPolicy: 'ROUND_ROBIN', localities: N },
];

function assignment(shape: Shape, shift: number) {
  const localities = bigLocalities(N, BACKENDS, MARKER, shift, shape.localities);
  return encodeClusterLoadAssignment({
    clusterName: 'bench',
    endpoints: localities.map((endpoints, z) => ({
      locality: { zone: `zone-${z}` },
      loadBalancingWeight: 1,
      lbEndpoints: endpoints.map((a) => {
        const colon = a.lastIndexOf(':');
        return {
          endpoint: {
            address: { socketAddress: { address: a.slice(0, colon), portValue: Number(a.slice(colon + 1)) } },
          },
        };
      }),
    })),
  });
}

interface PushTimes {
  readonly oneTurnMs: number;
  readonly ownTurnMs: number;
  readonly longestStepMs: number;
  readonly totalStepsMs: number;
  readonly steps: number;
}

export function runEdsPushTurnsBench(): void {
  for (const shape of ALL_SHAPES) {
    if (SHAPES === undefined || SHAPES.includes(shape.name)) runShape(shape);
  }
}

function runShape(shape: Shape): void {
  const load = loadavg().map((x) => x.toFixed(2));
  const cluster = encodeCluster({
    name: 'bench',
    type: 'EDS',
    edsClusterConfig: { edsConfig: { ads: {} } },
    lbPolicy: shape.lbPolicy,
  });
  const generator = new XdsClusterTreeGenerator();
  const spread = new Simulation({ spreadTurnMs: 1 });
  const once = new Simulation({ spreadUpdates: false });
  const times: PushTimes[] = [];
  for (let push = 0; push < PUSHES; push++) {
    const tree = generator.updateEndpoints(cluster, assignment(shape, push));
    for (const sim of [spread, once]) {
      for (const e of tree.endpoints) for (const a of e.addresses) sim.script(addressKey(a), 'hang');
    }
    let start = performance.now();
    once.update(tree.endpoints, tree.config, tree.attributes);
    const oneTurnMs = performance.now() - start;
    start = performance.now();
    spread.update(tree.endpoints, tree.config, tree.attributes);
    const ownTurnMs = performance.now() - start;
    let longestStepMs = 0;
    let totalStepsMs = 0;
    let steps = 0;
    while (spread.updateTurns.spreading) {
      start = performance.now();
      spread.advance(1);
      const ms = performance.now() - start;
      longestStepMs = Math.max(longestStepMs, ms);
      totalStepsMs += ms;
      steps++;
    }
    // The same virtual time on both sides (the spread one's steps, and its budget's turn ending).
    spread.advance(1);
    once.advance(steps + 1);
    times.push({ oneTurnMs, ownTurnMs, longestStepMs, totalStepsMs, steps });
  }
  once.destroy();
  spread.destroy();
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  const later = times.slice(1);
  const policy = shape.lbPolicy === 'RING_HASH' ? 'ring_hash' : 'round_robin';
  console.log(
    `\n## lbtree's own part of a ${N.toLocaleString('en')}-endpoint EDS push, in process: ${shape.localities} localities, ${policy} (shape ${shape.name}; load average at start ${load.join(' ')})\n`,
  );
  console.log(
    '| push | applied in one turn | spread: the turn it arrives in | spread: longest step (steps) | spread: all turns |',
  );
  console.log('|---|---|---|---|---|');
  const first = times[0]!;
  const total = (t: PushTimes) => t.ownTurnMs + t.totalStepsMs;
  console.log(
    `| first (cold code) | ${fmt(first.oneTurnMs)} | ${fmt(first.ownTurnMs)} | ${fmt(first.longestStepMs)} (${first.steps}) | ${fmt(total(first))} |`,
  );
  if (later.length > 0) {
    const pair = (xs: number[]) => `${fmt(median(xs))} / ${fmt(Math.max(...xs))}`;
    console.log(
      `| later ${later.length}: median / longest | ${pair(later.map((t) => t.oneTurnMs))} | ${pair(later.map((t) => t.ownTurnMs))} | ${pair(later.map((t) => t.longestStepMs))} (${median(later.map((t) => t.steps))}) | ${pair(later.map(total))} |`,
    );
    const worstOnce = Math.max(...later.map((t) => t.oneTurnMs));
    const worstSpread = Math.max(...later.map((t) => Math.max(t.ownTurnMs, t.longestStepMs)));
    console.log(
      `\nLater pushes, the longest turn spread / in one turn: ${(worstSpread / worstOnce).toFixed(2)} (median ${(median(later.map((t) => Math.max(t.ownTurnMs, t.longestStepMs))) / median(later.map((t) => t.oneTurnMs))).toFixed(2)}).`,
    );
  }
}
