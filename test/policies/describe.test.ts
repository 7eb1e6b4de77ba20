// LoadBalancer.describe(): each policy's picture of itself for the live view (lbtree/admin), read in the
// simulator after the behaviour the gRFC names has happened. The picture must follow the tree's real state:
// every test changes something and checks the description changed with it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type BackendMetricReport,
  type ChildNode,
  type CompletePick,
  type Helper,
  type LoadBalancer,
  OK_STATUS,
  type PickArgs,
  type PolicyFactory,
  type PolicyNode,
  queuePicker,
  READY,
  Registry,
  unavailable,
} from '../../src/core/index.js';
import { registerAllPolicies } from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { connectAll, picks, tally } from '../support/sim-picks.js';

const ARGS: PickArgs = { metadata: { get: () => [] } };
const [A, B, C] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;

function root(sim: Simulation): PolicyNode {
  const node = sim.describe();
  assert.ok(node, 'the root policy describes itself');
  return node;
}

function child(node: PolicyNode, name: string): ChildNode {
  const found = node.children?.find((c) => c.name === name);
  assert.ok(
    found,
    `${node.policy} has a child named ${name}: ${JSON.stringify(node.children?.map((c) => c.name))}`,
  );
  return found;
}

/** The leaf states under `node`, by subchannel address. */
function subchannelStates(node: PolicyNode): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (n: PolicyNode) => {
    for (const s of n.subchannels ?? []) out[s.address] = s.state;
    for (const c of n.children ?? []) walk(c.node);
  };
  walk(node);
  return out;
}

describe('describe(): pick_first (A62, A61)', () => {
  test('A61 Happy Eyeballs: both attempts show while the first hangs; then only the chosen connection, with its picks', () => {
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.script(B, { connectAfterMs: 300 });
    sim.update([{ addresses: [A, B] }], [{ pick_first: {} }]);
    // A61: the next address is tried 250 ms after the first attempt started.
    sim.advance(250);
    let node = root(sim);
    assert.equal(node.policy, 'pick_first');
    assert.equal(node.state, 'CONNECTING');
    assert.deepEqual(
      node.subchannels?.map((s) => [s.address, s.state]),
      [
        [A, 'CONNECTING'],
        [B, 'CONNECTING'],
      ],
    );
    sim.advance(300);
    assert.equal(sim.state, READY);
    picks(sim, 3);
    node = root(sim);
    assert.equal(node.state, READY);
    assert.deepEqual(node.subchannels, [{ address: B, state: READY, picks: 3 }]);
  });

  test('A62 sticky TRANSIENT_FAILURE: the state and the last connection error are shown', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 1 });
    sim.update([A], [{ pick_first: {} }]);
    sim.advance(1);
    const node = root(sim);
    assert.equal(node.state, 'TRANSIENT_FAILURE');
    assert.match(node.status?.details ?? '', /10\.0\.0\.1:80/);
  });
});

