// gRFC A29 "CDS for Client Side Security" and "CommonTlsContext Processing", with A82's system_root_certs:
// Cluster.transport_socket as an UpstreamTlsContext, validated into the certificate provider instances and the
// SAN matchers a connection to the cluster uses. Every problem is a NACK naming the field.

import type { TransportSocket } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import type {
  CertificateProviderPluginInstance,
  CertificateValidationContext,
} from '../../protos/gen/envoy/extensions/transport_sockets/tls/v3/common_pb.js';
import {
  type CommonTlsContext,
  type CommonTlsContext_CertificateProviderInstance,
  UpstreamTlsContextSchema,
} from '../../protos/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { parseStringMatcher } from './route-match.js';
import type { XdsStringMatcher } from './types.js';
import { anyTypeName, fail } from './validation.js';

const UPSTREAM_TLS_CONTEXT = UpstreamTlsContextSchema.typeName;

/** A certificate provider instance of the bootstrap (A29); `certificateName` is passed on, file_watcher ignores it. */
export interface XdsCertificateProviderRef {
  readonly instanceName: string;
  readonly certificateName: string;
}

/** Where the roots that validate the server's certificate come from: a provider instance, or (A82) the system's. */
export type XdsCaCertificates =
  | { readonly kind: 'provider'; readonly provider: XdsCertificateProviderRef }
  | { readonly kind: 'system_root_certs' };

/** A cluster's client-side TLS (A29): connections to its endpoints use TLS with these. */
export interface XdsUpstreamTls {
  readonly caCertificates: XdsCaCertificates;
  /** The client's identity certificate (mTLS); absent: no client certificate is offered. */
  readonly identityCertificate: XdsCertificateProviderRef | undefined;
  /** A29 "Server Authorization": empty accepts any server certificate the roots validate. */
  readonly matchSubjectAltNames: readonly XdsStringMatcher[];
}

/** What validating a context needs beyond the resource: the bootstrap's instance names, A82's switch. */
export interface TlsContextOptions {
  readonly certificateProviderInstances: ReadonlySet<string>;
  readonly systemRootCerts: boolean;
}

/** Cluster.transport_socket (A29): its typed_config must be an UpstreamTlsContext; `at` is its field path. */
export function parseUpstreamTlsContext(
  socket: TransportSocket,
  options: TlsContextOptions,
  at = 'transport_socket',
): XdsUpstreamTls {
  const configAt = `${at}.typed_config`;
  if (socket.configType.case !== 'typedConfig') fail(configAt, 'field not present');
  const typed = socket.configType.value;
  const typeName = anyTypeName(typed, configAt);
  if (typeName !== UPSTREAM_TLS_CONTEXT) {
    fail(
      `${configAt}.type_url`,
      `unsupported transport socket type ${typeName} (expected ${UPSTREAM_TLS_CONTEXT})`,
    );
  }
  const context = decodeOrNack(UpstreamTlsContextSchema, typed.value, configAt);
  // sni, allow_renegotiation and max_session_keys are ignored (A29).
  const commonAt = `${configAt}.common_tls_context`;
  return parseCommonTlsContext(context.commonTlsContext, options, commonAt);
}

function parseCommonTlsContext(
  common: CommonTlsContext | undefined,
  options: TlsContextOptions,
  at: string,
): XdsUpstreamTls {
  if (common?.tlsParams !== undefined)
    fail(`${at}.tls_params`, 'not supported (ignoring it would weaken security)');
  if (common?.customHandshaker !== undefined) {
    fail(`${at}.custom_handshaker`, 'not supported (ignoring it would weaken security)');
  }
  const validation = validationContext(common, options, at);
  if (validation.caCertificates === undefined) {
    fail(at, 'no CA certificate provider instance configured (a secure client must validate the server)');
  }
  return {
    caCertificates: validation.caCertificates,
    identityCertificate: common && identityCertificate(common, options, at),
    matchSubjectAltNames: validation.matchSubjectAltNames,
  };
}

interface ValidationResult {
  caCertificates: XdsCaCertificates | undefined;
  matchSubjectAltNames: readonly XdsStringMatcher[];
}

/**
 * The CertificateValidationContext from validation_context, or from combined_validation_context's
 * default_validation_context; the deprecated validation_context_certificate_provider_instance (in the
 * combined context, as istiod sends it, or at the top as grpc-go also reads it) names the roots when the
 * context does not.
 */
