import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, unavailable } from '../../../src/core/index.js';
import { ClientResourceStatus } from '../../../src/protos/gen/envoy/admin/v3/config_dump_shared_pb.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { toCsdsClientConfig } from '../../../src/xds/client/csds.js';
import { formatXdsClientDump } from '../../../src/xds/client/dump.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import { FakeAdsServer, RecordingWatcher } from './fake-ads.js';
import { partThingType, type Thing, thing, wholeThingType } from './test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;
const PART = partThingType.typeUrl;

interface SetupOptions {
  readonly features?: string[];
  readonly dataErrorHandling?: boolean;
  /** The backoff's random source; 0.5 makes the jitter factor exactly 1: delays 1000, 1600, 2560, … */
  readonly random?: () => number;
  readonly onWatcherError?: (error: unknown) => void;
}

function setup(options: SetupOptions = {}) {
  const clock = new VirtualClock();
  const ads = new FakeAdsServer();
  const traces: string[] = [];
  const client = new XdsClient({
    bootstrap: parseBootstrap({
      xds_servers: [
        {
          server_uri: 'cp.example:443',
          channel_creds: [{ type: 'insecure' }],
          server_features: options.features ?? [],
        },
      ],
      node: { id: 'node-1', cluster: 'c', locality: { zone: 'z1' } },
    }),
    transport: ads.factory,
    clock,
    trace: (m) => traces.push(m()),
    backoff: { random: options.random ?? (() => 0.5) },
    dataErrorHandling: options.dataErrorHandling ?? true,
    ...(options.onWatcherError && { onWatcherError: options.onWatcherError }),
  });
  return { clock, ads, client, traces };
}

/** A watcher started now, after what watch() delivers on the next turn. */
function lateWatcher(env: ReturnType<typeof setup>, name: string): RecordingWatcher<Thing> {
  const late = new RecordingWatcher(show);
  env.client.watch(wholeThingType, name, late);
  env.clock.runDue();
  return late;
}

const show = (t: Thing) => `${t.name}=${t.value}`;

/** Watches `name` of the whole-thing type and lets the subscription go out on a connected stream. */
function watchWhole(env: ReturnType<typeof setup>, ...names: string[]) {
  const watchers = names.map((name) => {
    const w = new RecordingWatcher(show);
    env.client.watch(wholeThingType, name, w);
    return w;
  });
  env.clock.runDue();
  env.ads.stream.connect();
  return watchers;
}

