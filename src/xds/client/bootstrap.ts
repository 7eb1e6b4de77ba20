import { readFileSync } from 'node:fs';
import {
  ConfigError,
  ConfigReader,
  childPath,
  envFlag,
  expectArray,
  expectObject,
} from '../../core/index.js';
import {
  type CertificateProviderInstance,
  type FileWatcherConfig,
  parseCertificateProviders,
  parseFileWatcherConfig,
} from './certificate-providers.js';
import { percentEncodeAuthority } from './xdstp-name.js';

// gRFC A27 "XdsClient and Bootstrap File"; server features from A53 / A88; TLS creds as gRFC A65 describes;
// certificate providers as gRFC A29 describes; authorities and listener name templates as gRFC A47 describes,
// each authority's servers in priority order (A71) with A95's `fallback_on_reachability_only`.

export const XDS_BOOTSTRAP_FILE_ENV = 'GRPC_XDS_BOOTSTRAP';
export const XDS_BOOTSTRAP_CONFIG_ENV = 'GRPC_XDS_BOOTSTRAP_CONFIG';
/**
 * A47: `false` ignores `authorities` and the listener name template's xdstp: meaning, and reads every resource
 * name as old-style. On by default, as in grpc-go and @grpc/grpc-js-xds today.
 */
export const XDS_FEDERATION_ENV = 'GRPC_EXPERIMENTAL_XDS_FEDERATION';

/** Channel credentials for the xDS server: the first entry of `channel_creds` whose type we support. */
export type XdsChannelCredentials =
  | { readonly type: 'insecure' }
  | ({
      readonly type: 'tls';
      /** A65: PEM files, re-read every refreshIntervalMs; no CA means the system roots, no cert/key no client certificate. */
    } & FileWatcherConfig);

export interface XdsServerConfig {
  readonly serverUri: string;
  readonly channelCredentials: XdsChannelCredentials;
  /** Every string of `server_features`, as given. */
  readonly serverFeatures: readonly string[];
  /** A53: a LDS/CDS resource missing from a response keeps serving (A88 deprecates it; see XdsDataErrorMode). */
  readonly ignoreResourceDeletion: boolean;
  /** A88: a data error (NACK, deletion) drops a cached resource instead of keeping it. */
  readonly failOnDataErrors: boolean;
  /** A88: the resource timer lasts 30 s and reports UNAVAILABLE (TIMEOUT) instead of does-not-exist. */
  readonly resourceTimerIsTransientError: boolean;
}

