/**
 * lbtree's own part of a big EDS push, in one process (issue 25 §5): the tree a cds policy runs for a cluster
 * (priority → xds_cluster_impl → xds_override_host → xds_wrr_locality → weighted_target → round_robin) given a
 * ClusterLoadAssignment of N endpoints in 10 localities (bench/xds-channel-assignment.ts, each push shifted by
 * one as in the xds-eds-stall bench), in the simulator with every connection attempt hanging (no connect storm
 * in the figures). Side by side, push by push: the update applied in one turn (the simulator without update
 * turns), and the same update spread (the turn it arrives in, then each step of 1,000 endpoints). What a
 * channel process adds (decode, grpc-js's subchannels) is the xds-eds-stall bench's. Knobs: BENCH_TURNS_N,
 * BENCH_TURNS_PUSHES.
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

const BACKENDS = ['127.0.0.1:1001', '127.0.0.1:1002', '127.0.0.1:1003'];
const MARKER = '127.0.0.1:1004';

function assignment(shift: number) {
  const localities = bigLocalities(N, BACKENDS, MARKER, shift);
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
  readonly steps: number;
}

export function runEdsPushTurnsBench(): void {
  const load = loadavg().map((x) => x.toFixed(2));
  const cluster = encodeCluster({
    name: 'bench',
    type: 'EDS',
    edsClusterConfig: { edsConfig: { ads: {} } },
    lbPolicy: 'ROUND_ROBIN',
  });
  const generator = new XdsClusterTreeGenerator();
  const spread = new Simulation({ spreadTurnMs: 1 });
  const once = new Simulation({ spreadUpdates: false });
  const times: PushTimes[] = [];
  for (let push = 0; push < PUSHES; push++) {
    const tree = generator.updateEndpoints(cluster, assignment(push));
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
    let steps = 0;
    while (spread.updateTurns.spreading) {
      start = performance.now();
      spread.advance(1);
      longestStepMs = Math.max(longestStepMs, performance.now() - start);
      steps++;
    }
    once.advance(steps);
    times.push({ oneTurnMs, ownTurnMs, longestStepMs, steps });
  }
  once.destroy();
  spread.destroy();
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  const later = times.slice(1);
  console.log(
    `\n## lbtree's own part of a ${N.toLocaleString('en')}-endpoint EDS push, in process (10 localities; load average at start ${load.join(' ')})\n`,
  );
  console.log(
    '| push | applied in one turn | spread: the turn it arrives in | spread: longest step (steps) |',
  );
  console.log('|---|---|---|---|');
  const first = times[0]!;
  console.log(
    `| first (cold code) | ${fmt(first.oneTurnMs)} | ${fmt(first.ownTurnMs)} | ${fmt(first.longestStepMs)} (${first.steps}) |`,
  );
  if (later.length > 0) {
    console.log(
      `| later ${later.length}: median / longest | ${fmt(median(later.map((t) => t.oneTurnMs)))} / ${fmt(Math.max(...later.map((t) => t.oneTurnMs)))} | ${fmt(median(later.map((t) => t.ownTurnMs)))} / ${fmt(Math.max(...later.map((t) => t.ownTurnMs)))} | ${fmt(median(later.map((t) => t.longestStepMs)))} / ${fmt(Math.max(...later.map((t) => t.longestStepMs)))} |`,
    );
  }
}
