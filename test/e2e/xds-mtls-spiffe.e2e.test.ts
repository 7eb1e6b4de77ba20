// gRFC A87 (SPIFFE bundle maps for xDS mTLS) end to end: the bootstrap's file_watcher instance names a
// spiffe_trust_bundle_map_file (read as GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE=true allows) with two trust domains,
// each its own CA made by the test with openssl; real grpc-js TLS servers present leaf certificates with SPIFFE
// URI SANs from various CAs, lbtree's control plane serves ISTIO_MUTUAL-shaped clusters, and grpc-js channels on
// lbtree's `xds:` resolver with XdsChannelCredentials call them. The instance's ca_certificate_file is a third
// CA, which A87 ignores when a bundle map is given. grpc-js keeps one resolver per scheme: this file runs alone.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  BackendClient,
  type BackendClientType,
  WHOAMI_SERVICE,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { ControlPlane, type ResourceJson, xdsService } from '../../src/control-plane/index.js';
import { register, XdsChannelCredentials } from '../../src/grpc-js/index.js';
import { XDS_MTLS_SPIFFE_ENV } from '../../src/xds/client/certificate-providers.js';
import { type LeafFiles, TestCertificates } from '../support/test-certificates.js';

const NODE = 'lbtree-mtls-spiffe-e2e';
const UPSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const ECHO_A = 'spiffe://td-a.example/ns/default/sa/echo';
/** A refused connection is tried again within 100–500 ms instead of grpc-js's 1–120 s. */
const FAST_RECONNECT = { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 500 };

/** An istiod-style ISTIO_MUTUAL transport socket: identity and roots from instance "default", SANs `sans`. */
function istioMutual(sans: readonly string[]): Record<string, unknown> {
  return {
    transportSocket: {
      name: 'envoy.transport_sockets.tls',
      typedConfig: {
        '@type': UPSTREAM_TLS,
        commonTlsContext: {
          tlsCertificateCertificateProviderInstance: { instanceName: 'default', certificateName: 'default' },
          combinedValidationContext: {
            defaultValidationContext: { matchSubjectAltNames: sans.map((exact) => ({ exact })) },
            validationContextCertificateProviderInstance: {
              instanceName: 'default',
              certificateName: 'ROOTCA',
            },
          },
        },
      },
    },
  };
}

/** A bundle map file's JSON: each trust domain's one root, as the SPIFFE bundle format writes it. */
function bundleMap(domains: Record<string, TestCertificates>): string {
  const der = (ca: TestCertificates) =>
    readFileSync(ca.caFile, 'utf8')
      .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
      .replace(/\s+/g, '');
  return JSON.stringify({
    trust_domains: Object.fromEntries(
      Object.entries(domains).map(([domain, ca]) => [
        domain,
        { spiffe_sequence: 1, keys: [{ kty: 'EC', use: 'x509-svid', x5c: [der(ca)] }] },
      ]),
    ),
  });
}

/** A Whoami server with TLS presenting `leaf`, requiring a client certificate from `clientCa`. */
class TlsBackend {
  private readonly server = new grpc.Server();
  address = '';

  constructor(readonly name: string) {
    this.server.addService(WHOAMI_SERVICE, {
      whoami: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
        callback(null, Buffer.from(this.name)),
    });
  }

