// lbtree/admin over HTTP: the JSON, the server-sent events, the 404s, path traversal attempts and the host
// checks, against a registry of simulated channels (the trees are the simulator's, so what they show is
// known exactly; the live channels of a real grpc-js process are test/admin/live-view.e2e.test.ts's).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import {
  type AdminServer,
  type ChannelSnapshot,
  createAdminHandler,
  startAdminServer,
} from '../../src/admin/index.js';
import { ChannelRegistry, type RegisteredChannel } from '../../src/grpc-js/channel-registry.js';
import { FlightRecorder, readRecording } from '../../src/recorder/index.js';
import { Simulation } from '../../src/sim/index.js';
import type { XdsClientDump } from '../../src/xds/client/dump.js';
import type { XdsConfig } from '../../src/xds/xds-config.js';
import { edsEntry, xdsCluster, xdsConfig } from '../xds/xds-config-fixtures.js';

const [A, B] = ['10.0.0.1:80', '10.0.0.2:80'] as const;
const T0 = Date.UTC(2026, 0, 1);

/** A channel whose tree is a simulation's. */
function simulatedChannel(
  registry: ChannelRegistry,
  sim: Simulation,
  target: string | undefined,
  xdsDump?: () => XdsClientDump,
  config?: XdsConfig,
): RegisteredChannel {
  const channel: RegisteredChannel = {
    id: registry.nextId(),
    target,
    createdAt: T0,
    describe: () => sim.describe(),
    xdsDump: () => xdsDump?.(),
    xdsConfig: () => config,
  };
  registry.add(channel);
  return channel;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with the path sent exactly as written (no normalisation), and an optional Host header. */
function get(port: number, path: string, host?: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, headers: host === undefined ? {} : { host } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Reads server-sent events until `done` holds for the data of one; returns every event's data. */
function readEvents(
  port: number,
  path: string,
  done: (data: unknown, event: string) => boolean,
): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const seen: unknown[] = [];
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          const parsed = JSON.parse(data) as unknown;
          seen.push(parsed);
          if (done(parsed, event)) {
            req.destroy();
            resolve(seen);
            return;
          }
        }
      });
      res.on('end', () => resolve(seen));
    });
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(seen) : reject(e)));
    req.setTimeout(15_000, () => req.destroy(new Error(`no event on ${path} satisfied the condition`)));
    req.end();
  });
}