describe('xDS client: requests (A27 "Initial Request on the ADS Stream", xDS SotW protocol)', () => {
  test('watches of one turn make one stream and one request per type, names sorted, node in the first only', () => {
    const env = setup();
    env.client.watch(wholeThingType, 'b', new RecordingWatcher());
    env.client.watch(wholeThingType, 'a', new RecordingWatcher());
    env.client.watch(partThingType, 'p', new RecordingWatcher());
    assert.equal(env.ads.streams.length, 0, 'nothing is sent from inside watch()');
    env.clock.runDue();
    assert.equal(env.ads.streams.length, 1);
    const [whole, part] = [env.ads.stream.requestsOf(WHOLE), env.ads.stream.requestsOf(PART)];
    assert.equal(whole.length, 1);
    assert.equal(part.length, 1);
    assert.deepEqual(whole[0]!.resourceNames, ['a', 'b']);
    assert.equal(whole[0]!.versionInfo, '');
    assert.equal(whole[0]!.responseNonce, '');
    assert.equal(whole[0]!.node?.id, 'node-1');
    assert.equal(whole[0]!.node?.cluster, 'c');
    assert.equal(whole[0]!.node?.locality?.zone, 'z1');
    assert.equal(whole[0]!.node?.userAgentName, 'lbtree');
    assert.ok(whole[0]!.node?.clientFeatures.includes('envoy.lb.does_not_support_overprovisioning'));
    assert.equal(part[0]!.node?.id, 'node-1', 'the first request of each type carries the node');
    env.client.watch(wholeThingType, 'c', new RecordingWatcher());
    env.clock.runDue();
    const next = env.ads.stream.lastOf(WHOLE);
    assert.deepEqual(next.resourceNames, ['a', 'b', 'c']);
    assert.equal(next.node, undefined, 'later requests of a type leave the node out');
  });

  test('a cancelled watch unsubscribes; cancelling and watching again in one turn sends nothing and keeps the cache', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a', 'b');
    env.ads.stream.respond(WHOLE, '1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    assert.deepEqual(a!.take(), ['changed a=1']);
    const cancel = env.client.watch(wholeThingType, 'b', new RecordingWatcher());
    env.clock.runDue();
    const sent = env.ads.stream.requests.length;
    cancel();
    const again = new RecordingWatcher(show);
    env.client.watch(wholeThingType, 'b', again);
    env.clock.runDue();
    assert.equal(env.ads.stream.requests.length, sent, 'the subscription did not change');
    assert.deepEqual(again.take(), ['changed b=2']);
    const dumpB = env.client.dump().resources.find((r) => r.name === 'b');
    assert.equal(dumpB?.watchers, 2);
  });

  test('the last watcher of a name going away removes it from the subscription and from the cache', () => {
    const env = setup();
    const cancel = env.client.watch(wholeThingType, 'a', new RecordingWatcher());
    env.client.watch(wholeThingType, 'b', new RecordingWatcher());
    env.clock.runDue();
    env.ads.stream.respond(WHOLE, '1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    cancel();
    cancel();
    env.clock.runDue();
    assert.deepEqual(env.ads.stream.lastOf(WHOLE).resourceNames, ['b']);
    assert.deepEqual(
      env.client.dump().resources.map((r) => r.name),
      ['b'],
    );
  });
});

describe('xDS client: ACK and NACK (A27, A40 "Continue After First Error", A88 "Handling Data Errors")', () => {
  test('a valid response is ACKed with its version and nonce, and the watchers hear the resources', () => {
    const env = setup();
    const [a, b] = watchWhole(env, 'a', 'b');
    const nonce = env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    const ack = env.ads.stream.lastOf(WHOLE);
    assert.equal(ack.versionInfo, 'v1');
    assert.equal(ack.responseNonce, nonce);
    assert.equal(ack.errorDetail, undefined);
    assert.deepEqual(ack.resourceNames, ['a', 'b']);
    assert.deepEqual(a!.take(), ['changed a=1']);
    assert.deepEqual(b!.take(), ['changed b=2']);
    const dump = env.client.dump();
    assert.deepEqual(
      dump.resources.map((r) => [r.name, r.status, r.version]),
      [
        ['a', 'ACKED', 'v1'],
        ['b', 'ACKED', 'v1'],
      ],
    );
    assert.deepEqual(dump.types, [{ typeUrl: WHOLE, version: 'v1', nonce }]);
  });

  test('an unchanged resource in a new version is ACKed without telling the watchers again', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    env.ads.stream.respond(WHOLE, 'v2', [thing(WHOLE, 'a', 1)]);
    assert.deepEqual(a!.take(), ['changed a=1']);
    assert.equal(env.ads.stream.lastOf(WHOLE).versionInfo, 'v2');
    env.ads.stream.respond(WHOLE, 'v3', [thing(WHOLE, 'a', 5)]);
    assert.deepEqual(a!.take(), ['changed a=5']);
  });

  test('a NACK keeps the last ACKed version, carries the new nonce and names every invalid resource and field', () => {
    const env = setup();
    const [a, b, c] = watchWhole(env, 'a', 'b', 'c');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2), thing(WHOLE, 'c', 3)]);
    for (const w of [a, b, c]) w!.take();
    const nonce = env.ads.stream.respond(WHOLE, 'v2', [
      thing(WHOLE, 'a', -1),
      thing(WHOLE, 'b', 20),
      thing(WHOLE, 'c', 'x'),
    ]);
    const nack = env.ads.stream.lastOf(WHOLE);
    assert.equal(nack.versionInfo, 'v1', 'NACK carries the last good version');
    assert.equal(nack.responseNonce, nonce);
    assert.equal(nack.errorDetail?.code, Code.INVALID_ARGUMENT);
    assert.match(nack.errorDetail?.message ?? '', /WholeThing "a": value: -1 is not a non-negative number/);
    assert.match(nack.errorDetail?.message ?? '', /WholeThing "c": value: "x"/);
    // A88: with a good version cached, a NACK is an ambient error and the cached resource keeps serving.
    assert.deepEqual(a!.take(), ['ambient INVALID_ARGUMENT']);
    assert.match(a!.statuses[0]!.details, /NACK of WholeThing "a" version "v2": value: -1.*node ID node-1/);
    // Valid resources of a NACKed response are used.
    assert.deepEqual(b!.take(), ['changed b=20']);
    const dumpA = env.client.dump().resources.find((r) => r.name === 'a')!;
    assert.equal(dumpA.status, 'NACKED');
    assert.deepEqual(dumpA.value, { name: 'a', value: 1 });
    assert.equal(dumpA.version, 'v1');
    assert.equal(dumpA.error?.version, 'v2', 'the dump shows the rejected version');
    assert.match(dumpA.error?.details ?? '', /value: -1/);
    // The next good response is ACKed with its own version and clears the ambient error.
    env.ads.stream.respond(WHOLE, 'v3', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 20), thing(WHOLE, 'c', 3)]);
    assert.equal(env.ads.stream.lastOf(WHOLE).versionInfo, 'v3');
    assert.equal(env.ads.stream.lastOf(WHOLE).errorDetail, undefined);
    assert.deepEqual(a!.take(), ['ambient OK']);
    assert.equal(env.client.dump().resources.find((r) => r.name === 'a')!.status, 'ACKED');
  });

  test('a NACK of a resource never received is a resource error (A88 table: "NACK from client", not cached)', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', -5)]);
    assert.deepEqual(a!.take(), ['error INVALID_ARGUMENT']);
    assert.equal(env.ads.stream.lastOf(WHOLE).versionInfo, '');
    env.clock.advance(60_000);
    assert.deepEqual(a!.take(), [], 'a NACKed resource exists: no does-not-exist timer');
  });

  test('"fail_on_data_errors" (A88): a NACK drops the cached resource', () => {
    const env = setup({ features: ['fail_on_data_errors'] });
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    env.ads.stream.respond(WHOLE, 'v2', [thing(WHOLE, 'a', -1)]);
    assert.deepEqual(a!.take(), ['changed a=1', 'error INVALID_ARGUMENT']);
    const dumpA = env.client.dump().resources[0]!;
    assert.equal(dumpA.status, 'NACKED');
    assert.equal(dumpA.value, undefined);
  });

  test('a resource whose name cannot be read is NACKed by its index and deletes nothing', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    a!.take();
    env.ads.stream.respond(WHOLE, 'v2', [
      thing(WHOLE, 'b', 1),
      { ...thing(WHOLE, 'x', 1), value: new Uint8Array([1]) },
    ]);
    assert.match(
      env.ads.stream.lastOf(WHOLE).errorDetail?.message ?? '',
      /WholeThing resources\[1\]: not JSON/,
    );
    assert.deepEqual(a!.take(), [], 'a stays: it may have been the unreadable resource');
  });

  test('a resource of another type, and duplicates, are NACKed; resources not subscribed to are ignored', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [
      thing(WHOLE, 'a', 1),
      thing(WHOLE, 'a', 2),
      thing(PART, 'p', 1),
      thing(WHOLE, 'other', 3),
    ]);
    const message = env.ads.stream.lastOf(WHOLE).errorDetail?.message ?? '';
    assert.match(message, /"a": duplicate resource name/);
    assert.match(message, /resources\[2\]: resource of type type.googleapis.com\/lbtree.test.PartThing/);
    assert.deepEqual(a!.take(), ['changed a=1', 'ambient INVALID_ARGUMENT']);
    assert.equal(
      env.client.dump().resources.some((r) => r.name === 'other'),
      false,
    );
  });

  test('a response of a type never subscribed to is NACKed', () => {
    const env = setup();
    watchWhole(env, 'a');
    const nonce = env.ads.stream.respond('type.googleapis.com/lbtree.test.Unknown', '1', []);
    const nack = env.ads.stream.lastOf('type.googleapis.com/lbtree.test.Unknown');
    assert.equal(nack.responseNonce, nonce);
    assert.match(nack.errorDetail?.message ?? '', /not subscribed/);
  });
});