  async start(clientCa: string, leaf: LeafFiles): Promise<this> {
    const credentials = grpc.ServerCredentials.createSsl(
      readFileSync(clientCa),
      [{ cert_chain: readFileSync(leaf.certificateFile), private_key: readFileSync(leaf.privateKeyFile) }],
      true,
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

describe('A87: SPIFFE bundle map roots for xDS mTLS (lbtree xds: resolver, file_watcher)', () => {
  const plane = new ControlPlane();
  const caA = new TestCertificates('trust domain A CA');
  const caB = new TestCertificates('trust domain B CA');
  const caC = new TestCertificates('trust domain C CA');
  const mapFile = join(caA.dir, 'spiffe-bundle-map.json');
  const clients: BackendClientType[] = [];
  const backends: TlsBackend[] = [];
  const services = new Map<string, ResourceJson[]>();
  const credentials = new XdsChannelCredentials(grpc.credentials.createInsecure());

  /** Starts a server presenting a leaf of `ca` with `sans`, behind listener `name` whose cluster checks `matchSans`. */
  async function service(name: string, ca: TestCertificates, sans: string[], matchSans: string[]) {
    const backend = await new TlsBackend(name).start(caA.caFile, ca.leaf(name, sans));
    backends.push(backend);
    services.set(
      name,
      xdsService({
        name,
        clusters: [
          {
            name: `${name}-cluster`,
            localities: [{ zone: 'a', endpoints: [backend.address] }],
            fields: istioMutual(matchSans),
          },
        ],
      }),
    );
    plane.setResources([...services.values()].flat());
  }

  function channel(name: string): BackendClientType {
    const c = new BackendClient(`xds:///${name}`, credentials, FAST_RECONNECT);
    clients.push(c);
    return c;
  }

  /** Calls without wait-for-ready until one fails UNAVAILABLE (the connection attempt's outcome). */
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

  before(async () => {
    process.env[XDS_MTLS_SPIFFE_ENV] = 'true';
    writeFileSync(mapFile, bundleMap({ 'td-a.example': caA, 'td-b.example': caB }));
    const clientLeaf = caA.leaf('client', ['URI:spiffe://td-a.example/ns/default/sa/client']);
    await plane.listen('127.0.0.1:0');
    register({
      xds: {
        bootstrap: {
          ...plane.bootstrap({ nodeId: NODE }),
          certificate_providers: {
            default: {
              plugin_name: 'file_watcher',
              config: {
                certificate_file: clientLeaf.certificateFile,
                private_key_file: clientLeaf.privateKeyFile,
                ca_certificate_file: caC.caFile,
                spiffe_trust_bundle_map_file: mapFile,
                refresh_interval: '0.2s',
              },
            },
          },
        },
      },
    });
    await service('spiffe-a', caA, [`URI:${ECHO_A}`], [ECHO_A]);
    await service('spiffe-c', caC, ['URI:spiffe://td-c.example/ns/default/sa/echo'], []);
    await service('spiffe-cross', caB, [`URI:${ECHO_A}`], []);
    await service('not-spiffe', caA, ['DNS:echo.default.svc'], []);
    await service('spiffe-a-other-san', caA, [`URI:${ECHO_A}`], [`${ECHO_A}-other`]);
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
    await plane.close();
    for (const ca of [caA, caB, caC]) ca.remove();
  });

  test('a SPIFFE ID in a known trust domain, chained to that domain’s bundle, with the SAN the cluster asks: served', async () => {
    assert.equal(await whoami(channel('spiffe-a'), { waitForReady: true, deadlineMs: 10_000 }), 'spiffe-a');
  });

  test('a trust domain the map lacks fails with a status naming it (ca_certificate_file, which trusts it, is ignored)', async () => {
    const e = await failure(channel('spiffe-c'));
    assert.match(
      e.details,
      /xDS TLS to cluster spiffe-c-cluster: SPIFFE verification: trust domain "td-c\.example" is not in the SPIFFE bundle map \(it has: td-a\.example, td-b\.example\)/,
    );
  });

  test('a chain from another trust domain’s bundle fails, though that bundle is in the map', async () => {
    const e = await failure(channel('spiffe-cross'));
    assert.match(
      e.details,
      /the peer's certificate chain does not lead to a root of trust domain "td-a\.example"'s bundle/,
    );
  });

  test('A29 SAN matching still applies: a SPIFFE ID that passes verification but not the cluster’s SAN fails', async () => {
    const e = await failure(channel('spiffe-a-other-san'));
    assert.match(
      e.details,
      /certificate check failure: no subject alternative name .*matches match_subject_alt_names/,
    );
  });

  test('a certificate without a SPIFFE ID fails (A87: non-SPIFFE peers are rejected)', async () => {
    const e = await failure(channel('not-spiffe'));
    assert.match(e.details, /SPIFFE verification: the peer certificate has 0 URI SANs/);
  });

  test('the bundle map is read again when it changes: a trust domain added to the file is trusted', async () => {
    writeFileSync(mapFile, bundleMap({ 'td-a.example': caA, 'td-b.example': caB, 'td-c.example': caC }));
    // A refresh (every 0.2 s) takes td-c in; the wait-for-ready call connects on an attempt after it.
    assert.equal(await whoami(channel('spiffe-c'), { waitForReady: true, deadlineMs: 10_000 }), 'spiffe-c');
  });
});
