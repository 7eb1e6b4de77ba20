import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, ConfigError, type PickResult, unavailable } from '../../src/core/index.js';
import { xxh64 } from '../../src/hash/index.js';
import {
  buildRing,
  DEFAULT_RING_SIZE_CAP,
  effectiveRingSizes,
  parseRingHashConfig,
  RING_SIZE_CAP_ARG,
} from '../../src/policies/index.js';
import {
  type PlainMetadata,
  type SimPickResult,
  Simulation,
  type SubchannelHandle,
} from '../../src/sim/index.js';

const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const C = '10.0.0.3:80';
const D = '10.0.0.4:80';

/** One ring entry per endpoint (minRingSize = maxRingSize = n), so the ring order is easy to reason about. */
function rh(config: Record<string, unknown> = {}): unknown {
  return [{ ring_hash_experimental: config }];
}
const SMALL = (n: number, extra: Record<string, unknown> = {}) =>
  rh({ minRingSize: n, maxRingSize: n, ...extra });

/** The hash of an endpoint's first ring entry: a pick with it starts the walk at that endpoint. */
const at = (address: string) => xxh64(`${address}_0`);

/** Endpoints in ring order for a one-entry-per-endpoint ring. */
function ringOrder(addresses: string[]): string[] {
  return addresses.slice().sort((x, y) => (at(x) < at(y) ? -1 : 1));
}

/** The endpoint after `address` on a one-entry-per-endpoint ring. */
function after(addresses: string[], address: string): string {
  const order = ringOrder(addresses);
  return order[(order.indexOf(address) + 1) % order.length]!;
}

const NO_METADATA = { get: () => [] };

/** {@link target} for a pick made on a picker directly (not through the simulation). */
function rawTarget(p: PickResult): string {
  return p.type === 'complete' ? (p.subchannel as SubchannelHandle).key : p.type;
}

function target(p: SimPickResult): string {
  return p.type === 'complete' ? p.address : p.type;
}

/** A ring of A and B (one entry each) where a pick has connected A, and A is READY. */
function withAConnected(): Simulation {
  const sim = new Simulation();
  sim.script(A, { connectAfterMs: 1 });
  sim.update([A, B], SMALL(2));
  sim.pick({ hash: at(A) });
  sim.advance(1);
  return sim;
}

function requested(sim: Simulation, address: string): number {
  return sim.findSubchannel(address)?.connectionRequests ?? 0;
}

