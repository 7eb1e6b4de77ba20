import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Attributes,
  addressKey,
  type Endpoint,
  parseAddress,
  TRANSIENT_FAILURE,
} from '../../src/core/index.js';
import type { Simulation } from '../../src/sim/index.js';
import {
  type OverrideHostCallState,
  XDS_HEALTH_STATUS,
  XDS_OVERRIDE_HOST_CALL_ATTRIBUTE,
  type XdsHealthStatus,
  type XdsLocality,
} from '../../src/xds/index.js';
import {
  edsEntry,
  endpointResource,
  locality,
  withXdsConfig,
  xdsCluster,
  xdsConfig,
  xdsSimulation,
} from './xds-config-fixtures.js';

/** The call state a stateful session filter would attach: the cookie's addresses, and what the policy reports. */
class SessionCall implements OverrideHostCallState {
  actual: string | undefined;
  constructor(readonly cookieAddresses: readonly string[]) {}
  setActualAddressList(list: string): void {
    this.actual = list;
  }
  get attributes(): ReadonlyMap<unknown, unknown> {
    return new Map([[XDS_OVERRIDE_HOST_CALL_ATTRIBUTE, this]]);
  }
}

function ep(addresses: readonly string[], health?: XdsHealthStatus): Endpoint {
  return {
    addresses: addresses.map((a) => parseAddress(a)),
    attributes: health === undefined ? Attributes.EMPTY : Attributes.of(XDS_HEALTH_STATUS, health),
  };
}

function config(overrideHostStatus?: XdsHealthStatus[], child: unknown = [{ round_robin: {} }]): unknown {
  return [
    {
      xds_override_host_experimental: {
        childPolicy: child,
        ...(overrideHostStatus ? { overrideHostStatus } : {}),
      },
    },
  ];
}

/** Picks with the cookie naming `cookie`; returns the address used and what the policy reported for the cookie. */
function pickWith(
  sim: Simulation,
  cookie: readonly string[],
): { address: string; actual: string | undefined } {
  const call = new SessionCall(cookie);
  const p = sim.pick({ callAttributes: call.attributes });
  return { address: p.type === 'complete' ? p.address : p.type, actual: call.actual };
}

const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const C = '10.0.0.3:80';

function connected(endpoints: readonly Endpoint[], cfg: unknown = config()): Simulation {
  const sim = xdsSimulation();
  for (const e of endpoints) for (const a of e.addresses) sim.script(addressKey(a), { connectAfterMs: 1 });
  assert.ok(sim.update(endpoints, cfg));
  sim.advance(1);
  assert.equal(sim.state, 'READY');
  return sim;
}

