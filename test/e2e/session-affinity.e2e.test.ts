// Stateful session affinity end to end (A55, A60, A61): lbtree's control plane serves a listener with the
// stateful_session filter, real grpc-js servers on loopback answer Whoami, and grpc-js channels on lbtree's
// `xds:` resolver carry a session cookie kept by lbtree's SessionCookieJar. The `set-cookie` headers the test
// reads are written by lbtree's filter from the address list lbtree's xds_override_host reported, so they show
// that our code served the calls. grpc-js keeps one resolver per scheme per process; this file runs alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  hasIPv6Loopback,
  startBackends,
  WHOAMI_SERVICE,
} from '../../src/cli/loopback-backends.js';
import { ControlPlane, xdsService } from '../../src/control-plane/index.js';
import { register, SessionCookieJar } from '../../src/grpc-js/index.js';
import { rpcsUntil, servedByExactly } from '../support/rpc-window.js';

const NODE = 'lbtree-session-e2e';
const COOKIE = 'lbtree-session';
const passThrough = (b: Buffer) => b;

interface Answer {
  readonly name: string;
  /** The `set-cookie` values of the response headers. */
  readonly setCookies: readonly string[];
}

/** One Whoami RPC through `jar` (wait-for-ready): the backend's name and the cookies the response set. */
function call(client: BackendClientType, jar: SessionCookieJar): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const setCookies: string[] = [];
    const rpc = client.makeUnaryRequest(
      WHOAMI_SERVICE.whoami!.path,
      passThrough,
      passThrough,
      Buffer.alloc(0),
      new grpc.Metadata({ waitForReady: true }),
      { deadline: Date.now() + 5000, interceptors: [jar.interceptor] },
      (error: grpc.ServiceError | null, value?: Buffer) =>
        error ? reject(error) : resolve({ name: value!.toString(), setCookies }),
    );
    rpc.on('metadata', (md: grpc.Metadata) => {
      for (const v of md.get('set-cookie')) setCookies.push(String(v));
    });
  });
}

/** The cookie's decoded value: `address list;cluster` (A61 / A60). */
function cookieText(jar: SessionCookieJar): string {
  const value = jar.get(COOKIE);
  assert.ok(value !== undefined, 'the channel set the session cookie');
  return Buffer.from(value, 'base64').toString();
}

/** A backend named `name` served by one grpc-js server listening on 127.0.0.1:p and [::1]:p (A61 dual stack). */
class DualStackBackend {
  private readonly server = new grpc.Server();
  port = 0;
  served = 0;