describe('ring_hash_experimental config (A42 "LB Policy Config", A76 request_hash_header)', () => {
  test('defaults: minRingSize 1024, maxRingSize 4096, no request hash header', () => {
    assert.deepEqual(parseRingHashConfig({}, '$'), {
      minRingSize: 1024,
      maxRingSize: 4096,
      requestHashHeader: '',
    });
  });

  test('accepts JSON and proto field names, and sizes written as strings (proto3 JSON uint64)', () => {
    assert.deepEqual(
      parseRingHashConfig({ min_ring_size: '10', max_ring_size: 20, request_hash_header: 'X-Key' }, '$'),
      {
        minRingSize: 10,
        maxRingSize: 20,
        requestHashHeader: 'x-key',
      },
    );
    assert.deepEqual(
      parseRingHashConfig({ minRingSize: 8_388_608, maxRingSize: 8_388_608 }, '$').maxRingSize,
      8_388_608,
    );
  });

  test('rejects out-of-range sizes, min > max, bad types and bad headers, naming the JSON path', () => {
    const P = '$[0].ring_hash_experimental';
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ minRingSize: 0 }, `${P}.minRingSize`, /out of range \[1, 8388608\]/],
      [{ maxRingSize: 8_388_609 }, `${P}.maxRingSize`, /out of range/],
      [{ min_ring_size: -5 }, `${P}.min_ring_size`, /out of range/],
      [{ minRingSize: 1.5 }, `${P}.minRingSize`, /expected an integer/],
      [{ maxRingSize: 'big' }, `${P}.maxRingSize`, /expected an integer/],
      [
        { minRingSize: 100, maxRingSize: 10 },
        `${P}.maxRingSize`,
        /maxRingSize \(10\) is smaller than minRingSize \(100\)/,
      ],
      [
        { minRingSize: 5000 },
        `${P}.minRingSize`,
        /maxRingSize \(4096\) is smaller than minRingSize \(5000\)/,
      ],
      [{ requestHashHeader: 'x-trace-bin' }, `${P}.requestHashHeader`, /binary header/],
      [{ requestHashHeader: 'bad header' }, `${P}.requestHashHeader`, /not a valid header name/],
      [{ requestHashHeader: ':path' }, `${P}.requestHashHeader`, /not a valid header name/],
      [{ request_hash_header: 7 }, `${P}.request_hash_header`, /expected a string/],
      [{ minRingSize: 1, min_ring_size: 1 }, `${P}.minRingSize`, /given twice/],
    ];
    for (const [config, path, problem] of cases) {
      const sim = new Simulation();
      assert.equal(sim.update([A], rh(config)), false, JSON.stringify(config));
      assert.ok(sim.lastConfigError instanceof ConfigError);
      assert.equal(sim.lastConfigError.path, path, JSON.stringify(config));
      assert.match(sim.lastConfigError.problem, problem);
    }
  });

  test('a rejected config leaves the running policy serving', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], rh());
    sim.pick({ hash: 1n });
    sim.advance(1);
    assert.equal(sim.update([A], rh({ maxRingSize: 0 })), false);
    assert.equal(target(sim.pick({ hash: 1n })), A);
  });

  test('the channel cap (grpc.lb.ring_hash.ring_size_cap, default 4096) clamps both sizes', () => {
    const config = parseRingHashConfig({ minRingSize: 100_000, maxRingSize: 8_000_000 }, '$');
    assert.equal(RING_SIZE_CAP_ARG, 'grpc.lb.ring_hash.ring_size_cap');
    assert.equal(DEFAULT_RING_SIZE_CAP, 4096);
    assert.deepEqual(effectiveRingSizes(config, {}), { minRingSize: 4096, maxRingSize: 4096 });
    assert.deepEqual(effectiveRingSizes(config, { [RING_SIZE_CAP_ARG]: 1_000_000 }), {
      minRingSize: 100_000,
      maxRingSize: 1_000_000,
    });
    const largest = parseRingHashConfig({ maxRingSize: 8_388_608 }, '$');
    assert.equal(effectiveRingSizes(largest, { [RING_SIZE_CAP_ARG]: 1e12 }).maxRingSize, 8_388_608);
    assert.deepEqual(effectiveRingSizes(parseRingHashConfig({}, '$'), { [RING_SIZE_CAP_ARG]: 16 }), {
      minRingSize: 16,
      maxRingSize: 16,
    });
  });

  test('the capped ring is the one picks use', () => {
    // Config asks for 1000 entries; a cap of 3 gives one entry per endpoint.
    const keys = [A, B, C];
    const capped = buildRing(keys, [1, 1, 1], 3, 3);
    const sim = new Simulation();
    for (const k of keys) sim.script(k, { connectAfterMs: 1 });
    sim.update(keys, rh({ minRingSize: 1000, maxRingSize: 1000 }), { [RING_SIZE_CAP_ARG]: 3 });
    for (const k of keys) sim.pick({ hash: at(k) });
    sim.advance(1);
    for (let i = 0; i < 100; i++) {
      const hash = xxh64(`probe-${i}`);
      const expected = keys[capped.endpointAt(capped.find(Number(hash >> 32n), Number(hash & 0xffffffffn)))];
      assert.equal(target(sim.pick({ hash })), expected);
    }
  });
});