describe('xds_override_host_experimental (A55 "LB Policy for Stateful Session Affinity", A61)', () => {
  test('A55 picker: a cookie naming a READY endpoint wins over the child policy, every time', () => {
    const sim = connected([ep([A]), ep([B]), ep([C])]);
    for (let i = 0; i < 30; i++) assert.deepEqual(pickWith(sim, [B]), { address: B, actual: B });
    // Without the override the child (round_robin) spreads the calls.
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++)
      seen.add(sim.pick().type === 'complete' ? (sim.pick() as { address: string }).address : '');
    assert.ok(seen.size > 1, `round_robin spreads calls without a cookie: ${[...seen]}`);
  });

  test('A55: no cookie — the child picks, and the endpoint it used is reported so the filter can set the cookie', () => {
    const sim = connected([ep([A]), ep([B])]);
    const reported = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = pickWith(sim, []);
      assert.equal(r.actual, r.address, 'the reported list is the used address');
      reported.add(r.address);
    }
    assert.deepEqual([...reported].sort(), [A, B]);
    // A call without the filter's state is the child's pick as is.
    assert.equal(sim.pick().type, 'complete');
  });

  test("A61: the cookie holds the endpoint's whole address list, the address used first", () => {
    const sim = connected([ep([A, '[fd00::1]:80']), ep([B])], config(undefined, [{ round_robin: {} }]));
    const r = pickWith(sim, [A]);
    assert.equal(r.address, A);
    assert.equal(r.actual, `${A},[fd00::1]:80`);
  });

  test('A61: an endpoint whose cookie address is down is still reached through its other READY address', () => {
    const A2 = '10.1.0.1:80';
    const sim = connected([ep([A, A2]), ep([B])]);
    // pick_first under round_robin connected A (the first address) only.
    assert.deepEqual(pickWith(sim, [A, A2]), { address: A, actual: `${A},${A2}` });
    // A's connection fails; pick_first moves to A2.
    sim.script(A2, { connectAfterMs: 1 });
    sim.script(A, { failAfterMs: 1 });
    sim.subchannel(A).setState(TRANSIENT_FAILURE);
    sim.advance(2);
    const r = pickWith(sim, [A, A2]);
    assert.equal(r.address, A2, 'the session stays on the endpoint through its other address');
    assert.equal(r.actual, `${A2},${A}`, 'the cookie is rewritten with the used address first');
  });

  test("A61: an EDS update that removes the cookie's first address keeps the session on the endpoint", () => {
    const A6 = '[fd00::1]:80';
    const sim = connected([ep([A, A6]), ep([B])]);
    assert.equal(pickWith(sim, [A, A6]).address, A);
    sim.script(A6, { connectAfterMs: 1 });
    assert.ok(sim.update([ep([A6]), ep([B])]));
    sim.advance(1);
    assert.deepEqual(pickWith(sim, [A, A6]), { address: A6, actual: A6 });
  });

  test('A55: a DRAINING endpoint leaves the child, but its cookie still reaches it when override_host_status has DRAINING', () => {
    const cfg = config(['UNKNOWN', 'HEALTHY', 'DRAINING']);
    const sim = connected([ep([A]), ep([B])], cfg);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])], cfg));
    for (let i = 0; i < 4; i++) assert.equal((sim.pick() as { address: string }).address, B, 'no new calls');
    assert.equal(sim.subchannel(A).released, false, 'the connection is kept although the child let it go');
    assert.equal(sim.subchannel(A).state, 'READY');
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
    // Removed from EDS: the held connection goes, and the cookie falls through to the child.
    assert.ok(sim.update([ep([B])], cfg));
    assert.equal(sim.subchannel(A).released, true);
    assert.deepEqual(pickWith(sim, [A]), { address: B, actual: B });
  });

  test('A55: an address an update keeps keeps its entry (the held DRAINING connection); one it drops is removed', () => {
    const cfg = config(['UNKNOWN', 'HEALTHY', 'DRAINING']);
    const mapped = (sim: Simulation) => sim.describe()?.facts?.addresses;
    const sim = connected([ep([A]), ep([B])], cfg);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])], cfg));
    const held = sim.subchannel(A);
    // Kept across two more updates (one adds C): the connection the policy holds for A stays, and serves A's cookie.
    sim.script(C, { connectAfterMs: 1 });
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B]), ep([C])], cfg));
    sim.advance(1);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B]), ep([C])], cfg));
    assert.equal(mapped(sim), 3);
    assert.equal(sim.subchannel(A), held);
    assert.equal(held.released, false);
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
    // B named by no endpoint, A named twice (two endpoints sharing it): B's entry goes, A's stays.
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([A], 'DRAINING'), ep([C])], cfg));
    assert.equal(mapped(sim), 2);
    assert.equal(held.released, false);
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
    assert.deepEqual(pickWith(sim, [B]), { address: C, actual: C }, "B's cookie falls through to the child");
    // A dropped too: its held connection is released.
    assert.ok(sim.update([ep([C])], cfg));
    assert.equal(mapped(sim), 1);
    assert.equal(held.released, true);
  });

  test('A55: with the default override_host_status [UNKNOWN, HEALTHY] a DRAINING endpoint is not overridden', () => {
    const sim = connected([ep([A]), ep([B])]);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])]));
    assert.equal(sim.subchannel(A).released, true, 'nothing keeps the connection');
    assert.deepEqual(pickWith(sim, [A]), { address: B, actual: B });
  });

  test('A55: a HEALTHY endpoint is not overridden when override_host_status leaves HEALTHY out', () => {
    const sim = connected([ep([A], 'HEALTHY'), ep([B], 'UNKNOWN')], config(['UNKNOWN']));
    const r = pickWith(sim, [A]);
    assert.equal(r.actual, r.address);
    // round_robin decides, and it also sends calls to B: the cookie did not pin A.
    const addresses = new Set([r.address, pickWith(sim, [A]).address, pickWith(sim, [A]).address]);
    assert.ok(addresses.has(B), `the child spread the calls: ${[...addresses]}`);
    assert.deepEqual(pickWith(sim, [B]), { address: B, actual: B }, 'UNKNOWN is still overridable');
  });

  test('A55: a cookie naming an unknown or failed address falls through to the child picker', () => {
    const sim = connected([ep([A]), ep([B])]);
    const unknown = pickWith(sim, ['10.9.9.9:80']);
    assert.ok(unknown.address === A || unknown.address === B);
    assert.equal(unknown.actual, unknown.address);
    sim.script(A, { failAfterMs: 1 });
    sim.subchannel(A).setState(TRANSIENT_FAILURE); // pick_first reconnects at once
    assert.equal(pickWith(sim, [A]).address, 'queue', 'a CONNECTING target is waited for');
    sim.advance(1); // the attempt fails: TRANSIENT_FAILURE for the backoff
    assert.equal(sim.subchannel(A).state, 'TRANSIENT_FAILURE');
    for (let i = 0; i < 4; i++) assert.deepEqual(pickWith(sim, [A]), { address: B, actual: B });
  });

  test('A55: an IDLE cookie target is connected, and the pick queued until it is READY', () => {
    const cfg = config(['UNKNOWN', 'HEALTHY', 'DRAINING']);
    const sim = connected([ep([A]), ep([B])], cfg);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])], cfg));
    // The kept connection to the DRAINING endpoint is closed by the server.
    sim.subchannel(A).setState('IDLE');
    const requests = sim.subchannel(A).connectionRequests;
    assert.equal(pickWith(sim, [A]).address, 'queue');
    assert.equal(sim.subchannel(A).connectionRequests, requests + 1, 'the pick asked for a connection');
    sim.advance(1);
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
  });

  test('gRPC: a cookie naming an endpoint the child holds no connection to gets one (pick_first kept only its first)', () => {
    const sim = connected([ep([A]), ep([B])], config(undefined, [{ pick_first: {} }]));
    assert.equal(sim.subchannel(B).released, true, 'pick_first let the second address go');
    assert.equal(pickWith(sim, [B]).address, 'queue');
    assert.equal(sim.subchannel(B).state, 'CONNECTING');
    sim.advance(1);
    assert.deepEqual(pickWith(sim, [B]), { address: B, actual: B });
    assert.equal(
      (sim.pick() as { address: string }).address,
      A,
      'calls without the cookie stay on pick_first',
    );
  });

  test('A55: a cookie naming a DRAINING endpoint this channel has no connection to gets one, and the pick waits for it', () => {
    const cfg = config(['UNKNOWN', 'HEALTHY', 'DRAINING']);
    const sim = xdsSimulation();
    sim.script(A, { connectAfterMs: 3 });
    sim.script(B, { connectAfterMs: 1 });
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])], cfg));
    sim.advance(1);
    assert.equal(sim.findSubchannel(A), undefined, 'the child never saw the DRAINING endpoint');
    assert.equal(pickWith(sim, [A]).address, 'queue');
    assert.equal(sim.subchannel(A).state, 'CONNECTING');
    sim.advance(3);
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
  });

  test('config: childPolicy is required and override_host_status values are checked, with their paths', () => {
    const sim = xdsSimulation();
    assert.equal(sim.update([A], [{ xds_override_host_experimental: {} }]), false);
    assert.match(String(sim.lastConfigError), /xds_override_host_experimental.*childPolicy.*required/);
    assert.equal(sim.update([A], config(['UNKNOWN', 'UNHEALTHY' as XdsHealthStatus])), false);
    assert.match(String(sim.lastConfigError), /overrideHostStatus\[1\].*UNHEALTHY/);
    assert.equal(sim.update([A], config(undefined, [{ no_such_policy: {} }])), false);
    assert.match(String(sim.lastConfigError), /childPolicy/);
  });

  test("A74: under an XdsConfig the cluster's override_host_status applies (here DRAINING, from CDS)", () => {
    const cluster = xdsCluster('c1', { overrideHostStatus: ['UNKNOWN', 'HEALTHY', 'DRAINING'] });
    const attributes = withXdsConfig(xdsConfig({ c1: edsEntry(cluster, endpointResource('c1', [])) }));
    const cfg = [
      { xds_override_host_experimental: { clusterName: 'c1', childPolicy: [{ round_robin: {} }] } },
    ];
    const sim = xdsSimulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    assert.ok(sim.update([ep([A]), ep([B])], cfg, attributes));
    sim.advance(1);
    assert.ok(sim.update([ep([A], 'DRAINING'), ep([B])], cfg, attributes));
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
  });

  test('A55 placement: cds builds priority → xds_cluster_impl → xds_override_host → endpoint policy; CDS override_host_status reaches it', () => {
    const health =
      (h: XdsHealthStatus) =>
      (l: XdsLocality): XdsLocality => ({
        ...l,
        endpoints: l.endpoints.map((e, i) => (i === 0 ? { ...e, healthStatus: h } : e)), // A is first
      });
    const cluster = xdsCluster('c1', { overrideHostStatus: ['UNKNOWN', 'HEALTHY', 'DRAINING'] });
    const attrs = (h: XdsHealthStatus) =>
      withXdsConfig(
        xdsConfig({ c1: edsEntry(cluster, endpointResource('c1', [[health(h)(locality('a', 1, [A, B]))]])) }),
      );
    const sim = xdsSimulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    assert.ok(sim.update([], [{ cds_experimental: { cluster: 'c1' } }], attrs('HEALTHY')));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A });
    assert.ok(sim.update([], undefined, attrs('DRAINING')));
    for (let i = 0; i < 4; i++)
      assert.equal((sim.pick() as { address: string }).address, B, 'DRAINING takes no new calls');
    assert.deepEqual(pickWith(sim, [A]), { address: A, actual: A }, 'but its sessions stay');
  });

  test('A51 out-of-band load reports reach weighted_round_robin below xds_override_host (one ORCA stream each)', () => {
    const sim = xdsSimulation();
    const keys = [A, B, C];
    keys.forEach((k, i) => {
      sim.orca(k).report = { applicationUtilization: [0.2, 0.4, 0.8][i]!, rpsFractional: 100 };
      sim.script(k, { connectAfterMs: 1 });
    });
    const wrr = [
      {
        weighted_round_robin: {
          blackoutPeriod: '0s',
          weightUpdatePeriod: '1s',
          enableOobLoadReport: true,
          oobReportingPeriod: '1s',
        },
      },
    ];
    assert.ok(sim.update(keys, config(undefined, wrr)));
    sim.advance(1001);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 7000; i++) {
      const p = sim.pick();
      if (p.type === 'complete') counts[p.address] = (counts[p.address] ?? 0) + 1;
    }
    for (const k of keys) assert.equal(sim.orca(k).streamsOpened, 1, `${k}: one stream through the wrapper`);
    assert.ok(
      counts[A]! > counts[B]! && counts[B]! > counts[C]!,
      `weights from OOB reports: ${JSON.stringify(counts)}`,
    );
  });
});