export interface XdsLocality {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/** The bootstrap's `node` (envoy.config.core.v3.Node); user agent and client features are added by the client. */
export interface XdsNodeConfig {
  readonly id: string;
  readonly cluster: string;
  readonly locality?: XdsLocality;
  /** proto3 JSON of a google.protobuf.Struct. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** One entry of the bootstrap's `authorities` (A47). */
export interface XdsAuthorityConfig {
  readonly name: string;
  /** In priority order (A71): the entry's own `xds_servers`, or the top-level ones when it lists none. */
  readonly xdsServers: readonly XdsServerConfig[];
  /** The LDS name of an `xds://<name>/…` target (default `xdstp://<name>/envoy.config.listener.v3.Listener/%s`). */
  readonly clientListenerResourceNameTemplate: string;
  /** A95: fall back whenever the server in use is unreachable, even with every watched resource cached. */
  readonly fallbackOnReachabilityOnly: boolean;
}

export interface XdsBootstrap {
  /** The servers of old-style names (and of authorities that list none), in priority order (A71). */
  readonly xdsServers: readonly XdsServerConfig[];
  readonly node: XdsNodeConfig;
  /** The LDS name of a target is this with "%s" replaced by the target's name (A47; default "%s"). */
  readonly clientDefaultListenerResourceNameTemplate: string;
  /** A47 `authorities`, by name (empty when federation is off). */
  readonly authorities: ReadonlyMap<string, XdsAuthorityConfig>;
  /** A29 `certificate_providers`: the instances a Cluster's UpstreamTlsContext may name. */
  readonly certificateProviders: ReadonlyMap<string, CertificateProviderInstance>;
}

/**
 * The bootstrap file itself (A27), as JSON: what `parseBootstrap` reads into an XdsBootstrap, and what the
 * control plane's `bootstrapFor` writes. Unknown fields are allowed and ignored.
 */
export interface XdsBootstrapJson {
  readonly xds_servers: readonly {
    readonly server_uri: string;
    /** In order of preference: the first whose type is supported ("insecure", "tls") is used. */
    readonly channel_creds: readonly {
      readonly type: string;
      /** For "tls": PEM files (A65's names). */
      readonly config?: FileWatcherConfigJson;
    }[];
    readonly server_features?: readonly string[];
  }[];
  readonly node?: {
    readonly id?: string;
    readonly cluster?: string;
    readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string };
    /** A google.protobuf.Struct in proto3 JSON. */
    readonly metadata?: Readonly<Record<string, unknown>>;
  };
  /** A47's template (default "%s"); an xdstp: one names its authority, which `authorities` must list. */
  readonly client_default_listener_resource_name_template?: string;
  /** A47: authority name → its servers (default: the top-level ones) and its listener name template. */
  readonly authorities?: Readonly<
    Record<
      string,
      {
        readonly xds_servers?: XdsBootstrapJson['xds_servers'];
        readonly client_listener_resource_name_template?: string;
        /** A95. */
        readonly fallback_on_reachability_only?: boolean;
      }
    >
  >;
  /** A29: instance name → a plugin (only "file_watcher") and its config. */
  readonly certificate_providers?: Readonly<
    Record<string, { readonly plugin_name: string; readonly config?: FileWatcherConfigJson }>
  >;
}

/** The file_watcher plugin's config (A29), also A65's `tls` channel creds config. */
export interface FileWatcherConfigJson {
  readonly ca_certificate_file?: string;
  readonly certificate_file?: string;
  readonly private_key_file?: string;
  /** A google.protobuf.Duration in proto3 JSON ("600s", the default). */
  readonly refresh_interval?: string;
}

const SUPPORTED_CREDENTIALS = ['insecure', 'tls'];

/**
 * Validates a bootstrap object (the parsed JSON, shaped as XdsBootstrapJson). Unknown fields are ignored, as A27 asks; every problem
 * throws a ConfigError naming its JSON path.
 */
export function parseBootstrap(json: unknown, federation = envFlag(XDS_FEDERATION_ENV, true)): XdsBootstrap {
  const root = new ConfigReader(json, '$');
  const servers = root.required('xds_servers');
  const serverList = expectArray(servers.value, servers.path);
  if (serverList.length === 0) throw new ConfigError(servers.path, 'must list at least one xDS server');
  const xdsServers = serverList.map((s, i) => parseServer(s, childPath(servers.path, i)));
  const clientDefaultListenerResourceNameTemplate = listenerNameTemplate(root);
  const authorities = federation ? parseAuthorities(root, xdsServers) : new Map<string, XdsAuthorityConfig>();
  const nodeField = root.field('node');
  const providers = root.field('certificate_providers');
  return {
    clientDefaultListenerResourceNameTemplate,
    certificateProviders: providers ? parseCertificateProviders(providers.value, providers.path) : new Map(),
    xdsServers,
    node: nodeField ? parseNode(nodeField.value, nodeField.path) : { id: '', cluster: '' },
    authorities,
  };
}

/**
 * A47 "Server Channel Map": servers with the same URI, channel credentials and known server features are one
 * server (one ADS stream), whichever authorities list them.
 */
export function xdsServerKey(server: XdsServerConfig): string {
  const known = server.serverFeatures.filter((f) => KNOWN_SERVER_FEATURES.has(f)).sort();
  return JSON.stringify([server.serverUri, server.channelCredentials, [...new Set(known)]]);
}

const KNOWN_SERVER_FEATURES = new Set([
  'ignore_resource_deletion',
  'fail_on_data_errors',
  'resource_timer_is_transient_error',
]);

/**
 * The bootstrap from, in this order: the object given, the file named by GRPC_XDS_BOOTSTRAP, or the JSON in
 * GRPC_XDS_BOOTSTRAP_CONFIG. Throws a ConfigError (path prefixed with where the bootstrap came from).
 */
export function loadBootstrap(given?: unknown, env: NodeJS.ProcessEnv = process.env): XdsBootstrap {
  if (given !== undefined) return parseBootstrap(given);
  const file = env[XDS_BOOTSTRAP_FILE_ENV];
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(
        `${XDS_BOOTSTRAP_FILE_ENV}=${file}`,
        `cannot read the file: ${(e as Error).message}`,
      );
    }
    return parseBootstrapText(text, `${XDS_BOOTSTRAP_FILE_ENV}=${file}`);
  }
  const inline = env[XDS_BOOTSTRAP_CONFIG_ENV];
  if (inline) return parseBootstrapText(inline, XDS_BOOTSTRAP_CONFIG_ENV);
  throw new ConfigError(
    '$',
    `no xDS bootstrap: set ${XDS_BOOTSTRAP_FILE_ENV} (a file) or ${XDS_BOOTSTRAP_CONFIG_ENV} (JSON), or pass one`,
  );
}