describe('ring_hash endpoints (A42 "ring_hash_experimental LB policy", A61 "Ring Hash", A76 hash keys)', () => {
  test('children are lazy: an update creates no subchannel; the state is IDLE (A61)', () => {
    const sim = new Simulation();
    assert.equal(sim.update([A, B, C], rh()), true);
    assert.equal(sim.state, 'IDLE');
    for (const k of [A, B, C]) assert.equal(sim.findSubchannel(k), undefined);
  });

  test('a pick on an IDLE endpoint queues and connects that endpoint, off the data path', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 5 });
    sim.update([A, B, C], rh());
    const result = sim.picker.pick({ metadata: { get: () => [] }, hash: at(A) });
    assert.equal(result.type, 'queue');
    assert.equal(sim.findSubchannel(A), undefined, 'nothing is created inside the pick');
    sim.flush();
    assert.equal(requested(sim, A), 1);
    assert.equal(sim.findSubchannel(B), undefined);
    assert.equal(sim.state, 'CONNECTING');
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.equal(target(sim.pick({ hash: at(A) })), A);
  });

  test('many picks on one IDLE endpoint ask for one connection', () => {
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.update([A, B], rh());
    for (let i = 0; i < 10; i++) sim.picker.pick({ metadata: { get: () => [] }, hash: at(A) });
    sim.flush();
    assert.equal(requested(sim, A), 1);
    assert.equal(sim.subchannelsCreated, 1);
  });

  test('the same hash always reaches the same endpoint', () => {
    const sim = new Simulation();
    for (const k of [A, B, C, D]) sim.script(k, { connectAfterMs: 1 });
    sim.update([A, B, C, D], rh());
    for (const k of [A, B, C, D]) sim.pick({ hash: at(k) });
    sim.advance(1);
    for (const k of [A, B, C, D]) {
      for (let i = 0; i < 3; i++) assert.equal(target(sim.pick({ hash: at(k) })), k);
    }
  });

  test('duplicate endpoints merge into one child and sum their weights; resolver attributes are ignored', () => {
    const keys = [A, B];
    const merged = new Simulation();
    const weighted = new Simulation();
    for (const sim of [merged, weighted]) for (const k of keys) sim.script(k, { connectAfterMs: 1 });
    merged.update(
      [
        { addresses: [A], attributes: { weight: 2, locality: 'x' } },
        B,
        { addresses: [A], attributes: { locality: 'y' } },
      ],
      SMALL(4),
    );
    weighted.update([{ addresses: [A], attributes: { weight: 3 } }, B], SMALL(4));
    for (const sim of [merged, weighted]) {
      for (const k of keys) sim.pick({ hash: at(k) });
      sim.advance(1);
    }
    assert.equal(merged.subchannelsCreated, 2);
    // Weight 2 + 1 = 3 for A: 3 entries of 4, as in the explicitly weighted list.
    const ring = buildRing(keys, [3, 1], 4, 4);
    assert.deepEqual(Array.from(ring.entriesPerEndpoint), [3, 1]);
    for (let i = 0; i < 200; i++) {
      const hash = xxh64(`h${i}`);
      assert.equal(target(merged.pick({ hash })), target(weighted.pick({ hash })));
    }
  });

  test('an endpoint weight of 0, negative or not a number counts as 1', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
    sim.update(
      [
        { addresses: [A], attributes: { weight: 0 } },
        { addresses: [B], attributes: { weight: -4 } },
        { addresses: [C], attributes: { weight: Number.NaN } },
      ],
      SMALL(3),
    );
    for (const k of [A, B, C]) {
      sim.pick({ hash: at(k) });
      sim.advance(1);
      assert.equal(target(sim.pick({ hash: at(k) })), k, 'one entry each');
    }
  });

  test('huge and fractional weights are bounded as EDS weights are (uint32, integers): the ring stays sane', () => {
    const sim = new Simulation();
    for (const k of [A, B]) sim.script(k, { connectAfterMs: 1 });
    assert.equal(
      sim.update(
        [
          { addresses: [A], attributes: { weight: Number.POSITIVE_INFINITY } },
          { addresses: [A], attributes: { weight: 1e308 } },
          { addresses: [B], attributes: { weight: 1.9 } },
        ],
        rh(),
      ),
      true,
    );
    sim.pick({ hash: at(A) });
    sim.advance(1);
    assert.equal(target(sim.pick({ hash: 12345n })), A);
  });

  test('A76: the endpoint hash key attribute replaces the address in the ring keys', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update([{ addresses: [A], attributes: { hashKey: 'pod-0' } }, B], SMALL(2));
    sim.pick({ hash: xxh64('pod-0_0') });
    sim.pick({ hash: at(B) });
    sim.advance(1);
    assert.equal(target(sim.pick({ hash: xxh64('pod-0_0') })), A);
    assert.equal(target(sim.pick({ hash: at(B) })), B);
    // The address moves, the hash key stays: the same calls still reach the endpoint named pod-0.
    sim.script(C, { connectAfterMs: 1 });
    sim.update([{ addresses: [C], attributes: { hashKey: 'pod-0' } }, B], SMALL(2));
    sim.pick({ hash: xxh64('pod-0_0') });
    sim.advance(1);
    assert.equal(target(sim.pick({ hash: xxh64('pod-0_0') })), C);
    // An empty hash key falls back to the address.
    sim.update([{ addresses: [C], attributes: { hashKey: '' } }, B], SMALL(2));
    assert.equal(target(sim.pick({ hash: at(C) })), C);
  });

  test('children are kept by address set across updates and updated in place (A61)', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
    sim.update([A, B], rh());
    sim.pick({ hash: at(A) });
    sim.advance(1);
    const created = sim.subchannelsCreated;
    // Reordered, with a new endpoint: A keeps its connection; nothing new connects by itself.
    sim.update([C, B, A], rh());
    assert.equal(sim.subchannelsCreated, created);
    assert.equal(sim.subchannel(A).released, false);
    assert.equal(sim.findSubchannel(C), undefined);
    assert.equal(target(sim.pick({ hash: at(A) })), A, 'no queueing: the child was kept READY');
    // A removed endpoint's child is destroyed.
    sim.update([B, C], rh());
    assert.equal(sim.subchannel(A).released, true);
  });

  test('a picker from before an update connects the endpoint it names if the update kept it, never one it dropped (A42 picks, A61 lists)', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, 'hang');
    sim.update([A, B, C], rh());
    const old = sim.picker;
    // B is dropped and the rest reordered: the old picker's endpoint indexes no longer match the new list.
    sim.update([C, A], rh());
    const metadata = { get: () => [] };
    for (let i = 0; i < 3; i++) assert.equal(old.pick({ metadata, hash: at(A) }).type, 'queue');
    assert.equal(old.pick({ metadata, hash: at(B) }).type, 'queue');
    sim.flush();
    assert.equal(requested(sim, A), 1, 'A, kept by the update, connects once');
    assert.equal(sim.findSubchannel(B), undefined, 'B, dropped, is never connected');
    assert.equal(sim.findSubchannel(C), undefined);
    // The current picker's request for A, already connecting, adds nothing.
    assert.equal(target(sim.pick({ hash: at(A) })), 'queue');
    sim.flush();
    assert.equal(requested(sim, A), 1);
  });

  test('an endpoint with several addresses is hashed by its first address and connects through Happy Eyeballs', () => {
    const v6 = '[2001:db8::1]:80';
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.script(v6, { connectAfterMs: 10 });
    sim.update([{ addresses: [A, v6] }, B], SMALL(2));
    sim.pick({ hash: at(A) });
    assert.equal(requested(sim, A), 1);
    sim.advance(250);
    assert.equal(requested(sim, v6), 1);
    sim.advance(10);
    assert.equal(target(sim.pick({ hash: at(A) })), v6);
    // [v6, A] is the same endpoint (same child), now placed on the ring by its new first address.
    const created = sim.subchannelsCreated;
    sim.update([{ addresses: [v6, A] }, B], SMALL(2));
    assert.equal(sim.subchannelsCreated, created);
    assert.equal(target(sim.pick({ hash: xxh64(`${v6}_0`) })), v6);
  });
});