describe('xds_override_host while its child places a big list over turns (A55, A61; issue 25 §5)', () => {
  /** `n` single-address endpoints 10.1.x.y:80. */
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ep([`10.1.${(i >> 8) & 255}.${i & 255}:80`]));

  test('the map is the new list at once: an added address named by a cookie gets a connection the child later adopts; a dropped one falls through to the old picker', () => {
    const spread = xdsSimulation({ spreadTurnMs: 1 });
    for (const s of [A, B]) spread.script(s, { connectAfterMs: 1 });
    assert.ok(spread.update([ep([A]), ep([B])], config()));
    spread.advance(1);
    assert.equal(spread.state, 'READY');
    // 2,000 endpoints (A55's map and round_robin's list): round_robin places 1,000 a turn; B is dropped.
    const added = many(2_000);
    const last = addressKey(added[1_999]!.addresses[0]!);
    for (const e of added) spread.script(addressKey(e.addresses[0]!), { connectAfterMs: 1 });
    assert.ok(spread.update([ep([A]), ...added], config()));
    assert.equal(spread.findSubchannel(last), undefined, 'the child has not placed the last endpoint yet');
    // The old picker still serves: a cookie naming B (dropped from the map) falls through to it.
    const fallthrough = pickWith(spread, [B]);
    assert.ok(fallthrough.address === A || fallthrough.address === B, fallthrough.address);
    // A cookie naming an address only the new list has: the policy makes the connection, and the pick waits.
    assert.equal(pickWith(spread, [last]).address, 'queue');
    const held = spread.subchannel(last);
    assert.equal(held.state, 'CONNECTING');
    assert.equal(held.refs, 1, 'one handle: the one xds_override_host holds');
    spread.advance(3); // the turns place the rest; every new connection completes
    assert.equal(held.refs, 1, 'the child adopted the held connection: still one handle, now the child’s');
    assert.equal(held.released, false);
    assert.deepEqual(pickWith(spread, [last]), { address: last, actual: last });
    assert.equal(spread.findSubchannel(B)?.released, true, 'B went with the old child');
  });
});