function parseBootstrapText(text: string, source: string): XdsBootstrap {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(source, `not valid JSON: ${(e as Error).message}`);
  }
  try {
    return parseBootstrap(json);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${source}: ${e.path}`, e.problem);
    throw e;
  }
}

function parseServer(value: unknown, path: string): XdsServerConfig {
  const server = new ConfigReader(value, path);
  const uriField = server.required('server_uri');
  if (typeof uriField.value !== 'string' || uriField.value === '') {
    throw new ConfigError(uriField.path, 'expected a non-empty string');
  }
  const creds = server.required('channel_creds');
  const features = server.field('server_features');
  const serverFeatures = features
    ? expectArray(features.value, features.path).map((f, i) => {
        if (typeof f !== 'string') throw new ConfigError(childPath(features.path, i), 'expected a string');
        return f;
      })
    : [];
  return {
    serverUri: uriField.value,
    channelCredentials: parseChannelCredentials(creds.value, creds.path),
    serverFeatures,
    ignoreResourceDeletion: serverFeatures.includes('ignore_resource_deletion'),
    failOnDataErrors: serverFeatures.includes('fail_on_data_errors'),
    resourceTimerIsTransientError: serverFeatures.includes('resource_timer_is_transient_error'),
  };
}

/** A27: the client stops at the first type it supports; at least one must be supported. */
function parseChannelCredentials(value: unknown, path: string): XdsChannelCredentials {
  const list = expectArray(value, path);
  for (const [i, entry] of list.entries()) {
    const entryPath = childPath(path, i);
    const reader = new ConfigReader(entry, entryPath);
    const typeField = reader.required('type');
    if (typeof typeField.value !== 'string') throw new ConfigError(typeField.path, 'expected a string');
    if (typeField.value === 'insecure') return { type: 'insecure' };
    if (typeField.value === 'tls') {
      const config = reader.optionalObject('config') ?? new ConfigReader({}, childPath(entryPath, 'config'));
      return parseTlsConfig(config);
    }
  }
  const seen = list.map((e) => (typeof e === 'object' && e !== null ? (e as { type?: unknown }).type : e));
  throw new ConfigError(
    path,
    `no supported channel credentials (supported: ${SUPPORTED_CREDENTIALS.join(', ')}; given: ${JSON.stringify(seen)})`,
  );
}

/** A65: the file_watcher config, where neither certificate_file nor ca_certificate_file is required. */
function parseTlsConfig(config: ConfigReader): XdsChannelCredentials {
  return { type: 'tls', ...parseFileWatcherConfig(config, false) };
}

function parseNode(value: unknown, path: string): XdsNodeConfig {
  const node = new ConfigReader(value, path);
  const localityReader = node.optionalObject('locality');
  const metadata = node.field('metadata');
  return {
    id: node.optionalString('id') ?? '',
    cluster: node.optionalString('cluster') ?? '',
    ...(localityReader && {
      locality: {
        region: localityReader.optionalString('region') ?? '',
        zone: localityReader.optionalString('zone') ?? '',
        subZone: localityReader.optionalString('subZone') ?? '',
      },
    }),
    ...(metadata && { metadata: expectObject(metadata.value, metadata.path) }),
  };
}

/** A47: the template of targets without an authority; "%s" may be absent (every target then names one listener). */
function listenerNameTemplate(root: ConfigReader): string {
  const template = root.field('client_default_listener_resource_name_template');
  if (!template) return '%s';
  if (typeof template.value !== 'string') throw new ConfigError(template.path, 'expected a string');
  return template.value;
}

/** A47 `authorities`; an entry without servers (absent or empty) uses the top-level ones. */
function parseAuthorities(
  root: ConfigReader,
  topLevel: readonly XdsServerConfig[],
): Map<string, XdsAuthorityConfig> {
  const authorities = new Map<string, XdsAuthorityConfig>();
  const field = root.field('authorities');
  if (!field) return authorities;
  for (const [name, value] of Object.entries(expectObject(field.value, field.path))) {
    const path = childPath(field.path, name);
    const entry = new ConfigReader(value, path);
    const servers = entry.field('xds_servers');
    const own = servers
      ? expectArray(servers.value, servers.path).map((s, i) => parseServer(s, childPath(servers.path, i)))
      : [];
    const template = entry.field('client_listener_resource_name_template');
    let clientListenerResourceNameTemplate = `xdstp://${percentEncodeAuthority(name)}/envoy.config.listener.v3.Listener/%s`;
    if (template) {
      if (typeof template.value !== 'string') throw new ConfigError(template.path, 'expected a string');
      // A47: "Must start with xdstp://<authority_name>/"; anything else is a parsing error.
      if (!template.value.startsWith(`xdstp://${name}/`)) {
        throw new ConfigError(template.path, `must start with "xdstp://${name}/" (gRFC A47)`);
      }
      clientListenerResourceNameTemplate = template.value;
    }
    const reachability = entry.field('fallback_on_reachability_only');
    if (reachability && typeof reachability.value !== 'boolean') {
      throw new ConfigError(reachability.path, 'expected a boolean');
    }
    authorities.set(name, {
      name,
      xdsServers: own.length > 0 ? own : topLevel,
      clientListenerResourceNameTemplate,
      fallbackOnReachabilityOnly: reachability?.value === true,
    });
  }
  return authorities;
}