describe('ring_hash lazy children and list updates (A61 "Endpoint list updates", ring_hash connects lazily)', () => {
  test('a child not started yet connects with the address order of the latest update', () => {
    const v6 = '[2001:db8::1]:80';
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.script(v6, 'hang');
    sim.update([{ addresses: [A, v6] }, B], SMALL(2));
    // Reordered before any pick: the same child (same address set), placed by its new first address.
    sim.update([{ addresses: [v6, A] }, B], SMALL(2));
    assert.equal(sim.findSubchannel(A), undefined);
    assert.equal(sim.findSubchannel(v6), undefined);
    sim.pick({ hash: xxh64(`${v6}_0`) });
    assert.equal(requested(sim, v6), 1, 'Happy Eyeballs starts with the new first address');
    assert.equal(sim.findSubchannel(A)?.connectionRequests ?? 0, 0);
    sim.advance(250);
    assert.equal(requested(sim, A), 1, 'then, after the Connection Attempt Delay, the other (A61)');
  });

  test('an endpoint re-delivered with equal addresses and attributes keeps its connection and needs no new pass', () => {
    const sim = withAConnected();
    assert.equal(target(sim.pick({ hash: at(A) })), A);
    const created = sim.subchannelsCreated;
    for (let i = 0; i < 3; i++) sim.update([A, B], SMALL(2)); // new endpoint objects each time
    assert.equal(sim.subchannelsCreated, created);
    assert.equal(requested(sim, A), 1);
    assert.equal(target(sim.pick({ hash: at(A) })), A);
  });
});

