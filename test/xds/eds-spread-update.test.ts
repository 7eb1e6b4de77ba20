// Issue 25 §5: a big EDS push is placed over event-loop turns whatever its shape. Here the tree cds runs for a
// cluster (A56 priority → xds_cluster_impl → xds_override_host → A52 xds_wrr_locality → weighted_target →
// round_robin, or A42 ring_hash), given 10,000 endpoints in 100 localities of 100 (each locality's list is small,
// but the channel places at most 1,000 endpoints a turn) or under ring_hash. The channel must keep its old picker
// until the push is complete and then see the picker the push applied in one turn makes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation, type SimulationOptions } from '../../src/sim/index.js';
import {
  encodeCluster,
  encodeClusterLoadAssignment,
  XdsClusterTreeGenerator,
} from '../../src/xds/balancer/cluster-tree.js';
import { hashedPicks } from '../support/sim-picks.js';
import { assignment, edsCluster } from './helpers.js';

/** `n` distinct IPv4 addresses from the `from`-th one on (port 80, as the assignment gives them). */
function ips(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  });
}

/** `count` localities of `size` endpoints, from the `from`-th address on. */
function localities(count: number, size: number, from = 0): string[][] {
  return Array.from({ length: count }, (_, z) => ips(size, from + z * size));
}

/** A channel on the tree cds runs for one EDS cluster, pushed lists of localities. */
class Channel {
  readonly sim: Simulation;
  private readonly generator = new XdsClusterTreeGenerator();
  private readonly cluster: Uint8Array;

  constructor(lbPolicy: 'ROUND_ROBIN' | 'RING_HASH', options: SimulationOptions) {
    this.sim = new Simulation(options);
    this.cluster = encodeCluster(edsCluster({ lbPolicy }));
  }

  private last: ReturnType<XdsClusterTreeGenerator['updateEndpoints']> | null = null;

  push(zones: readonly (readonly string[])[]): void {
    const cla = assignment(zones.map((endpoints, z) => ({ zone: `z${z}`, endpoints })));
    this.last = this.generator.updateEndpoints(this.cluster, encodeClusterLoadAssignment(cla));
    this.pushAgain();
  }

  /** The last push's tree delivered again, as it was. */
  pushAgain(): void {
    const tree = this.last!;
    assert.equal(this.sim.update(tree.endpoints, tree.config, tree.attributes), true);
  }
}

/** Where `n` picks land, as a set of IPs (the sims' random sequences differ, so not in which order). */
function pickedIps(sim: Simulation, n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < n; i++) {
    const p = sim.pick();
    out.add(p.type === 'complete' ? p.address.slice(0, p.address.lastIndexOf(':')) : p.type);
  }
  return out;
}