describe('xDS client: stream failures (A57 "Handling ADS Stream Termination", A88 "Handling Transient Errors")', () => {
  test('backoff 1 s, 1.6 s, 2.56 s … up to 120 s while streams fail before any response; reset by a response', () => {
    const env = setup();
    watchWhole(env, 'a');
    const starts: number[] = [];
    for (let i = 0; i < 14; i++) {
      env.ads.stream.fail(unavailable('connection refused'));
      const before = env.ads.streams.length;
      let waited = 0;
      while (env.ads.streams.length === before) {
        env.clock.advance(10);
        waited += 10;
      }
      starts.push(waited);
    }
    assert.deepEqual(
      starts.slice(0, 5),
      [1000, 1600, 2560, 4100, 6560],
      'each delay ×1.6 (to the 10 ms step)',
    );
    assert.equal(starts[starts.length - 1], 120_000, 'capped at 120 s');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    env.ads.stream.fail(unavailable('max connection age'));
    env.clock.runDue();
    const count = env.ads.streams.length;
    assert.equal(count, 16, 'a stream that got a response is replaced at once');
    env.ads.stream.fail(unavailable('refused'));
    env.clock.advance(999);
    assert.equal(env.ads.streams.length, count);
    env.clock.advance(1);
    assert.equal(env.ads.streams.length, count + 1, 'the backoff started over at 1 s');
  });

  test('the jitter spreads each delay within ±20 %', () => {
    for (const [random, expected] of [
      [0, 800],
      [0.999999, 1200],
    ] as const) {
      const { clock, ads, client } = setup({ random: () => random });
      client.watch(wholeThingType, 'a', new RecordingWatcher());
      clock.runDue();
      ads.stream.fail(unavailable('refused'));
      clock.advance(expected - 1);
      assert.equal(ads.streams.length, 1);
      clock.advance(1);
      assert.equal(ads.streams.length, 2, `random ${random} → ${expected} ms`);
    }
  });

  test('a new stream re-sends every subscription with the last ACKed versions, an empty nonce and the node', () => {
    const env = setup();
    watchWhole(env, 'a', 'b');
    env.client.watch(partThingType, 'p', new RecordingWatcher());
    env.clock.runDue();
    env.ads.stream.respond(WHOLE, 'v7', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    env.ads.stream.respond(PART, 'p3', [thing(PART, 'p', 1)]);
    env.ads.stream.respond(WHOLE, 'v8', [thing(WHOLE, 'a', -1), thing(WHOLE, 'b', 2)]);
    env.ads.stream.fail(unavailable('goaway'));
    env.clock.runDue();
    assert.equal(env.ads.streams.length, 2);
    const whole = env.ads.stream.requestsOf(WHOLE);
    const part = env.ads.stream.requestsOf(PART);
    assert.equal(whole.length, 1);
    assert.deepEqual(whole[0]!.resourceNames, ['a', 'b']);
    assert.equal(whole[0]!.versionInfo, 'v7', 'the last ACKed version, not the NACKed one');
    assert.equal(whole[0]!.responseNonce, '');
    assert.equal(whole[0]!.node?.id, 'node-1');
    assert.equal(part[0]!.versionInfo, 'p3');
  });

  test('cached resources keep serving through an outage: ambient error, then cleared (A57, A88)', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a', 'b');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    a!.take();
    env.ads.stream.fail(unavailable('server went away'));
    env.clock.runDue();
    env.ads.stream.fail(unavailable('connection refused'));
    assert.deepEqual(a!.take(), ['ambient UNAVAILABLE'], 'cached: ambient; the value stays');
    assert.match(a!.statuses[0]!.details, /failed before any response: UNAVAILABLE: connection refused/);
    assert.equal(env.client.dump().stream, 'backoff');
    assert.equal(env.client.dump().resources.find((r) => r.name === 'a')!.status, 'ACKED');
    // A88 "New Watchers Started After Ambient Errors": the resource, then the ambient error.
    const late = lateWatcher(env, 'a');
    assert.deepEqual(late.take(), ['changed a=1', 'ambient UNAVAILABLE']);
    // A watcher of a resource never received hears the connectivity error as its reason to fail.
    assert.deepEqual(lateWatcher(env, 'c').take(), ['error UNAVAILABLE']);
    env.clock.advance(1000);
    env.ads.stream.connect();
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    assert.deepEqual(a!.take(), ['ambient OK'], 'the same resource again clears the ambient error');
    assert.deepEqual(late.take(), ['ambient OK']);
    assert.equal(env.client.dump().connectivityError, undefined);
  });

  test('a stream failing before any response fails the watchers of resources not cached (A88 table)', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.fail(unavailable('refused'));
    assert.deepEqual(a!.take(), ['error UNAVAILABLE']);
    assert.equal(env.client.dump().resources[0]!.status, 'REQUESTED');
  });

  test('a stream that ends after a response is no error for the watchers', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    env.ads.stream.fail(unavailable('max connection age'));
    env.clock.runDue();
    assert.deepEqual(a!.take(), ['changed a=1']);
  });
});