describe('ring_hash aggregated state (A42 "Aggregated Connectivity State", rules 1-6 in order)', () => {
  test('all endpoints IDLE: IDLE (rule 5)', () => {
    const sim = new Simulation();
    sim.update([A, B], rh());
    assert.equal(sim.state, 'IDLE');
  });

  test('one CONNECTING among IDLE endpoints: CONNECTING (rule 3)', () => {
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.update([A, B, C], rh());
    sim.pick({ hash: at(A) });
    assert.equal(sim.state, 'CONNECTING');
  });

  test('one TRANSIENT_FAILURE among IDLE endpoints: CONNECTING (rule 4)', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 5 });
    for (const k of [B, C]) sim.script(k, 'hang');
    sim.update([A, B, C], rh());
    sim.pick({ hash: at(A) });
    sim.advance(5);
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(
      sim.history.map((h) => h.state),
      ['IDLE', 'CONNECTING', 'CONNECTING'],
      'IDLE, A connecting, A failed (rule 4); the endpoint then started proactively (rule 3) leaves the state as it is',
    );
    assert.equal(requested(sim, B) + requested(sim, C), 1, 'one IDLE endpoint started proactively (A61)');
  });

  test('two TRANSIENT_FAILURE: TRANSIENT_FAILURE (rule 2), with the last failure in the status', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 5, details: 'A refused' });
    sim.script(B, { failAfterMs: 5, details: 'B refused' });
    for (const k of [C, D]) sim.script(k, 'hang'); // the endpoint started proactively (rule 4) stays CONNECTING
    sim.update([A, B, C, D], rh());
    sim.pick({ hash: at(A) });
    sim.pick({ hash: at(B) });
    sim.advance(5);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.equal(sim.status.code, Code.UNAVAILABLE);
    assert.match(sim.status.details, /^no reachable endpoints; last error: UNAVAILABLE: .*B refused/);
  });

  test('a single endpoint that fails: TRANSIENT_FAILURE (rule 6)', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 5 });
    sim.update([A], rh());
    sim.pick({ hash: 1n });
    sim.advance(5);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
  });

  test('one READY wins over any number of failures (rule 1)', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 5 });
    sim.script(B, { failAfterMs: 5 });
    sim.script(C, { connectAfterMs: 7 });
    sim.update([A, B, C], rh());
    for (const k of [A, B, C]) sim.pick({ hash: at(k) });
    sim.advance(5);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.advance(2);
    assert.equal(sim.state, 'READY');
  });

  test('a READY endpoint turned unhealthy counts as TRANSIENT_FAILURE and asks for re-resolution (A61 health)', () => {
    const sim = withAConnected();
    sim.script(B, 'hang'); // B, started proactively once A is down, stays CONNECTING
    const before = sim.reresolutionRequests;
    sim.subchannel(A).setHealth('TRANSIENT_FAILURE', unavailable('NOT_SERVING'));
    sim.flush();
    assert.equal(sim.reresolutionRequests, before + 1);
    assert.notEqual(sim.state, 'READY');
  });
});

describe('ring_hash proactive connection (A61 "Ring Hash", upstream text)', () => {
  test('with no picks at all, it keeps one endpoint connecting until one is READY, then stops', () => {
    const sim = new Simulation({ backoffMs: 10_000, trace: true });
    const all = [A, B, C, D];
    for (const k of all) sim.script(k, { failAfterMs: 10 });
    sim.update(all, rh());
    // The only pick of the test: it lands on A, which fails.
    sim.pick({ hash: at(A) });
    let connecting = 0;
    for (let step = 0; step < 3; step++) {
      sim.advance(10);
      connecting = all.filter((k) => sim.findSubchannel(k)?.state === 'CONNECTING').length;
      assert.equal(connecting, 1, 'exactly one endpoint attempting at a time');
    }
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    // The next one to be tried connects.
    const next = all.find((k) => sim.findSubchannel(k)?.state === 'CONNECTING')!;
    sim.subchannel(next).setState('READY');
    sim.flush();
    assert.equal(sim.state, 'READY');
    assert.equal(all.filter((k) => requested(sim, k) > 0).length, 4);
    assert.ok(
      sim.traces.some((t) => /ring_hash: proactively connecting/.test(t)),
      'each proactive connection is traced',
    );
    // Once READY, no further proactive connections (backoff still running on the failed ones).
    const requests = all.map((k) => requested(sim, k));
    sim.advance(100);
    assert.deepEqual(
      all.map((k) => requested(sim, k)),
      requests,
    );
  });

  test('no proactive connection while some endpoint is CONNECTING, nor while IDLE or READY', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 5 });
    sim.script(B, 'hang');
    sim.update([A, B, C], rh());
    sim.advance(100);
    assert.equal(sim.subchannelsCreated, 0, 'IDLE: nothing happens without picks');
    sim.pick({ hash: at(B) });
    sim.pick({ hash: at(A) });
    sim.advance(5);
    // A failed while B is still CONNECTING: C is left alone.
    assert.equal(sim.state, 'CONNECTING');
    assert.equal(sim.findSubchannel(C), undefined);
  });

  test('an endpoint with no ring entries is not chosen (10 endpoints on a ring of 2)', () => {
    const all = Array.from({ length: 10 }, (_, i) => `10.0.1.${i}:80`);
    const ring = buildRing(all, new Array(10).fill(1), 2, 2);
    const onRing = all.filter((_, i) => ring.entriesPerEndpoint[i]! > 0);
    const sim = new Simulation();
    for (const k of all) sim.script(k, { failAfterMs: 5 });
    sim.update(all, SMALL(2));
    sim.pick({ hash: xxh64(`${onRing[0]}_0`) });
    sim.advance(50);
    const tried = all.filter((k) => requested(sim, k) > 0);
    assert.deepEqual(new Set(tried), new Set(onRing));
  });
});

