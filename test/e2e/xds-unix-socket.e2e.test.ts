// istio-agent serves ADS on a Unix socket (`unix:///etc/istio/proxy/XDS`) and closes any stream beyond the
// first of a process: lbtree's xDS client connects to a `unix:///path` server_uri, and every xds: channel of
// the process shares its one ADS stream. lbtree's control plane listens on a socket in a temporary directory.
// Its own process (grpc-js keeps one resolver per scheme).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { ControlPlane, xdsService } from '../../src/control-plane/index.js';
import { register } from '../../src/grpc-js/index.js';

describe('xDS server over a Unix socket, one ADS stream per process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-uds-'));
  const socket = `unix://${join(dir, 'XDS')}`;
  const plane = new ControlPlane();
  const clients: BackendClientType[] = [];
  let backends: Backend[];

  before(async () => {
    backends = await startBackends(['u1', 'u2', 'u3']);
    await plane.listen(socket);
    register({ xds: { bootstrap: plane.bootstrap({ nodeId: 'lbtree-uds' }) } });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
    await plane.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the bootstrap names the socket as server_uri, and calls on three xds: channels are served through it over one ADS stream', async () => {
    assert.equal(plane.bootstrap().xds_servers[0]!.server_uri, socket);
    assert.match(socket, /^unix:\/\/\//);
    plane.setResources(
      backends.flatMap((b, i) =>
        xdsService({
          name: `uds-${i}`,
          clusters: [{ name: `uds-${i}-cluster`, localities: [{ endpoints: [b.address] }] }],
        }),
      ),
    );
    for (let i = 0; i < backends.length; i++) {
      const c = new BackendClient(`xds:///uds-${i}`, grpc.credentials.createInsecure());
      clients.push(c);
      assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 15_000 }), backends[i]!.name);
    }
    const streams = plane.clients();
    assert.equal(streams.length, 1, 'one ADS stream for the three channels');
    const listeners = streams[0]!.subscriptions.find((s) => s.typeUrl.endsWith('.Listener'));
    assert.deepEqual([...(listeners?.names ?? [])].sort(), ['uds-0', 'uds-1', 'uds-2']);
  });
});
