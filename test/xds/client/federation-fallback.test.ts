// The xDS client over several servers: A47 federation (authorities, one stream per distinct server, xdstp:
// names) and A71 fallback (servers in priority order per authority), on the in-memory transport and the
// virtual clock.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, unavailable } from '../../../src/core/index.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { parseBootstrap, type XdsBootstrapJson } from '../../../src/xds/client/bootstrap.js';
import { toCsdsClientConfig } from '../../../src/xds/client/csds.js';
import { formatXdsClientDump } from '../../../src/xds/client/dump.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import { FakeAdsServers, RecordingWatcher } from './fake-ads.js';
import { partThingType, type Thing, thing, wholeThingType } from './test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;
const PART = partThingType.typeUrl;
const INSECURE = [{ type: 'insecure' }];
const show = (t: Thing) => `${t.name}=${t.value}`;

/** An xdstp: name of the whole-thing type. */
const xdstp = (authority: string, id: string, query = '') =>
  `xdstp://${authority}/lbtree.test.WholeThing/${id}${query}`;

function setup(bootstrap: Omit<XdsBootstrapJson, 'node'>, options: { fallback?: boolean } = {}) {
  const clock = new VirtualClock();
  const servers = new FakeAdsServers();
  const traces: string[] = [];
  const client = new XdsClient({
    bootstrap: parseBootstrap({ ...bootstrap, node: { id: 'node-1' } }),
    transport: servers.factory,
    clock,
    trace: (m) => traces.push(m()),
    backoff: { random: () => 0.5 },
    dataErrorHandling: true,
    federation: true,
    fallback: options.fallback ?? true,
  });
  const watch = (name: string, type = wholeThingType) => {
    const w = new RecordingWatcher(show);
    client.watch(type, name, w);
    return w;
  };
  return { clock, servers, client, traces, watch };
}

const server = (uri: string) => ({ server_uri: uri, channel_creds: INSECURE });