describe('ring_hash picker (A61 "Ring Hash" picker pseudo-code; used in every state)', () => {
  const all = [A, B, C];

  test('walks past TRANSIENT_FAILURE endpoints to the next READY one', () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    const first = A;
    const second = after(all, first);
    sim.script(first, { failAfterMs: 1 });
    sim.script(second, { connectAfterMs: 1 });
    sim.update(all, SMALL(3));
    sim.pick({ hash: at(first) });
    sim.pick({ hash: at(second) });
    sim.advance(1);
    assert.equal(target(sim.pick({ hash: at(first) })), second);
  });

  test('the first non-failed endpoint decides: IDLE asks for a connection and queues, CONNECTING queues', () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    const first = A;
    const second = after(all, first);
    const third = after(all, second);
    sim.script(first, { failAfterMs: 1 });
    sim.script(second, 'hang');
    sim.script(third, 'hang');
    sim.update(all, SMALL(3));
    sim.pick({ hash: at(first) });
    sim.advance(1);
    // first is TF; the rule-4 proactive connection has started `second` (CONNECTING).
    assert.equal(sim.subchannel(second).state, 'CONNECTING');
    assert.equal(target(sim.pick({ hash: at(first) })), 'queue');
    assert.equal(sim.findSubchannel(third), undefined, 'the walk stops at the CONNECTING endpoint');
    sim.subchannel(second).setState('TRANSIENT_FAILURE');
    sim.flush();
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    // Now both are TF and `third` is IDLE: it was started proactively, or a pick starts it.
    assert.equal(target(sim.pick({ hash: at(first) })), 'queue');
    assert.equal(requested(sim, third), 1);
  });

  test('the ring picker serves TRANSIENT_FAILURE too: a pick reaching an IDLE endpoint connects it', () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    const four = [A, B, C, D];
    for (const k of four) sim.script(k, 'hang');
    sim.update(four, SMALL(4));
    const order = ringOrder(four);
    // Fail two endpoints directly: TRANSIENT_FAILURE by rule 2.
    for (const k of [order[0]!, order[1]!]) {
      sim.pick({ hash: at(k) });
      sim.subchannel(k).setState('TRANSIENT_FAILURE');
      sim.flush();
    }
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    const idle = [order[2]!, order[3]!].filter((k) => sim.findSubchannel(k) === undefined);
    assert.ok(idle.length > 0);
    assert.equal(target(sim.pick({ hash: at(idle[0]!) })), 'queue');
    assert.equal(requested(sim, idle[0]!), 1);
  });

  test("every endpoint failed: the pick fails with the first entry's failure", () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    sim.script(A, { failAfterMs: 1, details: 'A is down' });
    sim.script(B, { failAfterMs: 1, details: 'B is down' });
    sim.update([A, B], SMALL(2));
    sim.pick({ hash: at(A) });
    sim.pick({ hash: at(B) });
    sim.advance(1);
    const failA = sim.pick({ hash: at(A) });
    const failB = sim.pick({ hash: at(B) });
    assert.equal(failA.type, 'fail');
    assert.match(failA.type === 'fail' ? failA.status.details : '', /A is down/);
    assert.match(failB.type === 'fail' ? failB.status.details : '', /B is down/);
  });

  test('pickers of one endpoint list read its live endpoint states (A42 "Picker": state kept in sync with the policy); a picker from before an update keeps its own list', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 5 });
    sim.script(C, { connectAfterMs: 5 });
    sim.update([A, B], rh());
    sim.pick({ hash: at(A) });
    const old = sim.picker;
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.notEqual(
      sim.picker,
      old,
      'READY is still reported with a new picker (queued calls are re-picked)',
    );
    assert.equal(
      rawTarget(old.pick({ metadata: NO_METADATA, hash: at(A) })),
      A,
      'the older picker sees A READY',
    );
    assert.equal(target(sim.pick({ hash: at(A) })), A);
    // A new list (C added: a new ring) makes new pickers over a new view; the older ones are not written to.
    const beforeUpdate = sim.picker;
    sim.update([A, B, C], rh());
    sim.pick({ hash: at(C) });
    sim.advance(5);
    assert.equal(target(sim.pick({ hash: at(C) })), C);
    const onOldList = beforeUpdate.pick({ metadata: NO_METADATA, hash: at(C) });
    assert.notEqual(rawTarget(onOldList), C, 'the old list has no C');
  });

  test('an endpoint starting to connect while the aggregated state stands makes no new picker; picks there queue and ask once (A42 picker state sync)', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, 'hang');
    sim.update([A, B], SMALL(2));
    sim.pick({ hash: at(A) });
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const reports = sim.history.length;
    assert.equal(target(sim.pick({ hash: at(B) })), 'queue');
    sim.flush();
    assert.equal(sim.subchannel(B).state, 'CONNECTING');
    assert.equal(sim.history.length, reports, 'READY stands: no picker for B turning CONNECTING');
    // The published picker reads B's live state, CONNECTING: a pick there queues and asks for nothing.
    for (let i = 0; i < 5; i++) assert.equal(target(sim.pick({ hash: at(B) })), 'queue');
    sim.flush();
    assert.equal(requested(sim, B), 1, 'one connection attempt');
    assert.equal(target(sim.pick({ hash: at(A) })), A);
  });

  test('hashes at and past the ends of the ring wrap around', () => {
    const sim = new Simulation();
    for (const k of all) sim.script(k, { connectAfterMs: 1 });
    sim.update(all, SMALL(3));
    for (const k of all) sim.pick({ hash: at(k) });
    sim.advance(1);
    const order = ringOrder(all);
    assert.equal(target(sim.pick({ hash: 0n })), order[0]);
    assert.equal(target(sim.pick({ hash: (1n << 64n) - 1n })), order[0]);
    assert.equal(target(sim.pick({ hash: at(order[2]!) + 1n })), order[0]);
    assert.equal(target(sim.pick({ hash: at(order[1]!) })), order[1]);
    assert.equal(target(sim.pick({ hash: at(order[1]!) + 1n })), order[2]);
    // A hash outside [0, 2^64) is taken mod 2^64 rather than throwing.
    assert.equal(target(sim.pick({ hash: -1n })), order[0]);
  });
});

