// The subchannel options that carry xDS transport security (A29) from lbtree's tree to XdsChannelCredentials,
// which grpc-js calls with a subchannel's options when it makes the subchannel's connector.

/** The cluster's ClusterTransportSecurity (src/xds/transport-security.ts), set per subchannel by the helper. */
export const XDS_TRANSPORT_SECURITY_OPTION = 'lbtree.xds_transport_security';
/** The channel's xDS client's CertificateProviderStore, set by the xds resolver for the whole channel. */
export const XDS_CERTIFICATE_PROVIDERS_OPTION = 'lbtree.xds_certificate_providers';
