import {
  ConfigError,
  ConfigReader,
  childPath,
  envFlag,
  expectDurationMs,
  expectObject,
} from '../../core/index.js';

// gRFC A29 "Certificate Provider Plugin Framework": the bootstrap's `certificate_providers` map, whose one
// plugin is `file_watcher`; gRFC A65 reads the same file names for the xDS server's `tls` channel creds.

/** The one certificate provider plugin gRPC defines (A29 "`file_watcher` Certificate Provider"). */
export const FILE_WATCHER_PLUGIN = 'file_watcher';

/** How often the files are read when `refresh_interval` is unset: A65's "600s" (C-core and grpc-go agree). */
export const DEFAULT_REFRESH_INTERVAL_MS = 600_000;

/**
 * gRFC A87: `true` reads the file_watcher's `spiffe_trust_bundle_map_file`; unset or anything else leaves the
 * field unread (A87's default, as in grpc-go).
 */
export const XDS_MTLS_SPIFFE_ENV = 'GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE';

/** PEM files read again every `refreshIntervalMs`. */
export interface FileWatcherConfig {
  /** The identity certificate chain; given together with `privateKeyFile`. */
  readonly certificateFile?: string;
  readonly privateKeyFile?: string;
  /** The root certificates (trust bundle). */
  readonly caCertificateFile?: string;
  /**
   * A87: the SPIFFE trust bundle map (JSON), read instead of `caCertificateFile` when set; only read when
   * GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE is "true".
   */
  readonly spiffeTrustBundleMapFile?: string;
  readonly refreshIntervalMs: number;
}

/** One entry of `certificate_providers`: a plugin and its config. */
export interface CertificateProviderInstance {
  readonly pluginName: typeof FILE_WATCHER_PLUGIN;
  readonly config: FileWatcherConfig;
}

/**
 * `certificate_providers` (A29): instance name → `{ plugin_name, config }`. A plugin other than file_watcher
 * is rejected, as C-core rejects an unregistered plugin: a cluster naming that instance could never connect.
 */
export function parseCertificateProviders(
  value: unknown,
  path: string,
  spiffe = envFlag(XDS_MTLS_SPIFFE_ENV, false),
): ReadonlyMap<string, CertificateProviderInstance> {
  const instances = new Map<string, CertificateProviderInstance>();
  for (const [name, entry] of Object.entries(expectObject(value, path))) {
    const entryPath = childPath(path, name);
    const reader = new ConfigReader(entry, entryPath);
    const plugin = reader.required('plugin_name');
    if (plugin.value !== FILE_WATCHER_PLUGIN) {
      throw new ConfigError(
        plugin.path,
        `unsupported certificate provider plugin ${JSON.stringify(plugin.value)} (supported: ${FILE_WATCHER_PLUGIN})`,
      );
    }
    const config = reader.optionalObject('config') ?? new ConfigReader({}, childPath(entryPath, 'config'));
    instances.set(name, {
      pluginName: FILE_WATCHER_PLUGIN,
      config: parseFileWatcherConfig(config, true, spiffe),
    });
  }
  return instances;
}

/**
 * The file_watcher config (A29), also A65's `tls` channel creds config. certificate_file and private_key_file
 * go together; the plugin needs at least one of certificate_file and ca_certificate_file (or, with `spiffe`,
 * A87's spiffe_trust_bundle_map_file), where A65's creds may have neither (`requireAFile` false: system roots,
 * no client certificate). Without `spiffe`, spiffe_trust_bundle_map_file is not read (A87).
 */
export function parseFileWatcherConfig(
  config: ConfigReader,
  requireAFile: boolean,
  spiffe = false,
): FileWatcherConfig {
  const certificateFile = nonEmpty(config, 'certificate_file');
  const privateKeyFile = nonEmpty(config, 'private_key_file');
  const caCertificateFile = nonEmpty(config, 'ca_certificate_file');
  const spiffeTrustBundleMapFile = spiffe ? nonEmpty(config, 'spiffe_trust_bundle_map_file') : undefined;
  if ((certificateFile === undefined) !== (privateKeyFile === undefined)) {
    throw new ConfigError(config.path, 'certificate_file and private_key_file must be given together');
  }
  if (
    requireAFile &&
    certificateFile === undefined &&
    caCertificateFile === undefined &&
    spiffeTrustBundleMapFile === undefined
  ) {
    throw new ConfigError(
      config.path,
      `at least one of certificate_file and ca_certificate_file${spiffe ? ' (or spiffe_trust_bundle_map_file)' : ''} is required`,
    );
  }
  const interval = config.field('refresh_interval');
  const refreshIntervalMs =
    interval === undefined ? DEFAULT_REFRESH_INTERVAL_MS : expectDurationMs(interval.value, interval.path);
  if (refreshIntervalMs <= 0) throw new ConfigError(interval!.path, 'must be greater than 0s');
  return {
    ...(certificateFile !== undefined && { certificateFile }),
    ...(privateKeyFile !== undefined && { privateKeyFile }),
    ...(caCertificateFile !== undefined && { caCertificateFile }),
    ...(spiffeTrustBundleMapFile !== undefined && { spiffeTrustBundleMapFile }),
    refreshIntervalMs,
  };
}

function nonEmpty(config: ConfigReader, name: string): string | undefined {
  const value = config.optionalString(name);
  if (value === '') throw new ConfigError(childPath(config.path, name), 'must not be empty');
  return value;
}