describe('ring_hash request hash (A42 via PickArgs.hash; A76 request_hash_header)', () => {
  test('without a header config and without an upstream hash, the pick fails INTERNAL and says how to fix it', () => {
    const sim = new Simulation();
    sim.update([A], rh());
    const p = sim.pick();
    assert.equal(p.type, 'fail');
    if (p.type !== 'fail') return;
    assert.equal(p.status.code, Code.INTERNAL);
    assert.match(p.status.details, /no request hash/);
    assert.match(p.status.details, /requestHashHeader/);
    assert.match(p.status.details, /hash_policy/);
    assert.equal(sim.subchannelsCreated, 0);
  });

  test('with requestHashHeader, the header value is the hash key (several values joined with ","); PickArgs.hash is ignored', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
    sim.update([A, B, C], SMALL(3, { requestHashHeader: 'x-session' }));
    const md = (v: string | string[]): PlainMetadata => ({ 'x-session': v });
    for (const k of [A, B, C]) sim.pick({ metadata: md(`${k}_0`) });
    sim.advance(1);
    for (const k of [A, B, C])
      assert.equal(target(sim.pick({ metadata: md(`${k}_0`), hash: at(after([A, B, C], k)) })), k);
    // "x,y" joined: the same endpoint as the single value "x,y".
    const joined = target(sim.pick({ metadata: md(['user', '42']) }));
    assert.equal(joined, target(sim.pick({ metadata: md('user,42') })));
  });

  test('a call without the header gets a random hash: the first READY endpoint from a random place', () => {
    const sim = new Simulation({ seed: 3 });
    for (const k of [A, B, C, D]) sim.script(k, { connectAfterMs: 1 });
    sim.update([A, B, C, D], rh({ requestHashHeader: 'x-session' }));
    // The header value "<address>_0" hashes to that endpoint's first entry: connect all four.
    for (const k of [A, B, C, D]) sim.pick({ metadata: { 'x-session': `${k}_0` } });
    sim.advance(1);
    const seen = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const t = target(sim.pick());
      seen.set(t, (seen.get(t) ?? 0) + 1);
    }
    assert.deepEqual([...seen.keys()].sort(), [A, B, C, D].sort(), 'spread over every READY endpoint');
  });

  test('random hash with no READY endpoint: at most one IDLE endpoint asked per pick, none while one is CONNECTING (A76)', () => {
    const sim = new Simulation({ seed: 5 });
    for (const k of [A, B, C, D]) sim.script(k, 'hang');
    sim.update([A, B, C, D], rh({ requestHashHeader: 'x-session' }));
    assert.equal(target(sim.pick()), 'queue');
    assert.equal(sim.subchannelsCreated, 1, 'one endpoint asked to connect');
    for (let i = 0; i < 20; i++) assert.equal(target(sim.pick()), 'queue');
    assert.equal(sim.subchannelsCreated, 1, 'none while one is CONNECTING');
  });

  test('random hash under a picker published before an endpoint started connecting: still none while one is CONNECTING (A76, live count)', () => {
    const sim = new Simulation({ seed: 7, backoffMs: 60_000 });
    const four = [A, B, C, D];
    sim.script(A, { failAfterMs: 1 });
    sim.script(B, { failAfterMs: 1 });
    for (const k of [C, D]) sim.script(k, 'hang');
    sim.update(four, rh({ requestHashHeader: 'x-session' }));
    for (const k of [A, B]) sim.pick({ metadata: { 'x-session': `${k}_0` } });
    sim.advance(1);
    // Two failures: TRANSIENT_FAILURE (rule 2), and the proactive rule starts one IDLE endpoint (A61); that
    // change leaves the state as it is, so the picker published with the failure is still the channel's.
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.equal(sim.subchannelsCreated, 3);
    for (let i = 0; i < 20; i++) assert.equal(target(sim.pick()), 'queue');
    assert.equal(sim.subchannelsCreated, 3, 'no second connection while one is CONNECTING');
  });

  test("random hash when every endpoint failed: the first entry's failure", () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    sim.script(A, { failAfterMs: 1, details: 'down' });
    sim.update([A], rh({ requestHashHeader: 'x-session' }));
    sim.pick();
    sim.advance(1);
    const p = sim.pick();
    assert.equal(p.type, 'fail');
    assert.match(p.type === 'fail' ? p.status.details : '', /down/);
  });

  test('a present but empty header value is hashed (A76 pseudo-code: only an absent header is random)', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
    sim.update([A, B, C], rh({ requestHashHeader: 'x-session' }));
    sim.pick({ metadata: { 'x-session': '' } });
    sim.advance(1);
    const first = target(sim.pick({ metadata: { 'x-session': '' } }));
    for (let i = 0; i < 10; i++) assert.equal(target(sim.pick({ metadata: { 'x-session': '' } })), first);
  });
});