describe('xDS client: the does-not-exist timer (A57 "Handling Resources That Do Not Exist", A88)', () => {
  test('starts once the subscription is on a connected stream and fires after 15 s with NOT_FOUND', () => {
    const env = setup();
    const a = new RecordingWatcher(show);
    env.client.watch(wholeThingType, 'a', a);
    env.clock.runDue();
    env.clock.advance(60_000);
    assert.deepEqual(a.take(), [], 'no timer while the stream is not connected');
    env.ads.stream.connect();
    env.clock.advance(14_999);
    assert.deepEqual(a.take(), []);
    env.clock.advance(1);
    assert.deepEqual(a.take(), ['error NOT_FOUND']);
    assert.match(a.statuses[0]!.details, /"a" does not exist.*15 s.*node ID node-1/);
    assert.equal(env.client.dump().resources[0]!.status, 'DOES_NOT_EXIST');
    // A late resource is still welcome.
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    assert.deepEqual(a.take(), ['changed a=1']);
  });

  test('a subscription added on a connected stream starts its own timer when it is sent', () => {
    const env = setup();
    watchWhole(env, 'a');
    env.clock.advance(10_000);
    const b = new RecordingWatcher(show);
    env.client.watch(wholeThingType, 'b', b);
    env.clock.runDue();
    env.clock.advance(14_999);
    assert.deepEqual(b.take(), []);
    env.clock.advance(1);
    assert.deepEqual(b.take(), ['error NOT_FOUND']);
  });

  test('the timer is stopped by the resource, and by a stream failure; a new stream starts it again', () => {
    const env = setup();
    const [a, b] = watchWhole(env, 'a', 'b');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    env.clock.advance(10_000);
    env.ads.stream.fail(unavailable('reset'));
    env.clock.runDue();
    env.clock.advance(14_000);
    assert.deepEqual(b!.take(), [], 'the new stream is not connected: no timer');
    env.ads.stream.connect();
    env.clock.advance(14_999);
    assert.deepEqual(b!.take(), []);
    env.clock.advance(1);
    assert.deepEqual(b!.take(), ['error NOT_FOUND']);
    assert.deepEqual(a!.take(), ['changed a=1'], 'no timer for a cached resource after the restart');
  });

  test('"resource_timer_is_transient_error" (A88): 30 s, UNAVAILABLE, cache state TIMEOUT', () => {
    const env = setup({ features: ['resource_timer_is_transient_error'] });
    const [a] = watchWhole(env, 'a');
    env.clock.advance(15_000);
    assert.deepEqual(a!.take(), []);
    env.clock.advance(15_000);
    assert.deepEqual(a!.take(), ['error UNAVAILABLE']);
    assert.equal(env.client.dump().resources[0]!.status, 'TIMEOUT');
  });

  test('without A88 data error handling the feature is ignored (15 s, NOT_FOUND)', () => {
    const env = setup({ features: ['resource_timer_is_transient_error'], dataErrorHandling: false });
    const [a] = watchWhole(env, 'a');
    env.clock.advance(15_000);
    assert.deepEqual(a!.take(), ['error NOT_FOUND']);
  });
});