describe('A47 federation: authorities and their servers', () => {
  const bootstrap = {
    xds_servers: [server('top:1')],
    authorities: {
      'a.example': { xds_servers: [server('a:1')] },
      'b.example': { xds_servers: [server('a:1')] },
      'c.example': {},
    },
  };

  test('each name goes to its authority\'s server; one stream per distinct server ("Server Channel Map")', () => {
    const env = setup(bootstrap);
    const old = env.watch('plain');
    const a = env.watch(xdstp('a.example', 'x'));
    const b = env.watch(xdstp('b.example', 'y'));
    const c = env.watch(xdstp('c.example', 'z'));
    env.clock.runDue();
    assert.equal(env.servers.count('top:1'), 1);
    assert.equal(env.servers.count('a:1'), 1, 'a.example and b.example share the server a:1');
    assert.deepEqual(env.servers.stream('top:1').lastOf(WHOLE).resourceNames, [
      'plain',
      xdstp('c.example', 'z'),
    ]);
    assert.deepEqual(env.servers.stream('a:1').lastOf(WHOLE).resourceNames, [
      xdstp('a.example', 'x'),
      xdstp('b.example', 'y'),
    ]);
    env.servers.stream('a:1').connect();
    env.servers.stream('a:1').respond(WHOLE, 'v1', [
      thing(WHOLE, xdstp('a.example', 'x'), 1),
      thing(WHOLE, xdstp('b.example', 'y'), 2),
      // A server answering for an authority that does not use it is not heard.
      thing(WHOLE, xdstp('c.example', 'z'), 3),
    ]);
    env.servers.stream('top:1').respond(WHOLE, 'v1', [thing(WHOLE, 'plain', 4)]);
    env.clock.runDue();
    assert.deepEqual(a.take(), [`changed ${xdstp('a.example', 'x')}=1`]);
    assert.deepEqual(b.take(), [`changed ${xdstp('b.example', 'y')}=2`]);
    assert.deepEqual(c.take(), []);
    assert.deepEqual(old.take(), ['changed plain=4']);
    const dump = env.client.dump();
    const byName = new Map(dump.resources.map((r) => [r.name, [r.authority, r.server]]));
    assert.deepEqual(byName.get('plain'), [undefined, 'top:1']);
    assert.deepEqual(byName.get(xdstp('a.example', 'x')), ['a.example', 'a:1']);
    assert.deepEqual(byName.get(xdstp('b.example', 'y')), ['b.example', 'a:1']);
    assert.deepEqual(byName.get(xdstp('c.example', 'z')), ['c.example', undefined], 'not received');
    // A40: CSDS dumps xdstp: names as the client requested them.
    assert.deepEqual(
      toCsdsClientConfig(dump)
        .genericXdsConfigs.map((g) => g.name)
        .sort(),
      ['plain', xdstp('a.example', 'x'), xdstp('b.example', 'y'), xdstp('c.example', 'z')].sort(),
    );
    assert.deepEqual(
      dump.servers.map((s) => s.serverUri),
      ['top:1', 'a:1'],
    );
  });

  test('context parameters are normalised: two spellings are one subscription, and a response in either spelling is heard', () => {
    const env = setup(bootstrap);
    const one = env.watch(xdstp('a.example', 'x', '?b=2&a=1'));
    const two = env.watch(xdstp('a.example', 'x', '?a=1&b=2'));
    env.clock.runDue();
    const stream = env.servers.stream('a:1');
    assert.deepEqual(stream.lastOf(WHOLE).resourceNames, [xdstp('a.example', 'x', '?a=1&b=2')]);
    stream.connect();
    stream.respond(WHOLE, 'v1', [thing(WHOLE, xdstp('a.example', 'x', '?b=2&a=1'), 7)]);
    env.clock.runDue();
    assert.equal(one.take().length, 1);
    assert.equal(two.take().length, 1);
    assert.equal(stream.lastOf(WHOLE).versionInfo, 'v1', 'ACKed');
  });

  test('a malformed xdstp: name, or an authority the bootstrap lacks, fails the watch with a status naming it', () => {
    const env = setup(bootstrap);
    const malformed = env.watch('xdstp://a.example/lbtree.test.WholeThing');
    const wrongType = env.watch('xdstp://a.example/lbtree.test.PartThing/x');
    const unknown = env.watch(xdstp('nowhere.example', 'x'));
    env.clock.runDue();
    assert.deepEqual(malformed.take(), ['error INVALID_ARGUMENT']);
    assert.match(malformed.statuses[0]!.details, /xdstp name "xdstp:\/\/a.example\/lbtree.test.WholeThing"/);
    assert.deepEqual(wrongType.take(), ['error INVALID_ARGUMENT']);
    assert.match(wrongType.statuses[0]!.details, /resource type "lbtree.test.PartThing"/);
    assert.deepEqual(unknown.take(), ['error UNAVAILABLE']);
    assert.match(
      unknown.statuses[0]!.details,
      /authority "nowhere.example" is not in the bootstrap's "authorities"/,
    );
    assert.equal(env.servers.streams.size, 0, 'nothing was requested');
  });

  test('a response whose resource has a malformed xdstp: name is NACKed naming it; the others apply', () => {
    const env = setup(bootstrap);
    const w = env.watch(xdstp('a.example', 'x'));
    env.clock.runDue();
    const stream = env.servers.stream('a:1');
    stream.connect();
    stream.respond(WHOLE, 'v1', [
      thing(WHOLE, xdstp('a.example', 'x'), 1),
      thing(WHOLE, 'xdstp://a.example', 2),
    ]);
    env.clock.runDue();
    assert.deepEqual(w.take(), [`changed ${xdstp('a.example', 'x')}=1`]);
    const nack = stream.lastOf(WHOLE);
    assert.equal(nack.versionInfo, '', 'NACK keeps the previous version');
    assert.match(
      nack.errorDetail!.message,
      /WholeThing "xdstp:\/\/a.example": xdstp name "xdstp:\/\/a.example": no resource type/,
    );
  });
});