describe('lbtree/admin HTTP', () => {
  const registry = new ChannelRegistry();
  let now = T0 + 5_000;
  const rr = new Simulation();
  for (const k of [A, B]) rr.script(k, { connectAfterMs: 1 });
  rr.update([A, B], [{ round_robin: {} }]);
  rr.advance(1);
  const rrChannel = simulatedChannel(registry, rr, 'endpoints:10.0.0.1:80;10.0.0.2:80');
  let server: AdminServer;

  before(async () => {
    server = await startAdminServer({
      port: 0,
      registry,
      updateIntervalMs: 20,
      shareWindowMs: 1000,
      clock: () => now,
    });
  });
  after(() => server.close());

  test('the server listens on 127.0.0.1 by default and says where', () => {
    assert.equal(server.url, `http://127.0.0.1:${server.port}/`);
  });

  test('/channels.json lists each channel with its target, root policy and state', async () => {
    const reply = await get(server.port, '/channels.json');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(reply.body), {
      channels: [
        {
          id: rrChannel.id,
          target: 'endpoints:10.0.0.1:80;10.0.0.2:80',
          createdAt: '2026-01-01T00:00:00.000Z',
          policy: 'round_robin',
          state: 'READY',
        },
      ],
    });
  });

  test('/channels/:id.json: the tree, every subchannel’s picks and recent share, and the picks in the window', async () => {
    for (let i = 0; i < 10; i++) rr.pick();
    now += 1_000;
    let snap = JSON.parse((await get(server.port, `/channels/${rrChannel.id}.json`)).body) as ChannelSnapshot;
    assert.equal(snap.tree?.policy, 'round_robin');
    assert.deepEqual(
      snap.tree?.children?.map((c) => c.node.subchannels?.[0]),
      [
        { address: A, state: 'READY', picks: 5, recentShare: 0.5 },
        { address: B, state: 'READY', picks: 5, recentShare: 0.5 },
      ],
    );
    assert.equal(snap.xds, null);
    assert.equal(snap.picks.total, 10);
    assert.equal(snap.picks.inWindow, 10);
    assert.deepEqual(snap.metrics, { recording: false, instruments: [] }, 'no metrics options apply');
    // The next window: A fails, B takes every pick. A window shorter than shareWindowMs keeps the last one.
    rr.script(A, { failAfterMs: 1 });
    rr.subchannel(A).setState('TRANSIENT_FAILURE');
    rr.advance(5);
    for (let i = 0; i < 6; i++) rr.pick();
    now += 999;
    snap = JSON.parse((await get(server.port, `/channels/${rrChannel.id}.json`)).body) as ChannelSnapshot;
    assert.equal(snap.picks.inWindow, 10, 'a window is at least shareWindowMs long');
    now += 1;
    snap = JSON.parse((await get(server.port, `/channels/${rrChannel.id}.json`)).body) as ChannelSnapshot;
    assert.equal(snap.picks.inWindow, 6);
    const [a, b] = snap.tree!.children!;
    assert.equal(a!.node.state, 'TRANSIENT_FAILURE');
    assert.equal(b!.node.subchannels?.[0]?.recentShare, 1);
    assert.equal(a!.node.subchannels?.[0]?.recentShare ?? 0, 0);
  });

  test('server-sent events: the picture now, then a new one when a backend’s state changes', async () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], [{ pick_first: {} }]);
    sim.advance(1);
    const channel = simulatedChannel(registry, sim, 'endpoints:10.0.0.1:80');
    const stateOf = (data: unknown) => (data as ChannelSnapshot).tree?.subchannels?.[0]?.state;
    let sawReady = false;
    const events = readEvents(server.port, `/channels/${channel.id}/events`, (data) => {
      if (stateOf(data) === 'READY' && !sawReady) {
        sawReady = true;
        // The backend goes away after the page saw it READY.
        setImmediate(() => {
          sim.script(A, 'hang');
          sim.subchannel(A).setState('IDLE');
        });
      }
      return sawReady && stateOf(data) !== 'READY';
    });
    const seen = await events;
    assert.equal(stateOf(seen[0]), 'READY');
    assert.equal((seen.at(-1) as ChannelSnapshot).tree?.state, 'IDLE');
    registry.remove(channel);
  });

  test('a recording channel’s flight recording downloads as a file readRecording reads; a channel that does not record is a 404 saying how to record', async () => {
    const recorder = new FlightRecorder({ label: 'admin-test' });
    recorder.subchannelState('10.0.0.1:80', 'READY');
    const recording = {
      ...simulatedChannel(registry, rr, 'endpoints:10.0.0.1:80'),
      exportRecording: () => recorder.export(),
    };
    registry.remove(registry.get(recording.id)!);
    registry.add(recording);
    const reply = await get(server.port, `/channels/${recording.id}/recording.lbrec`);
    assert.equal(reply.status, 200);
    assert.equal(
      reply.headers['content-disposition'],
      `attachment; filename="channel-${recording.id}.lbrec"`,
    );
    const read = readRecording(reply.body);
    assert.equal(read.header.label, 'admin-test');
    assert.ok(
      read.events.some((e) => e.type === 'subchannel' && e.address === '10.0.0.1:80' && e.state === 'READY'),
    );
    registry.remove(recording);

    const silent = await get(server.port, `/channels/${rrChannel.id}/recording.lbrec`);
    assert.equal(silent.status, 404);
    assert.match(
      silent.body,
      new RegExp(`channel ${rrChannel.id} does not record .*lbtree\\.flight_recorder`),
    );
  });

  test('the list streams too, and a channel closed while watched ends its stream with a gone event', async () => {
    const sim = new Simulation();
    sim.update([A], [{ pick_first: {} }]);
    const channel = simulatedChannel(registry, sim, undefined);
    const list = await readEvents(server.port, '/events', (data) =>
      (data as { channels: { id: string }[] }).channels.some((c) => c.id === channel.id),
    );
    assert.ok(list.length >= 1);
    const gone = readEvents(server.port, `/channels/${channel.id}/events`, (_data, event) => {
      if (event === 'message') setImmediate(() => registry.remove(channel));
      return event === 'gone';
    });
    assert.ok((await gone).length >= 2);
  });

  test('an unknown channel is a 404 that names the id and the live channels', async () => {
    const json = await get(server.port, '/channels/99.json');
    assert.equal(json.status, 404);
    assert.deepEqual(JSON.parse(json.body), {
      error: `lbtree admin: no channel with id "99" (live channels: ${rrChannel.id})`,
    });
    const page = await get(server.port, '/channels/99');
    assert.equal(page.status, 404);
    assert.match(page.body, /no channel with id "99"/);
    const events = await get(server.port, '/channels/abc/events');
    assert.equal(events.status, 404);
    assert.match(events.body, /no channel with id \\"abc\\"/);
  });

  test('path traversal: nothing outside the view’s own files is ever served', async () => {
    const attempts = [
      '/static/../package.json',
      '/static/../../package.json',
      '/static/%2e%2e/%2e%2e/package.json',
      '/static/..%2f..%2fpackage.json',
      '/static/%2e%2e%2fadmin-server.js',
      '/static//etc/passwd',
      '/static/live-view.js/../../../../etc/passwd',
      '/../../../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/channels/..%2f..%2fpackage.json',
      '/static/',
      '/static/live-view.js%00.json',
      '/static/LIVE-VIEW.JS',
    ];
    for (const path of attempts) {
      const reply = await get(server.port, path);
      assert.equal(reply.status, 404, `${path} → ${reply.status}`);
      assert.doesNotMatch(reply.body, /"name": "lbtree"|root:|startAdminServer/, path);
    }
    // Its own files are served, by exact name.
    const script = await get(server.port, '/static/live-view.js');
    assert.equal(script.status, 200);
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(script.body, /EventSource/);
    assert.equal((await get(server.port, '/static/live-view.css')).status, 200);
  });

  test('pages: the list and a channel’s page load the script relatively, so any mount path works', async () => {
    const index = await get(server.port, '/');
    assert.equal(index.status, 200);
    assert.match(index.body, /<script src="static\/live-view.js">/);
    const page = await get(server.port, `/channels/${rrChannel.id}`);
    assert.match(page.body, new RegExp(`data-channel="${rrChannel.id}"`));
    assert.match(page.body, /<script src="\.\.\/static\/live-view.js">/);
  });

  test('only GET and HEAD are served', async () => {
    const reply = await get(server.port, '/channels.json', undefined, 'POST');
    assert.equal(reply.status, 405);
    assert.equal(reply.headers.allow, 'GET, HEAD');
  });

  test('DNS rebinding guard: a Host header that is not a loopback name is refused (403); loopback names are served', async () => {
    const refused = await get(server.port, '/channels.json', `attacker.example:${server.port}`);
    assert.equal(refused.status, 403);
    assert.match(refused.body, /requests for host "attacker.example" are refused/);
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`]) {
      assert.equal((await get(server.port, '/channels.json', host)).status, 200, host);
    }
  });
});

describe('lbtree/admin host refusal', () => {
  test('a host that is not loopback is refused without allowRemote, with an error naming the host', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10', 'example.com']) {
      await assert.rejects(startAdminServer({ port: 0, host }), {
        message: new RegExp(`refusing to listen on host "${host.replace(/\./g, '\\.')}".*allowRemote: true`),
      });
    }
  });

  test('with allowRemote the same host is taken, and requests for any Host are served', async () => {
    const registry = new ChannelRegistry();
    const server = await startAdminServer({ port: 0, host: '0.0.0.0', allowRemote: true, registry });
    try {
      assert.equal(server.url, `http://0.0.0.0:${server.port}/`);
      const reply = await get(server.port, '/channels.json', 'admin.example');
      assert.equal(reply.status, 200);
      assert.deepEqual(JSON.parse(reply.body), { channels: [] });
    } finally {
      await server.close();
    }
  });

  test('loopback hosts are accepted: 127.0.0.1, ::1 and localhost', async () => {
    for (const host of ['127.0.0.1', '::1', 'localhost']) {
      const server = await startAdminServer({ port: 0, host, registry: new ChannelRegistry() });
      await server.close();
    }
  });

  test('a bad port or interval is a clear error', async () => {
    await assert.rejects(startAdminServer({ port: 70_000 }), {
      message: /port must be an integer in \[0, 65535\], got 70000/,
    });
    assert.throws(() => createAdminHandler({ updateIntervalMs: 0 }), {
      message: /updateIntervalMs must be a positive number of ms, got 0/,
    });
  });
});

