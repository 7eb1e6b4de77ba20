import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClusterSchema } from '../../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { clusterResourceType } from '../../../src/xds/resources/index.js';
import type { XdsOptions } from '../../../src/xds/resources/xds-options.js';
import { accepted, decode, type Json, nacked, TYPE_PREFIX } from './support.js';

// gRFC A29 "CDS for Client Side Security" / "CommonTlsContext Processing" and A82 "xDS Resource Validation",
// through the CDS resource type (the NACK reasons name the Cluster's field).

const UPSTREAM = `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`;
const INSTANCES: XdsOptions = { certificateProviderInstances: new Set(['default', 'roots']) };
const CTC = 'transport_socket.typed_config.common_tls_context';

function tlsCluster(commonTlsContext: Json, upstream: Json = {}): Json {
  return {
    name: 'outbound|8080||echo.default.svc.cluster.local',
    type: 'EDS',
    edsClusterConfig: {
      edsConfig: { ads: {} },
      serviceName: 'outbound|8080||echo.default.svc.cluster.local',
    },
    transportSocket: {
      name: 'envoy.transport_sockets.tls',
      typedConfig: { '@type': UPSTREAM, commonTlsContext, ...upstream },
    },
  };
}

const decodeTls = (json: Json, options: XdsOptions = INSTANCES) =>
  decode(clusterResourceType, ClusterSchema, json, options);

/** What istiod's gRPC generator sends for ISTIO_MUTUAL: the deprecated instance fields, SANs in the combined context. */
const ISTIO_MUTUAL: Json = {
  tlsCertificateCertificateProviderInstance: { instanceName: 'default', certificateName: 'default' },
  combinedValidationContext: {
    defaultValidationContext: {
      matchSubjectAltNames: [{ exact: 'spiffe://cluster.local/ns/default/sa/echo' }],
    },
    validationContextCertificateProviderInstance: { instanceName: 'default', certificateName: 'ROOTCA' },
  },
};

describe('A29 "CDS for Client Side Security": accepted shapes', () => {
  test('no transport_socket: no TLS (the fallback credentials apply)', () => {
    const c = accepted(decodeTls({ name: 'c', type: 'EDS', edsClusterConfig: { edsConfig: { ads: {} } } }));
    assert.equal(c.upstreamTls, undefined);
  });

  test("istiod's ISTIO_MUTUAL shape: identity and roots from the deprecated instance fields", () => {
    const c = accepted(decodeTls(tlsCluster(ISTIO_MUTUAL, { sni: 'outbound_.8080_._.echo' })));
    assert.deepEqual(c.upstreamTls?.caCertificates, {
      kind: 'provider',
      provider: { instanceName: 'default', certificateName: 'ROOTCA' },
    });
    assert.deepEqual(c.upstreamTls?.identityCertificate, {
      instanceName: 'default',
      certificateName: 'default',
    });
    assert.deepEqual(c.upstreamTls?.matchSubjectAltNames, [
      { kind: 'exact', value: 'spiffe://cluster.local/ns/default/sa/echo', ignoreCase: false },
    ]);
  });

  test('current fields: validation_context.ca_certificate_provider_instance, tls_certificate_provider_instance', () => {
    const c = accepted(
      decodeTls(
        tlsCluster({
          tlsCertificateProviderInstance: { instanceName: 'default' },
          validationContext: {
            caCertificateProviderInstance: { instanceName: 'roots', certificateName: 'r' },
            matchSubjectAltNames: [
              { prefix: 'spiffe://cluster.local/', ignoreCase: true },
              { suffix: '.example.com' },
              { contains: 'echo' },
              { safeRegex: { regex: 'spiffe://[a-z.]+/ns/default/.*' } },
            ],
          },
        }),
      ),
    );
    const tls = c.upstreamTls!;
    assert.deepEqual(tls.caCertificates, {
      kind: 'provider',
      provider: { instanceName: 'roots', certificateName: 'r' },
    });
    assert.deepEqual(tls.identityCertificate, { instanceName: 'default', certificateName: '' });
    assert.deepEqual(
      tls.matchSubjectAltNames.map((m) => m.kind),
      ['prefix', 'suffix', 'contains', 'safe_regex'],
    );
  });

  test('no identity certificate: TLS without a client certificate', () => {
    const c = accepted(
      decodeTls(
        tlsCluster({ validationContext: { caCertificateProviderInstance: { instanceName: 'roots' } } }),
      ),
    );
    assert.equal(c.upstreamTls?.identityCertificate, undefined);
    assert.deepEqual(c.upstreamTls?.matchSubjectAltNames, []);
  });

  test('combined context: its default_validation_context names the roots before the deprecated field does', () => {
    const c = accepted(
      decodeTls(
        tlsCluster({
          combinedValidationContext: {
            defaultValidationContext: { caCertificateProviderInstance: { instanceName: 'roots' } },
            validationContextCertificateProviderInstance: { instanceName: 'default' },
          },
        }),
      ),
    );
    assert.deepEqual(c.upstreamTls?.caCertificates, {
      kind: 'provider',
      provider: { instanceName: 'roots', certificateName: '' },
    });
  });

  test('the deprecated validation_context_certificate_provider_instance at the top of the context (as grpc-go reads it)', () => {
    const c = accepted(
      decodeTls(tlsCluster({ validationContextCertificateProviderInstance: { instanceName: 'roots' } })),
    );
    assert.equal(c.upstreamTls?.caCertificates.kind, 'provider');
  });

  test('ignored fields: sni, allow_renegotiation, max_session_keys, alpn_protocols; trusted_ca and friends', () => {
    const c = accepted(
      decodeTls(
        tlsCluster(
          {
            alpnProtocols: ['h2'],
            validationContext: {
              caCertificateProviderInstance: { instanceName: 'roots' },
              trustedCa: { filename: '/etc/ssl/ca.pem' },
              allowExpiredCertificate: true,
              trustChainVerification: 'ACCEPT_UNTRUSTED',
              watchedDirectory: { path: '/etc/ssl' },
            },
          },
          { sni: 'x', allowRenegotiation: true, maxSessionKeys: 3 },
        ),
      ),
    );
    assert.equal(c.upstreamTls?.caCertificates.kind, 'provider');
  });
});

