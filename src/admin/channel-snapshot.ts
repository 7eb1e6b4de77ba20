import type { ConnectivityState, PolicyFact, PolicyNode, Status } from '../core/index.js';
import type { RegisteredChannel } from '../grpc-js/channel-registry.js';
import type { InstrumentValues } from '../metrics/index.js';
import { shortTypeName } from '../protos/type-urls.js';
import type { XdsClientDump } from '../xds/client/dump.js';
import type { XdsConfig } from '../xds/xds-config.js';
import { childPath, type PickWindow, subchannelKey } from './pick-shares.js';

// The JSON the live view serves (docs/admin.md documents it): plain data, times as ISO strings.

/** A channel as the list shows it. */
export interface ChannelSummary {
  readonly id: string;
  /** The channel's target, or null when its resolver is grpc-js's (which does not tell LB policies). */
  readonly target: string | null;
  readonly createdAt: string;
  readonly policy: string | null;
  readonly state: ConnectivityState | null;
}

export interface SubchannelView {
  readonly address: string;
  readonly state: ConnectivityState;
  /** Picks since the subchannel was made (absent where the channel does not count them). */
  readonly picks?: number;
  /** This subchannel's part of the channel's picks in the latest window (absent when there were none). */
  readonly recentShare?: number;
}

export interface PolicyView {
  readonly policy: string;
  readonly state: ConnectivityState;
  readonly status?: Status;
  readonly facts?: Readonly<Record<string, PolicyFact>>;
  readonly children?: readonly {
    readonly name: string;
    readonly facts?: Readonly<Record<string, PolicyFact>>;
    readonly node: PolicyView;
  }[];
  readonly subchannels?: readonly SubchannelView[];
}

/** One xDS resource as CSDS reports it (A40), with the server the channel's xDS client talks to. */
export interface XdsResourceView {
  readonly type: string;
  readonly name: string;
  readonly status: string;
  readonly version: string | null;
  /** The server the resource in use came from (A71: with fallback, not always the first). */
  readonly server: string | null;
  /** A47: the authority of an xdstp: name (null for an old-style name). */
  readonly authority: string | null;
  readonly updatedAt: string | null;
  /** The last NACK (its version and reason), deletion or timeout. */
  readonly error: { readonly details: string; readonly version: string; readonly at: string } | null;
  /** A88: the stream or server error the resource's watchers were told, not cleared yet. */
  readonly ambientError: Status | null;
  /** Whether the channel's latest XdsConfig (A74) uses it: the client's other resources are other channels'. */
  readonly usedByChannel: boolean;
}

export interface XdsView {
  /** The server in use for old-style names (the client's, shared by every channel of its bootstrap). */
  readonly server: string;
  readonly stream: string;
  readonly connectivityError: Status | null;
  /** Every server the client has a stream to (A47, A71), with the stream's state. */
  readonly servers: readonly {
    readonly uri: string;
    readonly stream: string;
    readonly connectivityError: Status | null;
  }[];
  readonly types: readonly { readonly type: string; readonly version: string; readonly nonce: string }[];
  readonly resources: readonly XdsResourceView[];
}

/**
 * The channel's metrics (A78, A91, A94, the XdsClient's) as lbtree records them: every enabled instrument with
 * its OpenTelemetry name, type and unit, and per label set a counter's sum, a gauge's last value or a
 * histogram's count, sum and buckets. The same values a MeterProvider given to the channel receives.
 */
export interface MetricsView {
  /** False when no metrics options apply to the channel (then nothing is recorded). */
  readonly recording: boolean;
  readonly instruments: readonly InstrumentValues[];
}

/** The picks the adapter counts per subchannel handle, which the recent shares are measured from. */
export interface PicksView {
  /** Picks of the subchannels in the tree since each was made. */
  readonly total: number;
  readonly inWindow: number;
  readonly window: { readonly from: string; readonly to: string };
}