const OLD = [['192.168.0.1', '192.168.0.2', '192.168.0.3']];
const HASHES = Array.from({ length: 200 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn);

describe('100 localities of 100 endpoints, the tree cds runs (A56, A52; issue 25 §5)', () => {
  test('10 localities a turn; the old picker serves and the channel hears nothing until the push is complete', () => {
    const spread = new Channel('ROUND_ROBIN', { spreadTurnMs: 1 });
    const once = new Channel('ROUND_ROBIN', { spreadUpdates: false });
    for (const c of [spread, once]) {
      c.push(OLD);
      c.sim.advance(1);
      assert.equal(c.sim.state, 'READY');
    }
    const oldIps = new Set(OLD[0]);
    const reports = spread.sim.history.length;
    const big = localities(100, 100);
    spread.push(big);
    once.push(big);
    for (let turn = 0; turn < 10; turn++) {
      // The push's own turn placed the first 10 localities (1,000 endpoints), each later turn 10 more.
      assert.equal(spread.sim.subchannelsCreated, 3 + (turn + 1) * 1_000, `turn ${turn}`);
      if (turn < 9) {
        assert.equal(spread.sim.updateTurns.spreading, true, `turn ${turn}`);
        assert.deepEqual(pickedIps(spread.sim, 30), oldIps, `the old picker serves (turn ${turn})`);
        assert.equal(spread.sim.history.length, reports, `nothing reported (turn ${turn})`);
      }
      spread.sim.advance(1);
    }
    assert.equal(spread.sim.updateTurns.spreading, false);
    once.sim.advance(10);
    assert.equal(spread.sim.state, 'READY');
    assert.deepEqual(spread.sim.describe(), once.sim.describe());
    const all = new Set(big.flat());
    for (const ip of pickedIps(spread.sim, 2_000)) assert.ok(all.has(ip), ip);
    assert.equal(spread.sim.subchannel('192.168.0.1:80').released, true);
  });

  test('a later push supersedes one being placed: the result is the later push applied in one turn', () => {
    const spread = new Channel('ROUND_ROBIN', { spreadTurnMs: 1 });
    const once = new Channel('ROUND_ROBIN', { spreadUpdates: false });
    const first = localities(100, 100);
    const second = localities(100, 100, 5_000); // shares 5,000 endpoints with the first
    for (const c of [spread, once]) {
      c.push(first);
      c.sim.advance(3);
      c.push(second);
    }
    assert.equal(spread.sim.updateTurns.spreading, true);
    spread.sim.advance(20);
    once.sim.advance(20);
    assert.equal(spread.sim.updateTurns.spreading, false);
    assert.deepEqual(spread.sim.describe(), once.sim.describe());
    const all = new Set(second.flat());
    for (const ip of pickedIps(spread.sim, 2_000)) assert.ok(all.has(ip), ip);
  });

  test('the same push again while it is placed lets it go on', () => {
    const c = new Channel('ROUND_ROBIN', { spreadTurnMs: 1 });
    const big = localities(100, 100);
    c.push(big);
    c.sim.advance(3);
    c.pushAgain();
    assert.equal(c.sim.subchannelsCreated, 4_000);
    c.sim.advance(5);
    assert.equal(c.sim.updateTurns.spreading, true);
    c.sim.advance(1);
    assert.equal(c.sim.updateTurns.spreading, false);
    assert.equal(c.sim.subchannelsCreated, 10_000);
  });
});

describe('10,000 endpoints under ring_hash, the tree cds runs (A42, A56; issue 25 §5)', () => {
  test('1,000 endpoints a turn, the old ring serving; one ring, built at the end, equal to the one-turn ring', () => {
    const spread = new Channel('RING_HASH', { spreadTurnMs: 1, trace: true });
    const once = new Channel('RING_HASH', { spreadUpdates: false });
    for (const c of [spread, once]) c.push(OLD);
    const before = hashedPicks(spread.sim, HASHES);
    assert.deepEqual(new Set(before), new Set(OLD[0]!.map((ip) => `${ip}:80`)));
    const rings = () => spread.sim.traces.filter((t) => t.includes('ring_hash: built a ring')).length;
    assert.equal(rings(), 1);
    const reports = spread.sim.history.length;
    const big = localities(10, 1_000);
    spread.push(big);
    once.push(big);
    for (let turn = 0; turn < 10; turn++) {
      assert.equal(spread.sim.updateTurns.spreading, true, `turn ${turn}`);
      // The old ring answers every hash as before, and nothing is reported.
      const now = HASHES.map((hash) => spread.sim.pick({ hash }));
      assert.deepEqual(
        now.map((p) => (p.type === 'complete' ? p.address : p.type)),
        before,
        `turn ${turn}`,
      );
      assert.equal(spread.sim.history.length, reports, `turn ${turn}`);
      assert.equal(rings(), 1, `turn ${turn}`);
      spread.sim.advance(1);
    }
    assert.equal(spread.sim.updateTurns.spreading, false);
    assert.equal(rings(), 2);
    once.sim.advance(10);
    const spreadTree = spread.sim.describe();
    assert.deepEqual(spreadTree, once.sim.describe());
    assert.deepEqual(hashedPicks(spread.sim, HASHES), hashedPicks(once.sim, HASHES));
  });
});
