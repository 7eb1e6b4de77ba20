import * as grpc from '@grpc/grpc-js';
import { ControlPlane, type ResourceJson, xdsService } from '../../../control-plane/index.js';
import { register } from '../../../grpc-js/index.js';
import { BackendClient, startBackends, whoami } from '../../loopback-backends.js';
import { ControlPlaneLog } from '../control-plane-log.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { affinity, describePhaseTraffic, type Phase, playStage, servedBy, total } from '../stage.js';

const NODE_ID = 'lbtree-demo';
const USERS = Array.from({ length: 12 }, (_, i) => `user-${i + 1}`);
/**
 * RPCs a locality-weight phase counts. weighted_target draws at random, so a 75 % share over n RPCs has a
 * standard deviation of √(0.75 · 0.25 / n): 3.1 % at 200, where ± 10 % is 3.2 σ and failed about once in 700
 * runs (once in CI, at 65 %); 2.2 % at 400, where it is 4.6 σ.
 */
const WEIGHT_SAMPLE = 400;

type Policy = 'ROUND_ROBIN' | 'RING_HASH' | 'BAD_RING';

/**
 * The resources of `xds:///demo`: Listener → RouteConfiguration (hashing the x-user header) → one EDS
 * cluster with two priority-0 localities (east-a, east-b) and a priority-1 one (west).
 */
function resources(
  addresses: Readonly<Record<string, string>>,
  weights: { a: number; b: number },
  policy: Policy,
): ResourceJson[] {
  const lb =
    policy === 'ROUND_ROBIN'
      ? { lbPolicy: 'ROUND_ROBIN' as const }
      : {
          lbPolicy: 'RING_HASH' as const,
          // A mistake a person could make: the minimum above the maximum (A42 says NACK).
          ringHash:
            policy === 'BAD_RING'
              ? { minimumRingSize: 4096, maximumRingSize: 1024 }
              : { minimumRingSize: 1024, maximumRingSize: 4096 },
        };
  return xdsService({
    name: 'demo',
    hashPolicy: [{ header: 'x-user' }],
    clusters: [
      {
        name: 'demo-cluster',
        ...lb,
        localities: [
          { zone: 'east-a', weight: weights.a, endpoints: [addresses.a1!, addresses.a2!] },
          { zone: 'east-b', weight: weights.b, endpoints: [addresses.b1!, addresses.b2!] },
          { zone: 'west', priority: 1, endpoints: [addresses.w1!, addresses.w2!] },
        ],
      },
    ],
  });
}

const share = (phase: Phase | undefined, prefix: string) =>
  phase && total(phase.served) > 0 ? servedBy(phase.served, prefix) / total(phase.served) : 0;

/**
 * lbtree's control plane serves `xds:///demo` to a channel using lbtree's `xds:` resolver, and edits the
 * resources live: locality weights, a priority outage, ROUND_ROBIN → RING_HASH, a bad push the client
 * NACKs, and the fix.
 */
