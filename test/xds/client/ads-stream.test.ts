// The ADS stream to one server on its own, without a cache: what it sends, and the events its owner (the
// resource cache today; each authority's servers with federation and fallback) relies on.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, formatStatus, type Status, unavailable } from '../../../src/core/index.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { ServerAdsStream } from '../../../src/xds/client/ads-stream.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { nodeProto } from '../../../src/xds/client/node.js';
import { FakeAdsServer } from './fake-ads.js';
import { partThingType, thing, wholeThingType } from './test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;
const PART = partThingType.typeUrl;

function setup() {
  const clock = new VirtualClock();
  const ads = new FakeAdsServer();
  const bootstrap = parseBootstrap({
    xds_servers: [{ server_uri: 'cp.example:443', channel_creds: [{ type: 'insecure' }] }],
    node: { id: 'node-1' },
  });
  const events: string[] = [];
  const ended: (Status | undefined)[] = [];
  /** What onResources answers: a NACK detail, or undefined to ACK. */
  let verdict: string | undefined;
  let beforeReconnect = () => {};
  const stream = new ServerAdsStream({
    server: bootstrap.xdsServers[0]!,
    transport: ads.factory,
    node: nodeProto(bootstrap.node),
    clock,
    trace: () => {},
    // 0.5 makes the jitter factor exactly 1: the first delay is the gRPC backoff's initial 1 s.
    backoff: { random: () => 0.5 },
    events: {
      onRequested: (typeUrl, names) => events.push(`requested ${typeUrl === WHOLE ? 'W' : 'P'} ${names}`),
      onResources: (typeUrl, version, resources) => {
        events.push(`resources ${typeUrl === WHOLE ? 'W' : 'P'} ${version} (${resources.length})`);
        return verdict;
      },
      onEnded: (error) => {
        events.push(`ended${error ? ` ${formatStatus(error).split(':')[0]}` : ''}`);
        ended.push(error);
      },
      beforeReconnect: () => {
        events.push('beforeReconnect');
        beforeReconnect();
      },
    },
  });
  return {
    clock,
    ads,
    stream,
    ended,
    take: () => events.splice(0),
    setVerdict: (v: string | undefined) => {
      verdict = v;
    },
    onBeforeReconnect: (f: () => void) => {
      beforeReconnect = f;
    },
  };
}

