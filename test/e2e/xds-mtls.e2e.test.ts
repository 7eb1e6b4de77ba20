// xDS transport security end to end (gRFC A29, with the file_watcher provider): real grpc-js TLS servers that
// require a client certificate, lbtree's control plane serving the cluster shape istiod's gRPC generator sends
// for ISTIO_MUTUAL (the deprecated provider-instance fields, the SAN in the combined validation context), and
// grpc-js channels on lbtree's `xds:` resolver with XdsChannelCredentials. Certificates are made by the test.
// grpc-js keeps one resolver per scheme per process; this file runs alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  BackendClient,
  type BackendClientType,
  startBackends,
  WHOAMI_SERVICE,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { ControlPlane, xdsService } from '../../src/control-plane/index.js';
import { METRICS_CHANNEL_OPTION, register, XdsChannelCredentials } from '../../src/grpc-js/index.js';
import { OtelMetrics, sumOf } from '../support/otel-metrics.js';
import { type LeafFiles, TestCertificates } from '../support/test-certificates.js';

const NODE = 'lbtree-mtls-e2e';
const HOST = 'echo.default.svc.cluster.local';
const SERVER_SAN = 'spiffe://cluster.local/ns/default/sa/echo';
const CLIENT_SAN = 'spiffe://cluster.local/ns/default/sa/client';
const UPSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

/** What istiod sends for ISTIO_MUTUAL to a gRPC client, with `sans` and provider instance `instance`. */
function istioMutual(sans: readonly string[], instance = 'default'): Record<string, unknown> {
  return {
    transportSocket: {
      name: 'envoy.transport_sockets.tls',
      typedConfig: {
        '@type': UPSTREAM_TLS,
        commonTlsContext: {
          tlsCertificateCertificateProviderInstance: { instanceName: instance, certificateName: 'default' },
          combinedValidationContext: {
            defaultValidationContext: { matchSubjectAltNames: sans.map((exact) => ({ exact })) },
            validationContextCertificateProviderInstance: {
              instanceName: instance,
              certificateName: 'ROOTCA',
            },
          },
        },
        sni: `outbound_.8080_._.${HOST}`,
      },
    },
  };
}

/** A Whoami server on 127.0.0.1 with TLS, requiring a client certificate signed by the CA. */
class MtlsBackend {
  private readonly server = new grpc.Server();
  address = '';
  served = 0;

  constructor(readonly name: string) {
    this.server.addService(WHOAMI_SERVICE, {
      whoami: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        this.served++;
        callback(null, Buffer.from(this.name));
      },
    });
  }

  async start(ca: string, leaf: LeafFiles): Promise<this> {
    const credentials = grpc.ServerCredentials.createSsl(
      readFileSync(ca),
      [{ cert_chain: readFileSync(leaf.certificateFile), private_key: readFileSync(leaf.privateKeyFile) }],
      true, // checkClientCertificate: mTLS
    );
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))),
    );
    this.address = `127.0.0.1:${port}`;
    return this;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

