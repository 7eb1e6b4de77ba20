// A94's optional `grpc.security_level` label of grpc.subchannel.open_connections on real grpc-js channels:
// "none" for a plaintext connection, "privacy_and_integrity" for a TLS one (lbtree reads it from the socket
// grpc-js reports through channelz); left out unless the user asks for it (A79 optional labels). Values read
// through the OpenTelemetry SDK; the test waits for the values, never for time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
  WHOAMI_SERVICE,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { METRICS_CHANNEL_OPTION, register } from '../../src/grpc-js/index.js';
import { type CollectedMetric, OtelMetrics } from '../support/otel-metrics.js';
import { TestCertificates } from '../support/test-certificates.js';

const OPEN_CONNECTIONS = 'grpc.subchannel.open_connections';

/** A Whoami server on 127.0.0.1 with TLS (no client certificate asked). */
async function tlsBackend(certs: TestCertificates): Promise<{ address: string; server: grpc.Server }> {
  const leaf = certs.leaf('server', ['DNS:localhost', 'IP:127.0.0.1']);
  const server = new grpc.Server();
  server.addService(WHOAMI_SERVICE, {
    whoami: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, Buffer.from('tls')),
  });
  const credentials = grpc.ServerCredentials.createSsl(
    null,
    [{ cert_chain: readFileSync(leaf.certificateFile), private_key: readFileSync(leaf.privateKeyFile) }],
    false,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, server };
}

/** Collects until `name` has a point; returns its points' attributes and values. */
async function openConnections(otel: OtelMetrics): Promise<[Record<string, unknown>, number][]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const metric: CollectedMetric | undefined = (await otel.collect()).get(OPEN_CONNECTIONS);
    const points = (metric?.points ?? []).filter((p) => p.value !== 0);
    if (points.length > 0) return points.map((p) => [{ ...p.attributes }, p.value]);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${OPEN_CONNECTIONS}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const config = JSON.stringify({ loadBalancingConfig: [{ lbtree_pick_first: {} }] });

describe('A94 grpc.security_level on real channels', () => {
  const certs = new TestCertificates();
  const clients: BackendClientType[] = [];
  let plain: Backend;
  let tls: { address: string; server: grpc.Server };
  before(async () => {
    register();
    [plain] = (await startBackends(['plain'])) as [Backend];
    tls = await tlsBackend(certs);
  });
  after(() => {
    for (const c of clients) c.close();
    plain.stop();
    tls.server.forceShutdown();
    certs.remove();
  });

  function client(
    address: string,
    credentials: grpc.ChannelCredentials,
    otel: OtelMetrics,
    labels: string[],
  ) {
    const c = new BackendClient(`endpoints:${address}`, credentials, {
      'grpc.service_config': config,
      'grpc.ssl_target_name_override': 'localhost',
      [METRICS_CHANNEL_OPTION]: otel.options([OPEN_CONNECTIONS], labels),
    });
    clients.push(c);
    return c;
  }

  test('insecure credentials: one open connection at security level "none"', async () => {
    const otel = new OtelMetrics();
    const c = client(plain.address, grpc.credentials.createInsecure(), otel, ['grpc.security_level']);
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 10_000 }), 'plain');
    assert.deepEqual(await openConnections(otel), [
      [{ 'grpc.target': `endpoints:///${plain.address}`, 'grpc.security_level': 'none' }, 1],
    ]);
  });

  test('TLS credentials: one open connection at security level "privacy_and_integrity"', async () => {
    const otel = new OtelMetrics();
    const credentials = grpc.credentials.createSsl(readFileSync(certs.caFile));
    const c = client(tls.address, credentials, otel, ['grpc.security_level']);
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 10_000 }), 'tls');
    assert.deepEqual(await openConnections(otel), [
      [{ 'grpc.target': `endpoints:///${tls.address}`, 'grpc.security_level': 'privacy_and_integrity' }, 1],
    ]);
  });

  test('A79: the optional label is left out unless asked for', async () => {
    const otel = new OtelMetrics();
    const credentials = grpc.credentials.createSsl(readFileSync(certs.caFile));
    const c = client(tls.address, credentials, otel, []);
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 10_000 }), 'tls');
    assert.deepEqual(await openConnections(otel), [[{ 'grpc.target': `endpoints:///${tls.address}` }, 1]]);
  });
});