describe('A82 "xDS Resource Validation": system_root_certs', () => {
  const systemRoots = tlsCluster({ validationContext: { systemRootCerts: {} } });

  test('used when no ca_certificate_provider_instance is named', () => {
    const c = accepted(decodeTls(systemRoots));
    assert.deepEqual(c.upstreamTls?.caCertificates, { kind: 'system_root_certs' });
  });

  test('a named provider instance wins: the parsed value holds only one of the two', () => {
    const c = accepted(
      decodeTls(
        tlsCluster({
          validationContext: {
            systemRootCerts: {},
            caCertificateProviderInstance: { instanceName: 'roots' },
          },
        }),
      ),
    );
    assert.deepEqual(c.upstreamTls?.caCertificates, {
      kind: 'provider',
      provider: { instanceName: 'roots', certificateName: '' },
    });
  });

  test('GRPC_EXPERIMENTAL_XDS_SYSTEM_ROOT_CERTS off: the field is not read, so no roots is a NACK', () => {
    nacked(
      decodeTls(systemRoots, { ...INSTANCES, systemRootCerts: false }),
      CTC,
      'no CA certificate provider',
    );
  });
});

describe('A29: NACKs naming the field', () => {
  test('a certificate provider instance the bootstrap lacks (roots or identity)', () => {
    const reason = nacked(
      decodeTls(
        tlsCluster({ validationContext: { caCertificateProviderInstance: { instanceName: 'spire' } } }),
      ),
      `${CTC}.validation_context.ca_certificate_provider_instance.instance_name`,
      'unrecognized certificate provider instance name "spire"',
    );
    assert.match(reason, /certificate_providers: "default", "roots"/);
    nacked(
      decodeTls(ISTIO_MUTUAL_WITH('tlsCertificateCertificateProviderInstance', { instanceName: 'other' })),
      `${CTC}.tls_certificate_certificate_provider_instance.instance_name`,
    );
    nacked(
      decodeTls(tlsCluster(ISTIO_MUTUAL), { certificateProviderInstances: new Set() }),
      `${CTC}.combined_validation_context.validation_context_certificate_provider_instance.instance_name`,
      'certificate_providers: none',
    );
    // With no bootstrap instances given at all, none are known.
    nacked(
      decodeTls(tlsCluster(ISTIO_MUTUAL), {}),
      `${CTC}.combined_validation_context.validation_context_certificate_provider_instance.instance_name`,
    );
  });

  test('no validation context, or one naming no roots', () => {
    nacked(decodeTls(tlsCluster({})), CTC, 'no CA certificate provider instance configured');
    nacked(
      decodeTls(tlsCluster({ validationContext: {} })),
      CTC,
      'no CA certificate provider instance configured',
    );
    nacked(
      decodeTls(tlsCluster({ combinedValidationContext: { defaultValidationContext: {} } })),
      CTC,
      'no CA certificate provider',
    );
    // No common_tls_context at all.
    nacked(
      decodeTls({ ...tlsCluster({}), transportSocket: { name: 'tls', typedConfig: { '@type': UPSTREAM } } }),
      CTC,
    );
  });

  test('a transport socket that is not an UpstreamTlsContext, or has no typed_config', () => {
    nacked(
      decodeTls({
        ...tlsCluster({}),
        transportSocket: {
          name: 'envoy.transport_sockets.tls',
          typedConfig: {
            '@type': `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
          },
        },
      }),
      'transport_socket.typed_config.type_url',
      'unsupported transport socket type envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    );
    nacked(
      decodeTls({ ...tlsCluster({}), transportSocket: { name: 'tls' } }),
      'transport_socket.typed_config',
    );
  });

  test('"CommonTlsContext Processing": tls_params and custom_handshaker', () => {
    nacked(decodeTls(tlsCluster({ ...ISTIO_MUTUAL, tlsParams: {} })), `${CTC}.tls_params`);
    nacked(
      decodeTls(tlsCluster({ ...ISTIO_MUTUAL, customHandshaker: { name: 'h' } })),
      `${CTC}.custom_handshaker`,
    );
  });

  test('identity from tls_certificates or SDS', () => {
    const roots = { validationContext: { caCertificateProviderInstance: { instanceName: 'roots' } } };
    nacked(
      decodeTls(tlsCluster({ ...roots, tlsCertificates: [{ certificateChain: { filename: '/c' } }] })),
      `${CTC}.tls_certificates`,
    );
    nacked(
      decodeTls(tlsCluster({ ...roots, tlsCertificateSdsSecretConfigs: [{ name: 's' }] })),
      `${CTC}.tls_certificate_sds_secret_configs`,
    );
    nacked(
      decodeTls(tlsCluster({ validationContextSdsSecretConfig: { name: 's' } })),
      `${CTC}.validation_context_sds_secret_config`,
    );
  });

  test('validation context fields whose absence would weaken the check', () => {
    const at = `${CTC}.validation_context`;
    const roots = { caCertificateProviderInstance: { instanceName: 'roots' } };
    const cases: [Json, string][] = [
      [{ verifyCertificateSpki: ['x'] }, 'verify_certificate_spki'],
      [{ verifyCertificateHash: ['x'] }, 'verify_certificate_hash'],
      [{ requireSignedCertificateTimestamp: false }, 'require_signed_certificate_timestamp'],
      [{ crl: { filename: '/crl' } }, 'crl'],
      [{ customValidatorConfig: { name: 'v' } }, 'custom_validator_config'],
      [
        { matchTypedSubjectAltNames: [{ sanType: 'DNS', matcher: { exact: 'a' } }] },
        'match_typed_subject_alt_names',
      ],
    ];
    for (const [fields, name] of cases) {
      nacked(decodeTls(tlsCluster({ validationContext: { ...roots, ...fields } })), `${at}.${name}`);
    }
  });

  test('SAN matchers: a bad regex, a regex with ignore_case, no pattern', () => {
    const at = `${CTC}.validation_context.match_subject_alt_names`;
    const roots = { caCertificateProviderInstance: { instanceName: 'roots' } };
    const withSans = (sans: Json[]) =>
      decodeTls(tlsCluster({ validationContext: { ...roots, matchSubjectAltNames: sans } }));
    nacked(
      withSans([{ exact: 'a' }, { safeRegex: { regex: '(' } }]),
      `${at}[1].safe_regex.regex`,
      'invalid RE2',
    );
    nacked(withSans([{ safeRegex: { regex: 'a.*' }, ignoreCase: true }]), `${at}[0].ignore_case`);
    nacked(withSans([{ ignoreCase: true }]), `${at}[0].match_pattern`);
  });
});

function ISTIO_MUTUAL_WITH(field: string, value: Json): Json {
  return tlsCluster({ ...ISTIO_MUTUAL, [field]: value });
}
