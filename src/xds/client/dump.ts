import { formatStatus, type Status } from '../../core/status.js';
import { shortTypeName } from '../../protos/type-urls.js';
import type { XdsNodeConfig } from './bootstrap.js';
import type { CacheEntry, XdsResourceStatus } from './cache-entry.js';

/** One cache entry as CSDS shows it (A40 "xDS Config Error State", A88 cache states). */
export interface XdsResourceDump {
  readonly typeUrl: string;
  readonly name: string;
  readonly status: XdsResourceStatus;
  /** The resource in use, if any (also in DOES_NOT_EXIST / NACKED when the error did not drop it). */
  readonly value?: unknown;
  /** The cached resource as received (the Any's value bytes), for CSDS (A40 "Expose xDS Config As Is"). */
  readonly raw?: Uint8Array;
  /** version_info and clock time (ms) of the response the value came in. */
  readonly version?: string;
  /**
   * The URI of the server the value came from (A71: with fallback, not always the first). CSDS's
   * GenericXdsConfig has no field for it; the dump and its text show it.
   */
  readonly server?: string;
  /** A47: the authority of an xdstp: name (absent for an old-style name). */
  readonly authority?: string;
  readonly lastUpdated?: number;
  /** The last data error: a NACK (with the rejected version), a deletion, or the resource timer. */
  readonly error?: { readonly details: string; readonly version: string; readonly at: number };
  /** Ambient error the watchers were told and no update has cleared yet. */
  readonly ambientError?: Status;
  readonly watchers: number;
}

/** One server's ADS stream (A47: one per distinct server, shared by the authorities using it). */
export interface XdsServerDump {
  readonly serverUri: string;
  readonly stream: 'idle' | 'connecting' | 'connected' | 'backoff' | 'closed';
  /** Why the last stream failed before any response (A57), until a response arrives. */
  readonly connectivityError?: Status;
  /** Per type: the last ACKed version_info and the nonce of the last response on the current stream. */
  readonly types: readonly { readonly typeUrl: string; readonly version: string; readonly nonce: string }[];
}

/** An authority in use (A47), with its servers in priority order and the one whose resources it uses (A71). */
export interface XdsAuthorityDump {
  /** undefined: old-style names (the top-level servers). */
  readonly name?: string;
  readonly servers: readonly string[];
  /** The URI of the server in use: the first, or the one fallen back to. */
  readonly active: string;
}

export interface XdsClientDump {
  /** The top-level server in use for old-style names (the first server of the bootstrap until fallback). */
  readonly serverUri: string;
  /** Clock time (ms) of the dump, to read the other times against. */
  readonly now: number;
  readonly node: XdsNodeConfig;
  readonly stream: 'idle' | 'connecting' | 'connected' | 'backoff' | 'closed';
  /** Why the last stream failed before any response (A57), until a response arrives. */
  readonly connectivityError?: Status;
  /** Per type: the last ACKed version_info and the nonce of the last response on the current stream. */
  readonly types: readonly { readonly typeUrl: string; readonly version: string; readonly nonce: string }[];
  readonly resources: readonly XdsResourceDump[];
  /** Every server with a stream now (A47, A71). */
  readonly servers: readonly XdsServerDump[];
  readonly authorities: readonly XdsAuthorityDump[];
}

export function dumpEntry(entry: CacheEntry<unknown>): XdsResourceDump {
  return {
    typeUrl: entry.type.typeUrl,
    name: entry.name,
    status: entry.status,
    ...(entry.hasValue && {
      value: entry.value,
      raw: entry.bytes,
      version: entry.version,
      lastUpdated: entry.updatedAt,
    }),
    ...(entry.hasValue && entry.source?.serverUri !== undefined && { server: entry.source.serverUri }),
    ...(entry.error && {
      error: { details: entry.error.status.details, version: entry.error.version, at: entry.error.at },
    }),
    ...(entry.ambient && { ambientError: entry.ambient }),
    watchers: entry.watches.size,
  };
}

/** The dump as lines a person reads: one per resource, errors with their version and time. */
export function formatXdsClientDump(dump: XdsClientDump): string {
  const lines = [
    `xDS server ${dump.serverUri} (node ID "${dump.node.id}"): stream ${dump.stream} at ${dump.now} ms` +
      (dump.connectivityError ? ` (${formatStatus(dump.connectivityError)})` : ''),
  ];
  for (const t of dump.types) {
    lines.push(`  ${shortTypeName(t.typeUrl)}: version "${t.version}", nonce "${t.nonce}"`);
  }
  for (const s of dump.servers) {
    if (s.serverUri === dump.serverUri) continue;
    lines.push(
      `xDS server ${s.serverUri}: stream ${s.stream}` +
        (s.connectivityError ? ` (${formatStatus(s.connectivityError)})` : ''),
    );
  }
  for (const a of dump.authorities) {
    if (a.servers.length > 1 || a.name !== undefined) {
      lines.push(
        `  authority ${a.name === undefined ? '(old-style names)' : `"${a.name}"`}: using ${a.active} of [${a.servers.join(', ')}]`,
      );
    }
  }
  for (const r of dump.resources) {
    let line = `  ${shortTypeName(r.typeUrl)} "${r.name}" ${r.status}`;
    if (r.version !== undefined) line += ` version "${r.version}" at ${r.lastUpdated} ms`;
    if (r.server !== undefined && r.server !== dump.serverUri) line += ` from ${r.server}`;
    if (r.error) line += `; error at ${r.error.at} ms (version "${r.error.version}"): ${r.error.details}`;
    if (r.ambientError) line += `; ambient: ${formatStatus(r.ambientError)}`;
    lines.push(line);
  }
  return lines.join('\n');
}