describe('A29 xDS mTLS on grpc-js channels (lbtree xds: resolver, lbtree control plane, file_watcher)', () => {
  const plane = new ControlPlane();
  const certs = new TestCertificates();
  const clients: BackendClientType[] = [];
  const backends = [new MtlsBackend('m1'), new MtlsBackend('m2')];
  const xdsCredentials = new XdsChannelCredentials(grpc.credentials.createInsecure());

  before(async () => {
    const serverLeaf = certs.leaf('echo', [`URI:${SERVER_SAN}`, 'DNS:echo.default.svc']);
    const clientLeaf = certs.leaf('client', [`URI:${CLIENT_SAN}`]);
    for (const b of backends) await b.start(certs.caFile, serverLeaf);
    await plane.listen('127.0.0.1:0');
    register({
      xds: {
        bootstrap: {
          ...plane.bootstrap({ nodeId: NODE }),
          // istio-agent's bootstrap names one instance, "default", with the workload's files.
          certificate_providers: {
            default: {
              plugin_name: 'file_watcher',
              config: {
                certificate_file: clientLeaf.certificateFile,
                private_key_file: clientLeaf.privateKeyFile,
                ca_certificate_file: certs.caFile,
                refresh_interval: '900s',
              },
            },
            missing: {
              plugin_name: 'file_watcher',
              config: {
                certificate_file: join(certs.dir, 'no-such-cert.pem'),
                private_key_file: clientLeaf.privateKeyFile,
                ca_certificate_file: certs.caFile,
              },
            },
          },
        },
      },
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
    await plane.close();
    certs.remove();
  });

  function serve(listener: string, clusterName: string, fields: Record<string, unknown>): void {
    plane.setResources(
      xdsService({
        name: listener,
        clusters: [
          {
            name: clusterName,
            localities: [{ zone: 'a', endpoints: backends.map((b) => b.address) }],
            fields,
          },
        ],
      }),
    );
  }

  function channel(target: string, credentials: grpc.ChannelCredentials = xdsCredentials): BackendClientType {
    const c = new BackendClient(target, credentials);
    clients.push(c);
    return c;
  }

  /**
   * Calls without wait-for-ready until one fails UNAVAILABLE (a call queues while the channel connects, so this
   * waits for the connection attempt's outcome); returns its error.
   */
  async function failure(client: BackendClientType): Promise<grpc.ServiceError> {
    const deadline = Date.now() + 10_000;
    let last: unknown;
    while (Date.now() < deadline) {
      try {
        await whoami(client, { deadlineMs: 2000 });
      } catch (e) {
        last = e;
        if ((e as grpc.ServiceError).code === grpc.status.UNAVAILABLE) return e as grpc.ServiceError;
      }
    }
    throw new Error(`no UNAVAILABLE failure within 10 s; last: ${String(last)}`);
  }

  test('ISTIO_MUTUAL with the server SAN: calls succeed over mTLS, on both backends', async () => {
    const listener = `${HOST}:8080`;
    serve(listener, `outbound|8080||${HOST}`, istioMutual([SERVER_SAN]));
    const otel = new OtelMetrics();
    const client = new BackendClient(`xds:///${listener}`, xdsCredentials, {
      [METRICS_CHANNEL_OPTION]: otel.options(['grpc.subchannel.open_connections'], ['grpc.security_level']),
    });
    clients.push(client);
    const names = new Set<string>();
    for (let i = 0; i < 20; i++) names.add(await whoami(client, { waitForReady: true, deadlineMs: 10_000 }));
    assert.deepEqual([...names].sort(), ['m1', 'm2']);
    // The servers require a client certificate: lbtree sent the bootstrap's identity.
    assert.ok(backends.every((b) => b.served > 0));
    // A94: both connections were made with the cluster's TLS config, so their level is privacy_and_integrity.
    const deadline = Date.now() + 15_000;
    let tls = 0;
    while (tls !== 2) {
      if (Date.now() > deadline) throw new Error(`saw ${tls} open TLS connections, not 2`);
      await new Promise((r) => setTimeout(r, 20));
      const open = (await otel.collect()).get('grpc.subchannel.open_connections');
      tls = sumOf(open, { 'grpc.security_level': 'privacy_and_integrity' });
    }
  });

  test('a changed UpstreamTlsContext applies to the connected channel: a wrong SAN fails its calls, the right one serves again', async () => {
    const listener = 'rotating-san.default.svc.cluster.local:8080';
    const name = 'outbound|8080||rotating-san.default.svc.cluster.local';
    serve(listener, name, istioMutual([SERVER_SAN]));
    const client = channel(`xds:///${listener}`);
    assert.equal(typeof (await whoami(client, { waitForReady: true, deadlineMs: 10_000 })), 'string');
    serve(listener, name, istioMutual([`${SERVER_SAN}-other`]));
    const e = await failure(client);
    assert.match(e.details, /certificate check failure/);
    serve(listener, name, istioMutual([SERVER_SAN]));
    assert.equal(typeof (await whoami(client, { waitForReady: true, deadlineMs: 10_000 })), 'string');
  });

  test('the same cluster without XdsChannelCredentials uses the channel credentials (plaintext): it cannot connect', async () => {
    const listener = `${HOST}:8080`;
    const plain = channel(`xds:///${listener}`, grpc.credentials.createInsecure());
    const e = await failure(plain);
    assert.equal(e.code, grpc.status.UNAVAILABLE);
  });

  test('A29 "Server Authorization": a SAN the server certificate lacks fails the call with a clear status', async () => {
    const listener = 'wrong-san.default.svc.cluster.local:8080';
    serve(
      listener,
      'outbound|8080||wrong-san.default.svc.cluster.local',
      istioMutual([`${SERVER_SAN}-other`]),
    );
    const served = backends.map((b) => b.served);
    const e = await failure(channel(`xds:///${listener}`));
    assert.match(e.details, /xDS TLS to cluster outbound\|8080\|\|wrong-san\.default\.svc\.cluster\.local/);
    assert.match(e.details, /certificate check failure/);
    assert.match(e.details, /URI:spiffe:\/\/cluster\.local\/ns\/default\/sa\/echo/);
    assert.deepEqual(
      backends.map((b) => b.served),
      served,
      'no call reached a server',
    );
  });

  test("A82 system_root_certs: the system roots, not the provider's CA, validate the server (the test CA is not trusted)", async () => {
    const listener = 'system-roots.default.svc.cluster.local:8080';
    serve(listener, 'outbound|8080||system-roots.default.svc.cluster.local', {
      transportSocket: {
        name: 'envoy.transport_sockets.tls',
        typedConfig: {
          '@type': UPSTREAM_TLS,
          commonTlsContext: {
            tlsCertificateProviderInstance: { instanceName: 'default' },
            validationContext: { systemRootCerts: {}, matchSubjectAltNames: [{ exact: SERVER_SAN }] },
          },
        },
      },
    });
    const e = await failure(channel(`xds:///${listener}`));
    assert.match(
      e.details,
      /xDS TLS to cluster outbound\|8080\|\|system-roots\.default\.svc\.cluster\.local/,
    );
    // Node's verdict on a chain ending in a CA the system does not trust.
    assert.match(e.details, /self-signed certificate in certificate chain/);
  });

  test("an unreadable certificate file fails the cluster's calls with a status naming the file", async () => {
    const listener = 'missing-file.default.svc.cluster.local:8080';
    serve(
      listener,
      'outbound|8080||missing-file.default.svc.cluster.local',
      istioMutual([SERVER_SAN], 'missing'),
    );
    const e = await failure(channel(`xds:///${listener}`));
    assert.match(
      e.details,
      /certificate provider "missing" certificate_file .*no-such-cert\.pem: cannot read it/,
    );
  });

  test('A29 "Programming API": without xDS (a plain target) the fallback credentials are used', async () => {
    const [plain] = await startBackends(['plain']);
    try {
      const client = channel(plain!.address);
      assert.equal(await whoami(client, { waitForReady: true, deadlineMs: 10_000 }), 'plain');
    } finally {
      plain!.stop();
    }
  });

  test('a cluster naming an instance the bootstrap lacks is NACKed, naming the field', async () => {
    const listener = 'unknown-instance.default.svc.cluster.local:8080';
    const nack = plane.waitForNack({ typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' });
    serve(
      listener,
      'outbound|8080||unknown-instance.default.svc.cluster.local',
      istioMutual([SERVER_SAN], 'spire'),
    );
    const client = channel(`xds:///${listener}`);
    // A call starts the channel's resolution; it fails, as the cluster has no accepted version.
    const call = whoami(client, { deadlineMs: 10_000 }).then(
      () => assert.fail('a call to a NACKed cluster succeeded'),
      (e: grpc.ServiceError) => e,
    );
    const record = await nack;
    assert.match(
      record.reason,
      /combined_validation_context\.validation_context_certificate_provider_instance\.instance_name: unrecognized certificate provider instance name "spire"/,
    );
    const e = await call;
    assert.match(e.details, /unrecognized certificate provider instance name "spire"/);
  });
});