describe('ADS stream to one server (A27 SotW requests, A57 stream failures)', () => {
  test('subscribing sends nothing; sync() opens one call with one request per type, names sorted, node in the first of each type', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'b');
    env.stream.subscribe(WHOLE, 'a');
    env.stream.subscribe(PART, 'p');
    assert.equal(env.ads.streams.length, 0);
    assert.equal(env.stream.state, 'idle');
    env.stream.sync();
    assert.equal(env.ads.streams.length, 1);
    assert.equal(env.stream.state, 'connecting');
    assert.deepEqual(env.ads.stream.lastOf(WHOLE).resourceNames, ['a', 'b']);
    assert.equal(env.ads.stream.lastOf(WHOLE).node?.id, 'node-1');
    assert.equal(env.ads.stream.lastOf(PART).node?.id, 'node-1');
    env.stream.sync();
    assert.equal(env.ads.stream.requests.length, 2, 'an unchanged subscription is not sent again');
    env.stream.unsubscribe(WHOLE, 'a');
    env.stream.sync();
    const last = env.ads.stream.lastOf(WHOLE);
    assert.deepEqual(last.resourceNames, ['b']);
    assert.equal(last.node, undefined, 'later requests of a type leave the node out');
  });

  test('A57: names are reported requested once per call, only once it is connected, again on the next call', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'b');
    env.stream.subscribe(WHOLE, 'a');
    env.stream.sync();
    assert.deepEqual(env.take(), [], 'not connected yet: no timer may start');
    env.ads.stream.connect();
    assert.equal(env.stream.state, 'connected');
    assert.deepEqual(env.take(), ['requested W b,a'], 'in the order subscribed');
    env.stream.subscribe(WHOLE, 'c');
    env.stream.sync();
    assert.deepEqual(env.take(), ['requested W c'], 'only the name new on this call');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    assert.deepEqual(env.take(), ['resources W v1 (1)'], 'the ACK re-sends no name as new');
    env.ads.stream.fail(unavailable('gone'));
    env.clock.runDue();
    env.ads.stream.connect();
    assert.deepEqual(env.take(), ['ended', 'beforeReconnect', 'requested W b,a,c']);
  });

  test('A27: the owner’s verdict is ACKed with the response’s version, or NACKed with the last ACKed one', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'a');
    env.stream.sync();
    env.ads.stream.connect();
    const n1 = env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    const ack = env.ads.stream.lastOf(WHOLE);
    assert.deepEqual([ack.versionInfo, ack.responseNonce, ack.errorDetail], ['v1', n1, undefined]);
    env.setVerdict('WholeThing "a": value: -1 is not a non-negative number');
    const n2 = env.ads.stream.respond(WHOLE, 'v2', [thing(WHOLE, 'a', -1)]);
    const nack = env.ads.stream.lastOf(WHOLE);
    assert.deepEqual([nack.versionInfo, nack.responseNonce], ['v1', n2]);
    assert.equal(nack.errorDetail?.code, Code.INVALID_ARGUMENT);
    assert.match(nack.errorDetail?.message ?? '', /value: -1/);
    assert.deepEqual(env.stream.versions(), [{ typeUrl: WHOLE, version: 'v1', nonce: n2 }]);
  });

  test('a response of a type never subscribed is NACKed by the stream; the owner never hears of it', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'a');
    env.stream.sync();
    env.take();
    const nonce = env.ads.stream.respond(PART, 'v1', [thing(PART, 'p', 1)]);
    assert.deepEqual(env.take(), []);
    const nack = env.ads.stream.lastOf(PART);
    assert.equal(nack.responseNonce, nonce);
    assert.match(nack.errorDetail?.message ?? '', /was not subscribed to/);
  });

  test('A57: a call failing before any response is a connectivity error and backs off 1 s; after a response it reopens at once', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'a');
    env.stream.sync();
    env.ads.stream.fail(unavailable('connection refused'));
    assert.deepEqual(env.take(), ['ended UNAVAILABLE']);
    assert.match(
      env.ended[0]!.details,
      /cp\.example:443 failed before any response: .*connection refused.*node ID node-1/,
    );
    assert.equal(env.stream.connectivityError, env.ended[0]);
    assert.equal(env.stream.state, 'backoff');
    env.clock.advance(999);
    assert.equal(env.ads.streams.length, 1, 'still backing off at 999 ms');
    env.clock.advance(1);
    assert.equal(env.ads.streams.length, 2, 'reopened at 1000 ms');
    env.ads.stream.respond(WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    assert.equal(env.stream.connectivityError, undefined, 'a response clears it');
    env.take();
    env.ads.stream.fail(unavailable('max connection age'));
    assert.deepEqual(env.take(), ['ended'], 'no connectivity error after a response');
    env.clock.runDue();
    assert.equal(env.ads.streams.length, 3, 'reopened at once');
    assert.equal(env.ads.stream.lastOf(WHOLE).versionInfo, 'v1', 'with the version last ACKed');
  });

  test('beforeReconnect lets the owner drop names before the call reopens; with none left it stays idle', () => {
    const env = setup();
    env.stream.subscribe(WHOLE, 'a');
    env.stream.subscribe(WHOLE, 'b');
    env.stream.sync();
    env.onBeforeReconnect(() => env.stream.unsubscribe(WHOLE, 'a'));
    env.ads.stream.fail(unavailable('down'));
    env.clock.advance(1000);
    assert.equal(env.ads.streams.length, 2);
    assert.deepEqual(
      env.ads.stream.requests.map((r) => r.resourceNames),
      [['b']],
    );
    env.onBeforeReconnect(() => env.stream.unsubscribe(WHOLE, 'b'));
    env.ads.stream.fail(unavailable('down'));
    env.clock.advance(1600);
    assert.equal(env.ads.streams.length, 2, 'nothing subscribed: no call');
    assert.equal(env.stream.state, 'idle');
  });

  test('close() cancels the open call and the transport, or the backoff; no event follows', () => {
    const open = setup();
    open.stream.subscribe(WHOLE, 'a');
    open.stream.sync();
    open.ads.stream.connect();
    open.take();
    open.stream.close();
    assert.equal(open.ads.stream.closedByClient, true);
    assert.equal(open.ads.transportClosed, true);
    assert.equal(open.stream.state, 'closed');
    open.stream.sync();
    assert.equal(open.ads.streams.length, 1, 'sync() after close() opens nothing');

    const backingOff = setup();
    backingOff.stream.subscribe(WHOLE, 'a');
    backingOff.stream.sync();
    backingOff.ads.stream.fail(unavailable('down'));
    backingOff.take();
    backingOff.stream.close();
    backingOff.clock.advance(60_000);
    assert.equal(backingOff.ads.streams.length, 1, 'no reconnect after close()');
    assert.deepEqual(backingOff.take(), []);
  });
});