export async function playXds({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const backends = await startBackends(['a1', 'a2', 'b1', 'b2', 'w1', 'w2']);
  const addresses = Object.fromEntries(backends.map((b) => [b.name, b.address]));
  const east = backends.filter((b) => !b.name.startsWith('w'));
  const plane = new ControlPlane();
  await plane.listen('127.0.0.1:0');
  const log = new ControlPlaneLog(plane, NODE_ID, (line) => view.event(line));
  // Each phase starts once the client has answered every type of the version pushed.
  const push = (change: string, list: ResourceJson[]) => log.push(change, list);
  register({ xds: { bootstrap: plane.bootstrap({ nodeId: NODE_ID }) } });
  const versions: Record<string, string> = {};
  versions.start = await push(
    'ROUND_ROBIN, east-a : east-b = 1 : 3, west standby',
    resources(addresses, { a: 1, b: 3 }, 'ROUND_ROBIN'),
  );
  const client = new BackendClient('xds:///demo', grpc.credentials.createInsecure(), pace.channelOptions);
  const load = new LoadGenerator(
    client,
    pace.ratePerSecond,
    4,
    (n) => ({ 'x-user': USERS[n % USERS.length]! }),
    'x-user',
  );
  try {
    await whoami(client, { waitForReady: true, deadlineMs: 10_000 });
    load.start();
    const phases = await playStage({
      scenario: 'xDS from lbtree’s control plane',
      view,
      client,
      load,
      backends,
      pace,
      panel: () => ({ title: `control plane ${plane.address} → client "${NODE_ID}"`, lines: log.lines() }),
      cues: [
        {
          label: 'v1: ROUND_ROBIN over east-a and east-b weighted 1 : 3 (priority 0); west is priority 1',
          settled: (s) => total(s) >= WEIGHT_SAMPLE,
        },
        {
          label: 'v2: the locality weights change to 3 : 1',
          action: async () => {
            versions.weights = await push(
              'east-a : east-b = 3 : 1',
              resources(addresses, { a: 3, b: 1 }, 'ROUND_ROBIN'),
            );
          },
          settled: (s) => total(s) >= WEIGHT_SAMPLE,
        },
        {
          label: 'priority 0’s backends stop: priority 0 fails and traffic goes to priority 1 (west)',
          action: () => {
            for (const b of east) b.stop();
          },
          settled: (s) => servedBy(s, 'w') >= 60,
        },
        {
          label: 'priority 0’s backends are back: traffic returns to them',
          action: async () => {
            await Promise.all(east.map((b) => b.start()));
          },
          // Every east backend serves again before the next cue, so ring_hash's users are not still moving
          // off a backend that is reconnecting when stickiness is counted.
          settled: (s) =>
            servedBy(s, 'a') + servedBy(s, 'b') >= 60 && east.every((b) => (s.get(b.name) ?? 0) >= 5),
        },
        {
          label: 'v3: ROUND_ROBIN → RING_HASH: each user (x-user header) sticks to one backend',
          showsAffinity: true,
          action: async () => {
            versions.ring = await push(
              'RING_HASH on x-user',
              resources(addresses, { a: 3, b: 1 }, 'RING_HASH'),
            );
          },
          settled: (s) => total(s) >= 120,
        },
        {
          label: 'v4: a bad Cluster (minimum ring size above the maximum): NACKed, v3 keeps serving',
          showsAffinity: true,
          action: async () => {
            versions.bad = await push(
              'RING_HASH with min 4096 > max 1024',
              resources(addresses, { a: 3, b: 1 }, 'BAD_RING'),
            );
          },
          settled: (s) => total(s) >= 120,
        },
        {
          label: 'v5: the fix (back to ROUND_ROBIN): ACKed and applied, users spread again',
          showsAffinity: true,
          action: async () => {
            versions.fixed = await push(
              'ROUND_ROBIN again',
              resources(addresses, { a: 3, b: 1 }, 'ROUND_ROBIN'),
            );
          },
          settled: (s) => total(s) >= 120,
        },
      ],
    });
    await load.stop();
    const [weighted, reweighted, outage, back, ring, nacked, fixed] = phases;
    const nack = log.nackReason(versions.bad!);
    const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
    return {
      notes: [
        'control plane pushes and the client’s answers:',
        ...log.lines().map((l) => `  ${l}`),
        'traffic per phase:',
        ...phases.map((p) => `  ${describePhaseTraffic(p)}`),
        load.describeFailures('priority 0 when its backends stopped'),
      ].filter(Boolean),
      expectations: [
        {
          description: `1 : 3 → east-b serves 75 % ± 10 (${pct(share(weighted, 'b'))}), west nothing`,
          met: Math.abs(share(weighted, 'b') - 0.75) <= 0.1 && share(weighted, 'w') === 0,
        },
        {
          description: `3 : 1 → east-a serves 75 % ± 10 (${pct(share(reweighted, 'a'))})`,
          met: Math.abs(share(reweighted, 'a') - 0.75) <= 0.1,
        },
        {
          description:
            'priority 1 (west) serves while priority 0 is down, and priority 0 again once it is back',
          met:
            servedBy(outage?.served, 'w') > 0 &&
            servedBy(back?.served, 'a') + servedBy(back?.served, 'b') > 0,
        },
        {
          description: `RING_HASH: each user’s RPCs reach one backend (${pct(affinity(ring?.routes ?? new Map()))} ≥ 90 %)`,
          met: affinity(ring?.routes ?? new Map()) >= 0.9,
        },
        {
          description: `the bad Cluster is NACKed with its reason${nack ? ` ("${nack}")` : ''}`,
          met: nack !== undefined && /ring_size/.test(nack),
        },
        {
          description: 'while v4 is NACKed, v3 keeps serving (RING_HASH affinity kept, no failure)',
          met:
            affinity(nacked?.routes ?? new Map()) >= 0.9 &&
            total(nacked?.served ?? new Map()) > 0 &&
            nacked?.failures === 0,
        },
        {
          description: 'the fix is ACKed and applied (users spread over backends again)',
          met: log.acked(versions.fixed!) && affinity(fixed?.routes ?? new Map()) < 0.8,
        },
        {
          // Killing four servers at once fails the RPC each caller had in flight, and at most one more
          // that it sent to a connection the client had not yet seen close.
          description:
            'RPCs failed only when priority 0’s backends were killed under them (at most 2 per caller)',
          met: (outage?.failures ?? 0) <= 8 && phases.every((p) => p === outage || p.failures === 0),
        },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    log.close();
    await plane.close();
    for (const b of backends) b.stop();
  }
}
