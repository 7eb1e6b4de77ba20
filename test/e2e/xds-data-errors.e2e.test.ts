// A88 "Propagating Status to Data Plane RPCs" (with A54) end to end: lbtree's xds: resolver on grpc-js against
// lbtree's control plane (bootstrap with `fail_on_data_errors`). A NACKed, or removed, Listener, RouteConfiguration
// or Cluster fails calls with UNAVAILABLE and the reason — never the xDS client's INVALID_ARGUMENT / NOT_FOUND,
// nor grpc-js's INTERNAL rewrite of them — and a wait-for-ready call waits until the resource is back, then
// succeeds. Runs in its own process (grpc-js keeps one resolver per scheme).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import {
  ControlPlane,
  LISTENER_TYPE_URL,
  type ResourceJson,
  xdsService,
} from '../../src/control-plane/index.js';
import { register } from '../../src/grpc-js/index.js';

const NODE = 'lbtree-xds-data-errors';

describe('A88: xDS data errors fail calls with UNAVAILABLE; wait-for-ready calls wait for the resource', () => {
  const plane = new ControlPlane();
  const clients: BackendClientType[] = [];
  let backend: Backend;

  before(async () => {
    [backend] = (await startBackends(['d1'])) as [Backend];
    await plane.listen('127.0.0.1:0');
    register({
      xds: {
        bootstrap: plane.bootstrap({ nodeId: NODE, serverFeatures: ['xds_v3', 'fail_on_data_errors'] }),
      },
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    backend.stop();
    await plane.close();
  });

  function channel(name: string): BackendClientType {
    const c = new BackendClient(`xds:///${name}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  }
  const service = (name: string): ResourceJson[] =>
    xdsService({
      name,
      clusters: [{ name: `${name}-cluster`, localities: [{ endpoints: [backend.address] }] }],
    });

  /** A call that is not wait-for-ready: resolves with its error. */
  async function failure(c: BackendClientType): Promise<grpc.ServiceError> {
    try {
      const served = await whoami(c, { deadlineMs: 5000 });
      throw new Error(`the call was served by ${served}`);
    } catch (e) {
      return e as grpc.ServiceError;
    }
  }

  async function failsWith(c: BackendClientType, details: RegExp): Promise<void> {
    let error: grpc.ServiceError | undefined;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      error = await failure(c).catch(() => undefined);
      if (error !== undefined && details.test(error.details)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(error, 'a call failed');
    assert.equal(grpc.status[error.code], 'UNAVAILABLE', error.details);
    assert.match(error.details, details);
  }

  test('a NACKed Listener with nothing cached: UNAVAILABLE with the NACK reason; a wait-for-ready call waits and is served once the Listener is good', async () => {
    plane.setResources([{ '@type': LISTENER_TYPE_URL, name: 'nacked' }]);
    const c = channel('nacked');
    await failsWith(c, /NACK of Listener "nacked"/);
    const waiting = whoami(c, { waitForReady: true, deadlineMs: 15_000 });
    await failsWith(c, /NACK of Listener "nacked"/); // the waiting call is still waiting meanwhile
    plane.setResources(service('nacked'));
    assert.equal(await waiting, 'd1');
  });

  test('a NACKed RouteConfiguration with nothing cached: UNAVAILABLE with the NACK reason', async () => {
    const [lds] = service('bad-routes');
    plane.setResources([
      lds!,
      {
        ...service('bad-routes')[1]!,
        virtualHosts: [
          { name: 'v', domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster: '' } }] },
        ],
      },
    ]);
    const c = channel('bad-routes');
    await failsWith(c, /NACK of RouteConfiguration "bad-routes-routes"/);
  });

  test('a Listener removed under fail_on_data_errors: UNAVAILABLE naming the removal (not NOT_FOUND); a wait-for-ready call waits until it is back', async () => {
    plane.setResources(service('gone'));
    const c = channel('gone');
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 15_000 }), 'd1');
    plane.setResources([]);
    await failsWith(c, /Listener "gone" was removed by the server/);
    const waiting = whoami(c, { waitForReady: true, deadlineMs: 15_000 });
    await failsWith(c, /Listener "gone" was removed by the server/); // meanwhile, the waiting call waits
    plane.setResources(service('gone'));
    assert.equal(await waiting, 'd1');
  });

  test('a Cluster removed under fail_on_data_errors: UNAVAILABLE naming the removal (not INTERNAL); a wait-for-ready call waits until it is back', async () => {
    plane.setResources(service('lost'));
    const c = channel('lost');
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 15_000 }), 'd1');
    plane.setResources(service('lost').filter((r) => !String(r['@type']).endsWith('.Cluster')));
    await failsWith(c, /Cluster "lost-cluster" was removed by the server/);
    const waiting = whoami(c, { waitForReady: true, deadlineMs: 15_000 });
    await failsWith(c, /Cluster "lost-cluster" was removed by the server/);
    plane.setResources(service('lost'));
    assert.equal(await waiting, 'd1');
  });
});