describe('describe(): petioles (A61 "Petiole policies")', () => {
  test('round_robin: one child per endpoint with its pick_first, and each endpoint’s count of picks', () => {
    const sim = new Simulation();
    sim.script(C, { failAfterMs: 1 });
    connectAll(sim, [A, B], [{ round_robin: {} }]);
    sim.update([A, B, C], [{ round_robin: {} }]);
    sim.advance(1);
    picks(sim, 10);
    const node = root(sim);
    assert.equal(node.policy, 'round_robin');
    assert.equal(node.state, READY);
    assert.deepEqual(
      node.children?.map((c) => [c.name, c.node.state]),
      [
        [A, READY],
        [B, READY],
        [C, 'TRANSIENT_FAILURE'],
      ],
    );
    // Rotation over two READY endpoints: 5 picks each.
    assert.equal(child(node, A).node.subchannels?.[0]?.picks, 5);
    assert.equal(child(node, B).node.subchannels?.[0]?.picks, 5);
    assert.match(child(node, C).node.status?.details ?? '', /10\.0\.0\.3:80/);
  });

  test('round_robin in TRANSIENT_FAILURE shows a failed endpoint’s real error as its status', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 1 });
    sim.update([A], [{ round_robin: {} }]);
    sim.advance(1);
    const node = root(sim);
    assert.equal(node.state, 'TRANSIENT_FAILURE');
    assert.match(node.status?.details ?? '', /10\.0\.0\.1:80/);
  });

  test('least_request (A48): choice_count, and the calls in flight on each endpoint', () => {
    const sim = connectAll(new Simulation(), [A, B], [{ least_request_experimental: { choiceCount: 3 } }]);
    const started: CompletePick[] = [];
    for (let i = 0; i < 4; i++) {
      const r = sim.picker.pick(ARGS) as CompletePick;
      r.onCallStarted?.();
      started.push(r);
    }
    let node = root(sim);
    assert.equal(node.facts?.choiceCount, 3);
    const inFlight = () =>
      (node.children ?? []).reduce((sum, c) => sum + Number(c.facts?.activeCalls ?? 0), 0);
    assert.equal(inFlight(), 4);
    for (const r of started) r.onCallEnded?.(OK_STATUS);
    node = root(sim);
    assert.equal(inFlight(), 0);
  });

  test('weighted_round_robin (A58): each endpoint’s weight is qps / utilization once reports arrived', () => {
    const report = (cpuUtilization: number): BackendMetricReport => ({
      cpuUtilization,
      memUtilization: 0,
      applicationUtilization: 0,
      rpsFractional: 100,
      eps: 0,
      utilization: {},
      requestCost: {},
      namedMetrics: {},
    });
    const config = [{ weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s' } }];
    const sim = connectAll(new Simulation(), [A, B], config);
    // No report yet: A58 weights are unknown (0).
    assert.deepEqual(
      root(sim).children?.map((c) => c.facts?.weight),
      [0, 0],
    );
    const utilization: Record<string, number> = { [A]: 0.25, [B]: 0.5 };
    for (let i = 0; i < 20; i++) {
      const r = sim.picker.pick(ARGS) as CompletePick;
      r.onCallStarted?.();
      const key = (r.subchannel as SubchannelHandle).key;
      r.onCallEnded?.(OK_STATUS, { backendMetrics: report(utilization[key]!) });
    }
    sim.advance(1000);
    const node = root(sim);
    assert.equal(node.policy, 'weighted_round_robin');
    assert.equal(node.facts?.weightUpdatePeriodMs, 1000);
    // 100 qps at 25 % → 400; at 50 % → 200.
    assert.equal(child(node, A).facts?.weight, 400);
    assert.equal(child(node, B).facts?.weight, 200);
  });

  test('ring_hash (A42): the ring size and each endpoint’s entries; endpoints stay IDLE until picked', () => {
    const sim = new Simulation();
    sim.update([A, B], [{ ring_hash_experimental: { minRingSize: 8, maxRingSize: 8 } }]);
    let node = root(sim);
    assert.equal(node.policy, 'ring_hash_experimental');
    assert.equal(node.facts?.ringSize, 8);
    assert.equal(node.facts?.minRingSize, 8);
    assert.equal(node.facts?.maxRingSize, 8);
    // Equal weights: half the ring each.
    assert.equal(child(node, A).facts?.ringEntries, 4);
    assert.equal(child(node, B).facts?.ringEntries, 4);
    // A42: nothing connects before a pick (A61's proactive rule then starts one endpoint).
    sim.update([A, B], [{ ring_hash_experimental: { minRingSize: 16, maxRingSize: 16 } }]);
    node = root(sim);
    assert.equal(node.facts?.ringSize, 16);
    assert.equal(child(node, A).facts?.ringEntries, 8);
  });
});