export interface ChannelSnapshot extends ChannelSummary {
  readonly at: string;
  readonly tree: PolicyView | null;
  /**
   * While grpc-js switches the channel to another root policy (a service config naming another policy): the
   * new root's tree, which serves from its first state that is not CONNECTING; otherwise null.
   */
  readonly pending: PolicyView | null;
  readonly xds: XdsView | null;
  readonly picks: PicksView;
  readonly metrics: MetricsView;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function summarize(channel: RegisteredChannel, tree: PolicyNode | undefined): ChannelSummary {
  return {
    id: channel.id,
    target: channel.target ?? null,
    createdAt: iso(channel.createdAt),
    policy: tree?.policy ?? null,
    state: tree?.state ?? null,
  };
}

export function snapshotOf(
  channel: RegisteredChannel,
  tree: PolicyNode | undefined,
  window: PickWindow,
  now: number,
  pending?: PolicyNode,
): ChannelSnapshot {
  const counts = { picks: 0 };
  const view = tree === undefined ? null : viewOf(tree, '', window.shares, counts);
  // The pending root serves no call yet: its subchannels' picks are not the channel's.
  const pendingView = pending === undefined ? null : viewOf(pending, '', new Map(), { picks: 0 });
  let xds: XdsView | null = null;
  try {
    const dump = channel.xdsDump();
    if (dump !== undefined) xds = xdsViewOf(dump, now, resourceKeys(channel.xdsConfig()));
  } catch (e) {
    // The page still shows the tree; the xDS area says why it is empty.
    xds = {
      server: '',
      stream: 'unknown',
      connectivityError: { code: 2, details: `the xDS client could not be read: ${(e as Error).message}` },
      servers: [],
      types: [],
      resources: [],
    };
  }
  return {
    ...summarize(channel, tree),
    at: iso(now),
    tree: view,
    pending: pendingView,
    xds,
    picks: {
      total: counts.picks,
      inWindow: window.picks,
      window: { from: iso(window.from), to: iso(window.to) },
    },
    metrics: metricsViewOf(channel),
  };
}

/** The channel's metric values; a channel whose values cannot be read shows as recording nothing. */
function metricsViewOf(channel: RegisteredChannel): MetricsView {
  let instruments: readonly InstrumentValues[] | undefined;
  try {
    instruments = channel.metrics?.();
  } catch {
    instruments = undefined;
  }
  return { recording: instruments !== undefined, instruments: instruments ?? [] };
}

interface Counts {
  picks: number;
}

function viewOf(
  node: PolicyNode,
  path: string,
  shares: ReadonlyMap<string, number>,
  counts: Counts,
): PolicyView {
  const subchannels = node.subchannels?.map((s): SubchannelView => {
    counts.picks += s.picks ?? 0;
    const share = shares.get(subchannelKey(path, s.address));
    return share === undefined ? { ...s } : { ...s, recentShare: share };
  });
  const children = node.children?.map((c) => ({
    name: c.name,
    ...(c.facts !== undefined && { facts: c.facts }),
    node: viewOf(c.node, childPath(path, c.name), shares, counts),
  }));
  return {
    policy: node.policy,
    state: node.state,
    ...(node.status !== undefined && { status: node.status }),
    ...(node.facts !== undefined && { facts: node.facts }),
    ...(children !== undefined && { children }),
    ...(subchannels !== undefined && { subchannels }),
  };
}

/**
 * `Type/name` of every resource an XdsConfig was built from: the Listener, the RouteConfiguration (when not
 * inline), every Cluster (aggregate ones and their leaves) and the ClusterLoadAssignment of each EDS cluster.
 */
export function resourceKeys(config: XdsConfig | undefined): ReadonlySet<string> {
  const keys = new Set<string>();
  if (config === undefined) return keys;
  keys.add(`Listener/${config.listener.name}`);
  const routes = config.listener.routeSource;
  if (routes.kind === 'rds') keys.add(`RouteConfiguration/${routes.routeConfigName}`);
  for (const [name, entry] of config.clusters) {
    keys.add(`Cluster/${name}`);
    const discovery = entry.ok ? entry.value.cluster.discovery : undefined;
    if (discovery?.kind === 'eds') keys.add(`ClusterLoadAssignment/${discovery.edsServiceName}`);
  }
  return keys;
}

/** The dump's clock times as wall-clock ISO strings (the dump's `now` is the wall time `now`). */
export function xdsViewOf(dump: XdsClientDump, now: number, used: ReadonlySet<string> = new Set()): XdsView {
  const wall = (clockMs: number) => iso(now - (dump.now - clockMs));
  return {
    server: dump.serverUri,
    stream: dump.stream,
    connectivityError: dump.connectivityError ?? null,
    servers: dump.servers.map((x) => ({
      uri: x.serverUri,
      stream: x.stream,
      connectivityError: x.connectivityError ?? null,
    })),
    types: dump.types.map((t) => ({ type: shortTypeName(t.typeUrl), version: t.version, nonce: t.nonce })),
    resources: dump.resources.map((r) => ({
      type: shortTypeName(r.typeUrl),
      name: r.name,
      usedByChannel: used.has(`${shortTypeName(r.typeUrl)}/${r.name}`),
      status: r.status,
      version: r.version ?? null,
      server: r.server ?? null,
      authority: r.authority ?? null,
      updatedAt: r.lastUpdated === undefined ? null : wall(r.lastUpdated),
      error: r.error ? { details: r.error.details, version: r.error.version, at: wall(r.error.at) } : null,
      ambientError: r.ambientError ?? null,
    })),
  };
}