describe('xDS client: deletion (A27 SotW, A53 "ignore_resource_deletion", A88 "Deprecating ignore_resource_deletion")', () => {
  function deleteB(options: Parameters<typeof setup>[0]) {
    const env = setup(options);
    const [a, b] = watchWhole(env, 'a', 'b');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    b!.take();
    env.ads.stream.respond(WHOLE, 'v2', [thing(WHOLE, 'a', 1)]);
    assert.equal(env.ads.stream.lastOf(WHOLE).versionInfo, 'v2', 'a deletion is ACKed');
    return { env, a: a!, b: b!, entry: () => env.client.dump().resources.find((r) => r.name === 'b')! };
  }

  test('A88 (default): a deletion is an ambient NOT_FOUND; the resource keeps serving, shown DOES_NOT_EXIST', () => {
    const { b, entry } = deleteB({});
    assert.deepEqual(b.take(), ['ambient NOT_FOUND']);
    assert.equal(entry().status, 'DOES_NOT_EXIST');
    assert.deepEqual(entry().value, { name: 'b', value: 2 });
  });

  test('A88 ignores the deprecated "ignore_resource_deletion" (same behaviour)', () => {
    const { b, entry } = deleteB({ features: ['ignore_resource_deletion'] });
    assert.deepEqual(b.take(), ['ambient NOT_FOUND']);
    assert.equal(entry().status, 'DOES_NOT_EXIST');
  });

  test('A88 "fail_on_data_errors": a deletion drops the resource (resource error NOT_FOUND)', () => {
    const { b, entry } = deleteB({ features: ['fail_on_data_errors'] });
    assert.deepEqual(b.take(), ['error NOT_FOUND']);
    assert.equal(entry().value, undefined);
  });

  test('A53 rules (data error handling off), no "ignore_resource_deletion": the resource is dropped', () => {
    const { env, b, entry } = deleteB({ dataErrorHandling: false });
    assert.deepEqual(b.take(), ['error NOT_FOUND']);
    assert.equal(entry().status, 'DOES_NOT_EXIST');
    env.ads.stream.respond(WHOLE, 'v3', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    assert.deepEqual(b.take(), ['changed b=2'], 'it comes back when the server sends it again');
  });

  test('A53 rules with "ignore_resource_deletion": no watcher hears it, the resource keeps serving, a warning is traced', () => {
    const { env, a, b, entry } = deleteB({
      dataErrorHandling: false,
      features: ['ignore_resource_deletion'],
    });
    assert.deepEqual(b.take(), []);
    assert.deepEqual(a.take(), ['changed a=1']);
    assert.deepEqual(entry().value, { name: 'b', value: 2 });
    assert.ok(env.traces.some((t) => /WARNING: ignoring the deletion of WholeThing "b"/.test(t)));
    env.ads.stream.respond(WHOLE, 'v3', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', 2)]);
    assert.equal(entry().status, 'ACKED');
    assert.deepEqual(b.take(), []);
  });

  test('RDS / EDS-like types (allResourcesRequiredInSotW false): a missing resource is not deleted', () => {
    const env = setup({ dataErrorHandling: false });
    const p = new RecordingWatcher(show);
    const q = new RecordingWatcher(show);
    env.client.watch(partThingType, 'p', p);
    env.client.watch(partThingType, 'q', q);
    env.clock.runDue();
    env.ads.stream.connect();
    env.ads.stream.respond(PART, '1', [thing(PART, 'p', 1), thing(PART, 'q', 1)]);
    env.ads.stream.respond(PART, '2', [thing(PART, 'p', 2)]);
    assert.deepEqual(q.take(), ['changed q=1']);
    assert.deepEqual(p.take(), ['changed p=1', 'changed p=2']);
  });
});

describe('xDS client: watchers, dump, trace (A88 "Changes to XdsClient Watcher APIs", A40)', () => {
  test('a new watcher of a cached resource hears it after watch() returns, never inside it', () => {
    const env = setup();
    watchWhole(env, 'a');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    const late = new RecordingWatcher(show);
    env.client.watch(wholeThingType, 'a', late);
    assert.deepEqual(late.take(), []);
    env.clock.runDue();
    assert.deepEqual(late.take(), ['changed a=1']);
  });

  test('a watcher of a resource known not to exist hears that at once', () => {
    const env = setup();
    watchWhole(env, 'a');
    env.clock.advance(15_000);
    assert.deepEqual(lateWatcher(env, 'a').take(), ['error NOT_FOUND']);
  });

  test('a watcher that throws does not stop the others or the ACK; a cancelled watcher hears nothing', () => {
    const thrown: unknown[] = [];
    const { clock, ads, client } = setup({ onWatcherError: (e) => thrown.push(e) });
    const bad = {
      ...new RecordingWatcher(),
      onResourceChanged: () => {
        throw new Error('boom');
      },
    };
    client.watch(wholeThingType, 'a', bad as unknown as RecordingWatcher<Thing>);
    const good = new RecordingWatcher(show);
    client.watch(wholeThingType, 'a', good);
    const gone = new RecordingWatcher(show);
    client.watch(wholeThingType, 'a', gone)();
    clock.runDue();
    ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    assert.equal(thrown.length, 1);
    assert.deepEqual(good.take(), ['changed a=1']);
    assert.deepEqual(gone.take(), []);
    assert.equal(ads.stream.lastOf(WHOLE).versionInfo, 'v1');
  });

  test('the dump names each state and error; the trace follows the transitions', () => {
    const env = setup();
    watchWhole(env, 'a', 'b', 'c');
    env.clock.advance(1000);
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', -1)]);
    env.clock.advance(14_000);
    const text = formatXdsClientDump(env.client.dump());
    assert.match(text, /xDS server cp.example:443 \(node ID "node-1"\): stream connected at 15000 ms/);
    assert.match(text, /WholeThing: version "", nonce "n1"/);
    assert.match(text, /WholeThing "a" ACKED version "v1" at 1000 ms/);
    assert.match(text, /WholeThing "b" NACKED; error at 1000 ms \(version "v1"\): .*value: -1/);
    assert.match(text, /WholeThing "c" DOES_NOT_EXIST; error at 15000 ms/);
    const trace = env.traces.join('\n');
    assert.match(trace, /starting ADS stream 1 to cp.example:443/);
    assert.match(trace, /WholeThing "a" ACKED version "v1"/);
    assert.match(trace, /NACK WholeThing \(3 names, version "", nonce "n1"\)/);
    assert.match(trace, /WholeThing "c" DOES_NOT_EXIST \(resource timer\)/);
  });

  test('the dump as a CSDS ClientConfig (A40): resources as received, versions, statuses, failed updates', () => {
    const env = setup();
    watchWhole(env, 'a', 'b', 'c');
    env.clock.advance(1000);
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1), thing(WHOLE, 'b', -1)]);
    env.clock.advance(500);
    const config = toCsdsClientConfig(env.client.dump(), Date.UTC(2026, 0, 1));
    assert.equal(config.node?.id, 'node-1');
    const [a, b, c] = config.genericXdsConfigs;
    assert.equal(a!.name, 'a');
    assert.equal(a!.clientStatus, ClientResourceStatus.ACKED);
    assert.equal(a!.versionInfo, 'v1');
    assert.equal(a!.xdsConfig?.typeUrl, WHOLE);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(a!.xdsConfig!.value)), { name: 'a', value: 1 });
    assert.equal(
      Number(a!.lastUpdated!.seconds) * 1000 + a!.lastUpdated!.nanos / 1e6,
      Date.UTC(2026, 0, 1) - 500,
    );
    assert.equal(b!.clientStatus, ClientResourceStatus.NACKED);
    assert.equal(b!.errorState?.versionInfo, 'v1');
    assert.match(b!.errorState?.details ?? '', /value: -1/);
    assert.equal(c!.clientStatus, ClientResourceStatus.REQUESTED);
    assert.equal(c!.xdsConfig, undefined);
  });

  test('close() ends the stream and the timers; a watch after it fails', () => {
    const env = setup();
    const [a] = watchWhole(env, 'a');
    env.client.close();
    assert.equal(env.ads.stream.closedByClient, true);
    assert.equal(env.ads.transportClosed, true);
    env.clock.advance(60_000);
    assert.deepEqual(a!.take(), []);
    assert.equal(env.client.dump().stream, 'closed');
    assert.deepEqual(lateWatcher(env, 'a').take(), ['error UNAVAILABLE']);
  });
});