  constructor(readonly name: string) {
    this.server.addService(WHOAMI_SERVICE, {
      whoami: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        this.served++;
        callback(null, Buffer.from(this.name));
      },
    });
  }

  get v4(): string {
    return `127.0.0.1:${this.port}`;
  }
  get v6(): string {
    return `[::1]:${this.port}`;
  }

  async start(): Promise<this> {
    const bind = (address: string) =>
      new Promise<number>((resolve, reject) =>
        this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, port) =>
          e ? reject(e) : resolve(port),
        ),
      );
    this.port = await bind('127.0.0.1:0');
    await bind(this.v6);
    return this;
  }

  /** Stops listening on IPv4 and sends its connections GOAWAY: the backend is now reachable over IPv6 only. */
  closeV4(): void {
    this.server.unbind(this.v4);
    this.server.drain(this.v4, 0);
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

describe('A55 / A61 stateful session affinity on grpc-js channels (lbtree xds: resolver, lbtree control plane)', () => {
  const plane = new ControlPlane();
  const clients: BackendClientType[] = [];
  let backends: Backend[];
  let dual: DualStackBackend | undefined;

  before(async () => {
    backends = await startBackends(['s1', 's2', 's3']);
    await plane.listen('127.0.0.1:0');
    register({ xds: { bootstrap: plane.bootstrap({ nodeId: NODE }) } });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
    dual?.stop();
    await plane.close();
  });

  function channel(target: string): BackendClientType {
    const c = new BackendClient(target, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  }

  test('A55: the first call sets a cookie naming its backend; with it 100 calls stay on that backend', async () => {
    plane.setResources(
      xdsService({
        name: 'sticky',
        sessionCookie: { name: COOKIE, path: '/lbtree.test.Backend', ttlSeconds: 300 },
        clusters: [
          {
            name: 'sticky-cluster',
            lbPolicy: 'ROUND_ROBIN',
            localities: [{ zone: 'a', endpoints: backends.map((b) => b.address) }],
          },
        ],
      }),
    );
    const client = channel('xds:///sticky');
    // Without a cookie round_robin spreads the calls over all three.
    await rpcsUntil(client, servedByExactly(['s1', 's2', 's3']), { window: 12 });
    const jar = new SessionCookieJar();
    const first = await call(client, jar);
    assert.equal(first.setCookies.length, 1);
    assert.match(
      first.setCookies[0]!,
      new RegExp(`^${COOKIE}=[A-Za-z0-9+/=]+; HttpOnly; Path=/lbtree.test.Backend; Max-Age=300$`),
    );
    const backend = backends.find((b) => b.name === first.name)!;
    assert.equal(
      cookieText(jar),
      `${backend.address};sticky-cluster`,
      'A60 / A61 cookie: address list;cluster',
    );
    const names = new Set<string>();
    let newCookies = 0;
    for (let i = 0; i < 100; i++) {
      const answer = await call(client, jar);
      names.add(answer.name);
      newCookies += answer.setCookies.length;
    }
    assert.deepEqual([...names], [first.name], 'all 100 calls reached the session backend');
    assert.equal(newCookies, 0, 'the cookie already named the backend used: no new cookie');
  });

  test('A61: the session survives its backend changing address family (IPv4 listener closed), and an EDS reorder', async (t) => {
    if (!(await hasIPv6Loopback())) {
      t.skip('this machine has no [::1] loopback');
      return;
    }
    dual = await new DualStackBackend('dual').start();
    const endpoints = (first: string, second: string) => [
      { address: first, additionalAddresses: [second] },
      backends[0]!.address,
      backends[1]!.address,
    ];
    const service = (first: string, second: string) =>
      xdsService({
        name: 'dual',
        sessionCookie: { name: COOKIE },
        clusters: [
          {
            name: 'dual-cluster',
            lbPolicy: 'ROUND_ROBIN',
            localities: [{ zone: 'a', endpoints: endpoints(first, second) }],
          },
        ],
      });
    plane.setResources(service(dual.v4, dual.v6));
    const client = channel('xds:///dual');
    await rpcsUntil(client, servedByExactly(['dual', 's1', 's2']), { window: 12 });
    // Start sessions until one lands on the dual-stack backend.
    let jar = new SessionCookieJar();
    for (let i = 0; i < 30 && (await call(client, jar)).name !== 'dual'; i++) jar = new SessionCookieJar();
    assert.equal(
      cookieText(jar),
      `${dual.v4},${dual.v6};dual-cluster`,
      'A61: the whole address list, the one used first',
    );
    for (let i = 0; i < 10; i++) assert.equal((await call(client, jar)).name, 'dual');

    dual.closeV4();
    // The cookie is rewritten once a call reaches the backend over IPv6; every call meanwhile stays on it.
    const deadline = Date.now() + 5000;
    while (cookieText(jar) !== `${dual.v6},${dual.v4};dual-cluster`) {
      assert.ok(Date.now() < deadline, `the cookie was not rewritten: ${cookieText(jar)}`);
      assert.equal((await call(client, jar)).name, 'dual');
    }
    const names = new Set<string>();
    for (let i = 0; i < 50; i++) names.add((await call(client, jar)).name);
    assert.deepEqual([...names], ['dual'], 'the session survived the IPv4 listener going away');

    // EDS now lists the IPv6 address first: the same endpoint, the same session.
    plane.setResources(service(dual.v6, dual.v4));
    for (let i = 0; i < 20; i++) assert.equal((await call(client, jar)).name, 'dual');
  });
});