describe('describe(): parents', () => {
  const twoPriorities = [
    {
      priority_experimental: {
        children: { p0: { config: [{ round_robin: {} }] }, p1: { config: [{ round_robin: {} }] } },
        priorities: ['p0', 'p1'],
      },
    },
  ];
  const endpoints = [
    { addresses: [A], attributes: { path: ['p0'] } },
    { addresses: [B], attributes: { path: ['p1'] } },
  ];

  test('priority (A56): the priority in use moves to p1 when p0 fails, and each child shows its priority', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update(endpoints, twoPriorities);
    sim.advance(1);
    let node = root(sim);
    assert.equal(node.policy, 'priority_experimental');
    assert.deepEqual(node.facts?.priorities, ['p0', 'p1']);
    assert.equal(node.facts?.priorityInUse, 'p0');
    assert.deepEqual(child(node, 'p0').facts, {
      priority: 0,
      inUse: true,
      failoverTimerPending: false,
      deactivated: false,
    });
    assert.equal(node.children?.length, 1, 'A56: p1 is not created while p0 is READY');
    // The connection drops and every reconnection fails.
    sim.script(A, { failAfterMs: 1 });
    sim.subchannel(A).setState('TRANSIENT_FAILURE');
    sim.advance(5);
    node = root(sim);
    assert.equal(node.facts?.priorityInUse, 'p1');
    assert.equal(child(node, 'p0').node.state, 'TRANSIENT_FAILURE');
    assert.equal(child(node, 'p1').facts?.priority, 1);
    assert.equal(child(node, 'p1').facts?.inUse, true);
    assert.equal(child(node, 'p1').node.policy, 'round_robin');
    assert.equal(subchannelStates(node)[B], READY);
  });

  test('weighted_target (A28): each target’s weight; a removed target is shown as retained', () => {
    const config = (targets: Record<string, number>) => [
      {
        weighted_target_experimental: {
          targets: Object.fromEntries(
            Object.entries(targets).map(([name, weight]) => [
              name,
              { weight, childPolicy: [{ round_robin: {} }] },
            ]),
          ),
        },
      },
    ];
    const sim = new Simulation();
    const eps = [
      { addresses: [A], attributes: { path: ['a'] } },
      { addresses: [B], attributes: { path: ['b'] } },
    ];
    sim.update(eps, config({ a: 3, b: 1 }));
    sim.advance(1);
    let node = root(sim);
    assert.equal(node.policy, 'weighted_target_experimental');
    assert.deepEqual(child(node, 'a').facts, { weight: 3 });
    assert.deepEqual(child(node, 'b').facts, { weight: 1 });
    sim.update(eps, config({ a: 5 }));
    node = root(sim);
    assert.deepEqual(child(node, 'a').facts, { weight: 5 });
    // A28: a removed target is kept for 15 minutes.
    assert.deepEqual(child(node, 'b').facts, { weight: 1, retained: true });
  });

  test('xds_wrr_locality (A52): weighted_target below with a target per locality and its weight', () => {
    const sim = new Simulation();
    const eps = [
      { addresses: [A], attributes: { locality: 'zone-a', localityWeight: 2 } },
      { addresses: [B], attributes: { locality: 'zone-b', localityWeight: 7 } },
    ];
    sim.update(eps, [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }]);
    sim.advance(1);
    const node = root(sim);
    assert.equal(node.policy, 'xds_wrr_locality_experimental');
    const target = child(node, 'weighted_target_experimental').node;
    assert.deepEqual(
      target.children?.map((c) => c.facts?.weight).sort((x, y) => Number(x) - Number(y)),
      [2, 7],
    );
  });

  test('outlier_detection (A50): an ejected endpoint is listed, and its leaf shows TRANSIENT_FAILURE health', () => {
    const backends = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'];
    const config = [
      {
        outlier_detection_experimental: {
          interval: '10s',
          baseEjectionTime: '30s',
          maxEjectionPercent: 50,
          failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
          childPolicy: [{ round_robin: {} }],
        },
      },
    ];
    const sim = connectAll(new Simulation(), backends, config);
    let node = root(sim);
    assert.equal(node.policy, 'outlier_detection_experimental');
    assert.deepEqual(node.facts?.ejected, []);
    for (let i = 0; i < 80; i++) {
      const r = sim.picker.pick(ARGS) as CompletePick;
      r.onCallStarted?.();
      const key = (r.subchannel as SubchannelHandle).key;
      r.onCallEnded?.(key === A ? unavailable('boom') : OK_STATUS);
    }
    sim.advance(10_000);
    node = root(sim);
    assert.deepEqual(node.facts?.ejected, [A]);
    assert.equal(node.facts?.ejectedCount, 1);
    assert.equal(node.facts?.maxEjectionPercent, 50);
    const rr = child(node, 'child').node;
    assert.equal(rr.policy, 'round_robin');
    // A61: ejection reaches the endpoint's pick_first as TRANSIENT_FAILURE health.
    assert.equal(child(rr, A).node.state, 'TRANSIENT_FAILURE');
    assert.equal(child(rr, B).node.state, READY);
  });

  test('a child policy without describe() shows its name and the state it last reported', () => {
    const silent: PolicyFactory = {
      name: 'silent_test_policy',
      parseConfig: () => ({}),
      create: (helper: Helper): LoadBalancer => ({
        update: () => {
          helper.updateState('CONNECTING', OK_STATUS, queuePicker);
          return true;
        },
        exitIdle: () => {},
        resetBackoff: () => {},
        destroy: () => {},
      }),
    };
    const registry = registerAllPolicies(new Registry());
    registry.register(silent);
    const sim = new Simulation({ registry });
    sim.update(
      [{ addresses: [A], attributes: { path: ['only'] } }],
      [
        {
          priority_experimental: {
            children: { only: { config: [{ silent_test_policy: {} }] } },
            priorities: ['only'],
          },
        },
      ],
    );
    const node = root(sim);
    assert.deepEqual(child(node, 'only').node, { policy: 'silent_test_policy', state: 'CONNECTING' });
  });

  test('the share of picks follows the tree: weighted_target 3:1 puts about three quarters on a', () => {
    const sim = new Simulation({ seed: 3 });
    sim.update(
      [
        { addresses: [A], attributes: { path: ['a'] } },
        { addresses: [B], attributes: { path: ['b'] } },
      ],
      [
        {
          weighted_target_experimental: {
            targets: {
              a: { weight: 3, childPolicy: [{ round_robin: {} }] },
              b: { weight: 1, childPolicy: [{ round_robin: {} }] },
            },
          },
        },
      ],
    );
    sim.advance(1);
    const counted = tally(picks(sim, 4000));
    const node = root(sim);
    const leafPicks = (name: string) =>
      child(child(node, name).node, name === 'a' ? A : B).node.subchannels?.[0]?.picks;
    assert.equal(leafPicks('a'), counted[A]);
    assert.equal(leafPicks('b'), counted[B]);
    assert.ok(Math.abs(counted[A]! / 4000 - 0.75) < 0.03, `a got ${counted[A]} of 4000`);
  });
});