describe('lbtree/admin mounted in a user’s server', () => {
  test('under a base path: its routes answer there, and only there', async () => {
    const { createServer } = await import('node:http');
    const registry = new ChannelRegistry();
    const sim = new Simulation();
    sim.update([A], [{ pick_first: {} }]);
    const channel = simulatedChannel(registry, sim, 'endpoints:10.0.0.1:80');
    const handler = createAdminHandler({ basePath: '/lbtree/', registry });
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/lbtree')) handler(req, res);
      else res.end('the user’s own page');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const list = JSON.parse((await get(port, '/lbtree/channels.json')).body) as {
        channels: { id: string }[];
      };
      assert.deepEqual(
        list.channels.map((c) => c.id),
        [channel.id],
      );
      assert.equal((await get(port, `/lbtree/channels/${channel.id}.json`)).status, 200);
      const bare = await get(port, '/lbtree');
      assert.equal(bare.status, 301);
      assert.equal(bare.headers.location, '/lbtree/');
      assert.equal((await get(port, '/lbtreeX/channels.json')).status, 404);
      assert.equal((await get(port, '/other')).body, 'the user’s own page');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('lbtree/admin xDS area (A40 CSDS view)', () => {
  test("each resource with its version, ACK / NACK and the NACK reason, the server it came from (A71), and whether this channel uses it; every server's stream", async () => {
    const registry = new ChannelRegistry();
    const sim = new Simulation();
    sim.update([A], [{ pick_first: {} }]);
    const dump: XdsClientDump = {
      serverUri: 'xds.example:443',
      now: 50_000,
      node: { id: 'node-1' } as XdsClientDump['node'],
      stream: 'connected',
      types: [{ typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', version: '7', nonce: 'n7' }],
      servers: [
        {
          serverUri: 'xds.example:443',
          stream: 'connected',
          types: [
            { typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', version: '7', nonce: 'n7' },
          ],
        },
        {
          serverUri: 'fallback.example:443',
          stream: 'backoff',
          connectivityError: { code: 14, details: 'refused' },
          types: [],
        },
      ],
      authorities: [],
      resources: [
        {
          typeUrl: 'type.googleapis.com/envoy.config.listener.v3.Listener',
          name: 'listener',
          status: 'ACKED',
          version: '3',
          server: 'xds.example:443',
          lastUpdated: 40_000,
          watchers: 1,
        },
        {
          typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
          name: 'backend',
          status: 'NACKED',
          version: '6',
          lastUpdated: 30_000,
          error: { details: 'Cluster backend: lb_policy: unsupported', version: '7', at: 45_000 },
          watchers: 1,
        },
        {
          typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
          name: 'another-channels-cluster',
          status: 'ACKED',
          version: '7',
          server: 'fallback.example:443',
          authority: 'other.example',
          lastUpdated: 45_000,
          watchers: 1,
        },
      ],
    };
    // The channel's XdsConfig (A74): the listener "listener" (routes inline) and the cluster "backend".
    const config = xdsConfig({ backend: edsEntry(xdsCluster('backend'), undefined) });
    const channel = simulatedChannel(registry, sim, 'xds:///svc', () => dump, config);
    const now = T0 + 60_000;
    const handler = createAdminHandler({ registry, clock: () => now });
    const { createServer } = await import('node:http');
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const snap = JSON.parse((await get(port, `/channels/${channel.id}.json`)).body) as ChannelSnapshot;
      assert.deepEqual(snap.xds, {
        server: 'xds.example:443',
        stream: 'connected',
        connectivityError: null,
        servers: [
          { uri: 'xds.example:443', stream: 'connected', connectivityError: null },
          {
            uri: 'fallback.example:443',
            stream: 'backoff',
            connectivityError: { code: 14, details: 'refused' },
          },
        ],
        types: [{ type: 'Cluster', version: '7', nonce: 'n7' }],
        resources: [
          {
            type: 'Listener',
            name: 'listener',
            usedByChannel: true,
            status: 'ACKED',
            version: '3',
            server: 'xds.example:443',
            authority: null,
            // 10 s before the dump, which is `now`.
            updatedAt: new Date(now - 10_000).toISOString(),
            error: null,
            ambientError: null,
          },
          {
            type: 'Cluster',
            name: 'backend',
            usedByChannel: true,
            status: 'NACKED',
            version: '6',
            server: null,
            authority: null,
            updatedAt: new Date(now - 20_000).toISOString(),
            error: {
              details: 'Cluster backend: lb_policy: unsupported',
              version: '7',
              at: new Date(now - 5_000).toISOString(),
            },
            ambientError: null,
          },
          {
            type: 'Cluster',
            name: 'another-channels-cluster',
            usedByChannel: false,
            status: 'ACKED',
            version: '7',
            server: 'fallback.example:443',
            authority: 'other.example',
            updatedAt: new Date(now - 5_000).toISOString(),
            error: null,
            ambientError: null,
          },
        ],
      });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