describe('A71 fallback: servers in priority order per authority', () => {
  const bootstrap = { xds_servers: [server('primary:1'), server('secondary:1')] };
  const failed = unavailable('connection refused');

  test('the primary fails before any response with a resource not cached: the secondary serves; the watcher hears no error', () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    assert.equal(env.servers.count('secondary:1'), 0, 'no fallback stream before a failure');
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.deepEqual(
      w.take(),
      [],
      'A71: watchers hear of connectivity only when every server is unreachable',
    );
    const secondary = env.servers.stream('secondary:1');
    assert.deepEqual(secondary.lastOf(WHOLE).resourceNames, ['r']);
    secondary.connect();
    secondary.respond(WHOLE, 's1', [thing(WHOLE, 'r', 2)]);
    env.clock.runDue();
    assert.deepEqual(w.take(), ['changed r=2']);
    const dump = env.client.dump();
    assert.equal(dump.resources[0]!.server, 'secondary:1', 'the dump says where the resource came from');
    assert.deepEqual(dump.authorities, [{ servers: ['primary:1', 'secondary:1'], active: 'secondary:1' }]);
    assert.match(formatXdsClientDump(dump), /Thing "r" ACKED version "s1" at \d+ ms from secondary:1/);
    assert.equal(env.client.serverOf(wholeThingType, 'r')?.serverUri, 'secondary:1');
    assert.ok(env.traces.some((t) => t.includes('falls back from primary:1 to secondary:1')));
  });

  test('the primary back: its first resource brings the client back and drops the secondary', () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    env.servers.stream('secondary:1').connect();
    env.servers.stream('secondary:1').respond(WHOLE, 's1', [thing(WHOLE, 'r', 2)]);
    env.clock.runDue();
    w.take();
    // The primary is retried after its backoff (1 s with this jitter), with the subscription.
    env.clock.advance(1000);
    assert.equal(env.servers.count('primary:1'), 2);
    const primary = env.servers.stream('primary:1');
    assert.deepEqual(primary.lastOf(WHOLE).resourceNames, ['r']);
    primary.connect();
    primary.respond(WHOLE, 'p1', [thing(WHOLE, 'r', 1)]);
    env.clock.runDue();
    assert.deepEqual(w.take(), ['changed r=1']);
    assert.ok(env.servers.stream('secondary:1').closedByClient, 'the secondary stream is closed');
    assert.ok(env.servers.closed.has('secondary:1'));
    const dump = env.client.dump();
    assert.equal(dump.authorities[0]!.active, 'primary:1');
    assert.equal(dump.resources[0]!.server, 'primary:1');
    assert.ok(env.traces.some((t) => t.includes('back on primary:1 from secondary:1')));
  });

  test('the same resource from another server is news to the watchers (A47: LRS goes to the server it came from)', () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    env.servers.stream('secondary:1').connect();
    env.servers.stream('secondary:1').respond(WHOLE, 's1', [thing(WHOLE, 'r', 1)]);
    env.clock.advance(1000);
    env.servers.stream('primary:1').connect();
    env.servers.stream('primary:1').respond(WHOLE, 'p1', [thing(WHOLE, 'r', 1)]);
    env.clock.runDue();
    assert.deepEqual(w.take(), ['changed r=1', 'changed r=1']);
  });

  test('everything cached: no fallback; the cached resource keeps serving with an ambient error (A57)', () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    const primary = env.servers.stream('primary:1');
    primary.connect();
    primary.respond(WHOLE, 'p1', [thing(WHOLE, 'r', 1)]);
    env.clock.runDue();
    primary.fail(failed); // after a response: retried at once, no error
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.deepEqual(w.take(), ['changed r=1', 'ambient UNAVAILABLE']);
    assert.equal(env.servers.count('secondary:1'), 0, 'A71: nothing uncached, no fallback');
  });

  test('a new watch of a resource not cached while the primary is down falls back then', () => {
    const env = setup(bootstrap);
    const r = env.watch('r');
    env.clock.runDue();
    const primary = env.servers.stream('primary:1');
    primary.connect();
    primary.respond(WHOLE, 'p1', [thing(WHOLE, 'r', 1)]);
    env.clock.runDue();
    primary.fail(failed);
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.equal(env.servers.count('secondary:1'), 0);
    const q = env.watch('q');
    env.clock.runDue();
    assert.deepEqual(q.take(), [], 'no error: the secondary is tried');
    const secondary = env.servers.stream('secondary:1');
    assert.deepEqual(secondary.lastOf(WHOLE).resourceNames, ['q', 'r']);
    secondary.connect();
    secondary.respond(WHOLE, 's1', [thing(WHOLE, 'q', 5), thing(WHOLE, 'r', 6)]);
    env.clock.runDue();
    assert.deepEqual(q.take(), ['changed q=5']);
    assert.deepEqual(r.take(), ['changed r=1', 'ambient UNAVAILABLE', 'changed r=6']);
  });

  test("every server unreachable: the watchers hear the last one's error", () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.deepEqual(w.take(), []);
    env.servers.stream('secondary:1').fail(unavailable('secondary refused'));
    env.clock.runDue();
    assert.deepEqual(w.take(), ['error UNAVAILABLE']);
    assert.match(w.statuses[0]!.details, /xDS stream to secondary:1 failed before any response/);
  });

  test('the does-not-exist timer runs on the server in use only', () => {
    const env = setup(bootstrap);
    const w = env.watch('r');
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    env.clock.advance(1000);
    env.servers.stream('primary:1').connect(); // the primary's stream is up again but has sent nothing
    env.clock.advance(20_000);
    assert.deepEqual(w.take(), [], 'not the primary: the secondary is in use and has not connected');
    env.servers.stream('secondary:1').connect();
    env.clock.advance(14_999);
    assert.deepEqual(w.take(), []);
    env.clock.advance(1);
    assert.deepEqual(w.take(), ['error NOT_FOUND'], 'A57: 15 s after the request on the connected secondary');
  });

  test('A95 fallback_on_reachability_only: falls back with everything cached', () => {
    const env = setup({
      xds_servers: [server('top:1')],
      authorities: {
        eds: {
          xds_servers: [server('primary:1'), server('secondary:1')],
          fallback_on_reachability_only: true,
        },
      },
    });
    const name = 'xdstp://eds/lbtree.test.PartThing/e';
    const w = env.watch(name, partThingType);
    env.clock.runDue();
    const primary = env.servers.stream('primary:1');
    primary.connect();
    primary.respond(PART, 'p1', [thing(PART, name, 1)]);
    primary.fail(failed);
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.equal(env.servers.count('secondary:1'), 1, 'fell back although the resource is cached');
    assert.deepEqual(w.take(), [`changed ${name}=1`]);
  });

  test('GRPC_EXPERIMENTAL_XDS_FALLBACK=false: only the first server', () => {
    const env = setup(bootstrap, { fallback: false });
    const w = env.watch('r');
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    assert.equal(env.servers.count('secondary:1'), 0);
    assert.deepEqual(w.take(), ['error UNAVAILABLE']);
    assert.equal(w.statuses[0]!.code, Code.UNAVAILABLE);
  });

  test('fallback is per authority: an authority with everything cached stays on the shared primary', () => {
    const env = setup({
      xds_servers: [server('primary:1'), server('secondary:1')],
      authorities: { a: {} },
    });
    const old = env.watch('r');
    env.clock.runDue();
    const primary = env.servers.stream('primary:1');
    primary.connect();
    primary.respond(WHOLE, 'p1', [thing(WHOLE, 'r', 1)]);
    env.clock.runDue();
    const fresh = env.watch(xdstp('a', 'x'));
    env.clock.runDue();
    primary.fail(failed);
    env.clock.runDue();
    env.servers.stream('primary:1').fail(failed);
    env.clock.runDue();
    const dump = env.client.dump();
    assert.deepEqual(
      dump.authorities.map((a) => [a.name, a.active]),
      [
        [undefined, 'primary:1'],
        ['a', 'secondary:1'],
      ],
    );
    assert.deepEqual(env.servers.stream('secondary:1').lastOf(WHOLE).resourceNames, [xdstp('a', 'x')]);
    assert.deepEqual(old.take(), ['changed r=1', 'ambient UNAVAILABLE']);
    assert.deepEqual(fresh.take(), []);
  });
});
