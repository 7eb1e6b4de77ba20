// gRFC A65 end to end: the xDS client reaches lbtree's control plane over mTLS with the bootstrap's `tls`
// channel creds (CA, certificate and key files); the control plane requires the client certificate. A file it
// cannot read fails the stream with a status that names the file. Certificates are made by the test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { ControlPlane, cluster } from '../../src/control-plane/index.js';
import { grpcXdsTransportFactory } from '../../src/grpc-js/xds-transport.js';
import { parseBootstrap } from '../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../src/xds/client/xds-client.js';
import { clusterResourceType } from '../../src/xds/resources/index.js';
import type { XdsCluster } from '../../src/xds/resources/types.js';
import { TestCertificates } from '../support/test-certificates.js';
import { until } from '../support/until.js';
import { RecordingWatcher } from '../xds/client/fake-ads.js';

describe('A65 "tls" channel creds for the xDS server (lbtree control plane over mTLS)', () => {
  const certs = new TestCertificates();
  const plane = new ControlPlane({ resources: [cluster({ name: 'c1' })] });
  const clients: XdsClient[] = [];
  let port = 0;
  let client: { certificateFile: string; privateKeyFile: string };

  before(async () => {
    const server = certs.leaf('xds-server', ['IP:127.0.0.1', 'DNS:localhost']);
    client = certs.leaf('xds-client', ['URI:spiffe://cluster.local/ns/default/sa/client']);
    const credentials = grpc.ServerCredentials.createSsl(
      readFileSync(certs.caFile),
      [
        {
          cert_chain: readFileSync(server.certificateFile),
          private_key: readFileSync(server.privateKeyFile),
        },
      ],
      true,
    );
    port = await plane.listen('127.0.0.1:0', credentials);
  });
  after(async () => {
    for (const c of clients) c.close();
    await plane.close();
    certs.remove();
  });

  function xdsClient(config: Record<string, string>): XdsClient {
    const c = new XdsClient({
      bootstrap: parseBootstrap({
        xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'tls', config }] }],
        node: { id: 'a65-e2e' },
      }),
      transport: grpcXdsTransportFactory,
      backoff: { initialMs: 50, maxMs: 200 },
    });
    clients.push(c);
    return c;
  }

  test('with the CA and the client certificate, the client gets the cluster', async () => {
    const c = xdsClient({
      ca_certificate_file: certs.caFile,
      certificate_file: client.certificateFile,
      private_key_file: client.privateKeyFile,
    });
    const watcher = new RecordingWatcher((x: XdsCluster) => x.name);
    c.watch(clusterResourceType, 'c1', watcher);
    await until('the cluster over mTLS', () => watcher.events.includes('changed c1'));
  });

  test('a key file it cannot read: the stream fails with a status naming the file', async () => {
    const missing = join(certs.dir, 'no-such-key.pem');
    const c = xdsClient({
      ca_certificate_file: certs.caFile,
      certificate_file: client.certificateFile,
      private_key_file: missing,
    });
    const watcher = new RecordingWatcher((x: XdsCluster) => x.name);
    c.watch(clusterResourceType, 'c1', watcher);
    await until('an error status', () => watcher.statuses.length > 0);
    const details = watcher.statuses.map((s) => s.details).join('\n');
    assert.match(details, /channel_creds "tls" private_key_file .*no-such-key\.pem: cannot read it/);
    assert.deepEqual(
      watcher.events.filter((e) => e.startsWith('changed')),
      [],
    );
  });

  test('without a client certificate (TLS, not mTLS) the control plane refuses the connection', async () => {
    const c = xdsClient({ ca_certificate_file: certs.caFile });
    const watcher = new RecordingWatcher((x: XdsCluster) => x.name);
    c.watch(clusterResourceType, 'c1', watcher);
    await until('an error status', () => watcher.statuses.length > 0);
    assert.equal(watcher.statuses[0]!.code, grpc.status.UNAVAILABLE);
    assert.deepEqual(
      watcher.events.filter((e) => e.startsWith('changed')),
      [],
    );
  });
});