describe('ring_hash lifecycle (A42, A61 petiole rules)', () => {
  test('an empty list: TRANSIENT_FAILURE, re-resolution, not accepted; children destroyed', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], rh());
    sim.pick({ hash: 1n });
    sim.advance(1);
    assert.equal(sim.update([], rh()), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /empty endpoint list/);
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.pick({ hash: 1n }).type, 'fail');
  });

  test('a resolver error: TRANSIENT_FAILURE before any list, ignored once endpoints are in hand', () => {
    const sim = new Simulation();
    sim.createRoot(rh());
    assert.equal(sim.updateError(unavailable('DNS down')), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /name resolution failed: DNS down/);
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], rh());
    sim.pick({ hash: 1n });
    sim.advance(1);
    assert.equal(sim.updateError(unavailable('DNS down')), false);
    assert.equal(sim.state, 'READY');
  });

  test('exitIdle starts nothing (connections follow picks); resetBackoff reaches started children', () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    sim.script(A, { failAfterMs: 1 });
    sim.update([A, B], rh());
    sim.exitIdle();
    assert.equal(sim.subchannelsCreated, 0);
    sim.pick({ hash: at(A) });
    sim.advance(1);
    assert.equal(sim.subchannel(A).state, 'TRANSIENT_FAILURE');
    sim.script(A, { connectAfterMs: 1 });
    sim.resetBackoff();
    sim.advance(1);
    assert.equal(sim.subchannel(A).state, 'READY');
  });

  test('destroy() releases every subchannel and leaves no timer behind, even with a connection pending', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A, B], rh());
    sim.pick({ hash: at(A) });
    sim.advance(1);
    sim.picker.pick({ metadata: { get: () => [] }, hash: at(B) });
    sim.destroy();
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.findSubchannel(B), undefined);
    assert.equal(sim.clock.pendingTimers, 0);
  });

  test('registered as ring_hash_experimental alongside the other policies', () => {
    assert.ok(new Simulation().registry.has('ring_hash_experimental'));
  });

  test('10,000 endpoints update and re-update quickly (no quadratic work)', () => {
    const all = Array.from(
      { length: 10_000 },
      (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:80`,
    );
    const sim = new Simulation();
    const started = performance.now();
    assert.equal(sim.update(all, rh()), true);
    assert.equal(sim.update(all.slice().reverse(), rh()), true);
    assert.ok(performance.now() - started < 2000);
  });
});