function validationContext(
  common: CommonTlsContext | undefined,
  options: TlsContextOptions,
  at: string,
): ValidationResult {
  const type = common?.validationContextType;
  switch (type?.case) {
    case 'validationContext':
      return certificateValidationContext(type.value, options, `${at}.validation_context`);
    case 'combinedValidationContext': {
      const combinedAt = `${at}.combined_validation_context`;
      const combined = type.value;
      const result: ValidationResult =
        combined.defaultValidationContext === undefined
          ? { caCertificates: undefined, matchSubjectAltNames: [] }
          : certificateValidationContext(
              combined.defaultValidationContext,
              options,
              `${combinedAt}.default_validation_context`,
            );
      const legacy = combined.validationContextCertificateProviderInstance;
      if (result.caCertificates?.kind !== 'provider' && legacy !== undefined) {
        const legacyAt = `${combinedAt}.validation_context_certificate_provider_instance`;
        result.caCertificates = { kind: 'provider', provider: providerRef(legacy, options, legacyAt) };
      }
      return result;
    }
    case 'validationContextCertificateProviderInstance': {
      const legacyAt = `${at}.validation_context_certificate_provider_instance`;
      return {
        caCertificates: { kind: 'provider', provider: providerRef(type.value, options, legacyAt) },
        matchSubjectAltNames: [],
      };
    }
    case 'validationContextSdsSecretConfig':
      return fail(`${at}.validation_context_sds_secret_config`, 'not supported (SDS)');
    case 'validationContextCertificateProvider':
      return fail(`${at}.validation_context_certificate_provider`, 'not supported (use a provider instance)');
    case undefined:
      return { caCertificates: undefined, matchSubjectAltNames: [] };
  }
}

function certificateValidationContext(
  v: CertificateValidationContext,
  options: TlsContextOptions,
  at: string,
): ValidationResult {
  // A29: each of these would weaken the check if ignored.
  if (v.verifyCertificateSpki.length > 0) fail(`${at}.verify_certificate_spki`, 'not supported');
  if (v.verifyCertificateHash.length > 0) fail(`${at}.verify_certificate_hash`, 'not supported');
  if (v.requireSignedCertificateTimestamp !== undefined) {
    fail(`${at}.require_signed_certificate_timestamp`, 'not supported');
  }
  if (v.crl !== undefined) fail(`${at}.crl`, 'not supported');
  if (v.customValidatorConfig !== undefined) fail(`${at}.custom_validator_config`, 'not supported');
  // Not in A29, but a SAN check the client skipped would weaken it just the same.
  if (v.matchTypedSubjectAltNames.length > 0) {
    fail(`${at}.match_typed_subject_alt_names`, 'not supported (use match_subject_alt_names)');
  }
  // trusted_ca, watched_directory, allow_expired_certificate and trust_chain_verification are ignored (A29).
  const matchSubjectAltNames = v.matchSubjectAltNames.map((m, i) => {
    const matcherAt = `${at}.match_subject_alt_names[${i}]`;
    const matcher = parseStringMatcher(m, matcherAt);
    // As C-core: RE2 is matched case-sensitively, so ignore_case cannot be honoured on a regex.
    if (matcher.kind === 'safe_regex' && m.ignoreCase) {
      fail(`${matcherAt}.ignore_case`, 'not supported with safe_regex');
    }
    return matcher;
  });
  let caCertificates: XdsCaCertificates | undefined;
  if (v.caCertificateProviderInstance !== undefined) {
    const providerAt = `${at}.ca_certificate_provider_instance`;
    caCertificates = {
      kind: 'provider',
      provider: providerRef(v.caCertificateProviderInstance, options, providerAt),
    };
  } else if (v.systemRootCerts !== undefined && options.systemRootCerts) {
    // A82: only when no provider instance is named; the two never coexist in the parsed value.
    caCertificates = { kind: 'system_root_certs' };
  }
  return { caCertificates, matchSubjectAltNames };
}

/**
 * The identity certificate: tls_certificate_provider_instance, else the deprecated
 * tls_certificate_certificate_provider_instance (istiod's); A29 NACKs the other ways of configuring it.
 */
function identityCertificate(
  common: CommonTlsContext,
  options: TlsContextOptions,
  at: string,
): XdsCertificateProviderRef | undefined {
  if (common.tlsCertificateProviderInstance !== undefined) {
    return providerRef(
      common.tlsCertificateProviderInstance,
      options,
      `${at}.tls_certificate_provider_instance`,
    );
  }
  const legacy = common.tlsCertificateCertificateProviderInstance;
  if (legacy !== undefined) {
    return providerRef(legacy, options, `${at}.tls_certificate_certificate_provider_instance`);
  }
  if (common.tlsCertificates.length > 0) {
    fail(`${at}.tls_certificates`, 'not supported (use tls_certificate_provider_instance)');
  }
  if (common.tlsCertificateSdsSecretConfigs.length > 0) {
    fail(`${at}.tls_certificate_sds_secret_configs`, 'not supported (use tls_certificate_provider_instance)');
  }
  return undefined;
}

/** A29: the instance must be one of the bootstrap's `certificate_providers`. */
function providerRef(
  p: CertificateProviderPluginInstance | CommonTlsContext_CertificateProviderInstance,
  options: TlsContextOptions,
  at: string,
): XdsCertificateProviderRef {
  if (!options.certificateProviderInstances.has(p.instanceName)) {
    const known = [...options.certificateProviderInstances].map((n) => JSON.stringify(n)).join(', ');
    fail(
      `${at}.instance_name`,
      `unrecognized certificate provider instance name ${JSON.stringify(p.instanceName)} (the bootstrap's certificate_providers: ${known === '' ? 'none' : known})`,
    );
  }
  return { instanceName: p.instanceName, certificateName: p.certificateName };
}
