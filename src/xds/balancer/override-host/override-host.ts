// xds_override_host_experimental (gRFC A55 "LB Policy for Stateful Session Affinity", with A61 "Changes to
// Stateful Session Affinity" and A74's clusterName): below xds_cluster_impl, above the cluster's
// endpoint-picking policy. It keeps the address map, hands its child the endpoints without the DRAINING ones,
// keeps a DRAINING endpoint's connection when the cluster lets cookies reach DRAINING endpoints, and wraps the
// child's picker with the cookie override.

import {
  type Address,
  type Attributes,
  addressKey,
  type CancelTimer,
  CONNECTING,
  type ConnectivityState,
  childHelper,
  type Endpoint,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  queuePicker,
  type Status,
  type SubchannelStateWatcher,
  unwatchSubchannelState,
  watchSubchannelState,
} from '../../../core/index.js';
import { ChildPolicy } from '../../../policies/shared/child-policy.js';
import { XDS_HEALTH_STATUS } from '../../attribute-keys.js';
import type { XdsHealthStatus } from '../../resources/cluster-load-assignment.js';
import { xdsClustersOf } from '../../xds-config.js';
import { AddressEntry, OverrideHostSubchannel, type OverrideHostSubchannelOwner } from './address-map.js';
import { type OverrideHostConfig, parseOverrideHostConfig, XDS_OVERRIDE_HOST } from './config.js';
import { OverrideHostPicker, type OverridePickHooks } from './picker.js';

export class OverrideHostLb
  implements
    LoadBalancer<OverrideHostConfig>,
    OverrideHostSubchannelOwner,
    SubchannelStateWatcher,
    OverridePickHooks
{
  private readonly child: ChildPolicy;
  private readonly entries = new Map<string, AddressEntry>();
  /** How many address map updates ran: an entry's stamp says which one last named it. */
  private mapUpdates = 0;
  private overridable: ReadonlySet<XdsHealthStatus> = new Set();
  private childState: ConnectivityState = CONNECTING;
  private childStatus: Status = OK_STATUS;
  private childPicker: Picker = queuePicker;
  private hasChildPicker = false;
  /** A pick queued for an override target since the last picker was reported. */
  private overridePending = false;
  private readonly toConnect = new Set<AddressEntry>();
  private readonly toCreate = new Set<AddressEntry>();
  private soonTimer: CancelTimer | null = null;
  private destroyed = false;
  /** While an update runs, child reports are only recorded; the update reports once at its end. */
  private updating = false;

  constructor(
    private readonly helper: Helper,
    registry: PolicyLookup,
  ) {
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        createSubchannel: (address, attributes) => {
          const wrapper = new OverrideHostSubchannel(helper.createSubchannel(address, attributes), this);
          this.adopt(wrapper);
          return wrapper;
        },
        updateState: (state, s, picker) => {
          if (this.destroyed) return;
          this.childState = state;
          this.childStatus = s;
          this.childPicker = picker;
          this.hasChildPicker = true;
          if (!this.updating) this.report();
        },
      }),
      registry,
    );
  }

  /** The live view (A55): the addresses it tracks, the statuses it lets sessions override, and the child. */
  describe(): PolicyNode {
    const child = this.child.describe(this.childState, this.childStatus);
    return {
      policy: XDS_OVERRIDE_HOST,
      state: child.state,
      ...(child.status !== undefined && { status: child.status }),
      facts: { addresses: this.entries.size, overridableStatuses: [...this.overridable] },
      children: [{ name: 'child', node: child }],
    };
  }

  update(update: LbUpdate<OverrideHostConfig>): boolean {
    if (this.destroyed) return false;
    const config = update.config;
    // A74: the cluster's override_host_status comes from the XdsConfig; without one, from the config (A55).
    const entry =
      config.clusterName === undefined
        ? undefined
        : xdsClustersOf(update.attributes)?.clusters.get(config.clusterName);
    const statuses = entry?.ok ? entry.value.cluster.overrideHostStatus : config.overrideHostStatus;
    this.overridable = new Set(statuses);
    let endpoints = update.endpoints;
    if (endpoints.ok) {
      this.updateAddressMap(endpoints.value);
      endpoints = { ok: true, value: withoutDraining(endpoints.value) };
    } else {
      this.releaseUnkeepable();
    }
    const accepted = this.child.update(
      config.childPolicy,
      endpoints,
      update.attributes,
      update.resolutionNote,
    );
    if (this.hasChildPicker) this.report();
    return accepted;
  }

  /**
   * A55 / A61 address map update: one entry per address, with the endpoint's health status and the cookie
   * address list for that address (it first, then the endpoint's others in order). A DRAINING endpoint whose
   * status cannot be overridden is left out, as gRPC does. Entries of addresses no longer present are
   * removed, and a connection the policy held for them is released.
   *
   * The map is updated in place (a big EDS push re-sends tens of thousands of addresses and changes a few):
   * a kept address keeps its entry and map slot, each entry is stamped with the update that named it, and
   * one sweep drops the entries no stamp reached.
   */
  private updateAddressMap(endpoints: readonly Endpoint[]): void {
    const entries = this.entries;
    const stamp = ++this.mapUpdates;
    const sizeBefore = entries.size;
    let kept = 0;
    const drainingKept = this.overridable.has('DRAINING');
    // Endpoints of a locality share one Attributes object: their health status is read once.
    let lastAttributes: Attributes | null = null;
    let health: XdsHealthStatus = 'UNKNOWN';
    for (let n = 0; n < endpoints.length; n++) {
      const e = endpoints[n]!;
      if (e.attributes !== lastAttributes) {
        lastAttributes = e.attributes;
        health = e.attributes.get(XDS_HEALTH_STATUS) ?? 'UNKNOWN';
      }
      if (health === 'DRAINING' && !drainingKept) continue;
      const addresses = e.addresses;
      if (addresses.length === 1) {
        // The usual endpoint (tens of thousands in a big EDS update): its list is its one key, no arrays.
        const key = addressKey(addresses[0]!);
        kept += this.stampEntry(stamp, key, addresses[0]!, health, key, e.attributes);
        continue;
      }
      const keys = addresses.map(addressKey);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const list = [key, ...keys.slice(0, i), ...keys.slice(i + 1)].join(',');
        kept += this.stampEntry(stamp, key, addresses[i]!, health, list, e.attributes);
      }
    }
    if (kept < sizeBefore) {
      for (const [key, entry] of entries) {
        if (entry.stamp === stamp) continue;
        entries.delete(key);
        entry.removed = true;
        this.releaseOwned(entry);
      }
    }
    this.releaseUnkeepable();
  }

  /**
   * Brings the entry for `key` up to date under `stamp`, making one if the map has none. Returns 1 when this
   * is the first time this update names an entry the map held before it, else 0 (the count of kept entries).
   */
  private stampEntry(
    stamp: number,
    key: string,
    address: Address,
    health: XdsHealthStatus,
    list: string,
    attributes: Attributes,
  ): number {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.entries.set(key, new AddressEntry(key, address, health, list, attributes, stamp));
      return 0;
    }
    entry.health = health;
    entry.addressList = list;
    entry.attributes = attributes;
    if (entry.stamp === stamp) return 0;
    entry.stamp = stamp;
    return 1;
  }

  /** A connection the policy holds is kept only while a cookie may still pick its entry. */
  private releaseUnkeepable(): void {
    for (const entry of this.entries.values()) {
      if (entry.owned && !this.overridable.has(entry.health)) this.releaseOwned(entry);
    }
  }

  private releaseOwned(entry: AddressEntry): void {
    if (!entry.owned) return;
    const inner = entry.inner!;
    entry.inner = null;
    unwatchSubchannelState(inner, this);
    inner.release();
    this.helper.trace(() => `xds_override_host: released the connection held for ${entry.key}`);
  }

  /** A55: the newest subchannel the child creates for an address is the one the map uses. */
  private adopt(wrapper: OverrideHostSubchannel): void {
    const entry = this.entries.get(wrapper.key);
    if (entry === undefined) return;
    wrapper.entry = entry;
    this.releaseOwned(entry); // the new handle already shares the pooled connection
    entry.inner = wrapper.inner;
    entry.wrapper = wrapper;
  }

  childReleased(wrapper: OverrideHostSubchannel): void {
    const entry = wrapper.entry;
    if (entry === null || entry.wrapper !== wrapper || entry.removed || this.destroyed) {
      wrapper.inner.release();
      return;
    }
    entry.wrapper = null;
    // A55: a DRAINING endpoint's connection stays open while cookies may reach DRAINING endpoints, even
    // though the child (which no longer has the endpoint) lets it go.
    if (entry.health === 'DRAINING' && this.overridable.has('DRAINING')) {
      watchSubchannelState(entry.inner!, this);
      this.helper.trace(() => `xds_override_host: keeping the connection to DRAINING ${entry.key}`);
      return;
    }
    entry.inner = null;
    wrapper.inner.release();
  }

  /** @internal A connection the map knows changed state: queued override picks may now complete. */
  onSubchannelState(): void {
    if (!this.overridePending || this.destroyed || !this.hasChildPicker) return;
    this.report();
  }

  connectSoon(entry: AddressEntry): void {
    this.toConnect.add(entry);
    this.scheduleSoon();
  }

  createSoon(entry: AddressEntry): void {
    this.toCreate.add(entry);
    this.scheduleSoon();
  }

  overrideQueued(): void {
    this.overridePending = true;
  }

  /** Connection work a pick asked for runs off the data path, as pick_first's IdlePicker does. */
  private scheduleSoon(): void {
    if (this.destroyed) return;
    this.soonTimer ??= this.helper.clock.setTimer(0, () => this.runSoon());
  }

  private runSoon(): void {
    this.soonTimer = null;
    for (const entry of this.toCreate) {
      // A55 / gRPC: a cookie named an address with no connection (a DRAINING endpoint the child never had).
      if (entry.removed || entry.inner !== null || !this.overridable.has(entry.health)) continue;
      const inner = this.helper.createSubchannel(entry.address, entry.attributes);
      entry.inner = inner;
      watchSubchannelState(inner, this);
      this.helper.trace(() => `xds_override_host: connecting to ${entry.key} for a session cookie`);
      this.toConnect.add(entry);
    }
    this.toCreate.clear();
    for (const entry of this.toConnect) if (!entry.removed) entry.inner?.requestConnection();
    this.toConnect.clear();
  }

  private report(): void {
    this.overridePending = false;
    this.helper.updateState(
      this.childState,
      this.childStatus,
      new OverrideHostPicker(this.childPicker, this.entries, this.overridable, this),
    );
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
    for (const entry of this.entries.values()) if (entry.owned) entry.inner!.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    this.soonTimer?.();
    this.soonTimer = null;
    this.child.destroy();
    for (const entry of this.entries.values()) {
      entry.removed = true;
      this.releaseOwned(entry);
    }
    this.entries.clear();
  }
}

/** A55: the child never sees DRAINING endpoints (the same array when there are none). */
function withoutDraining(endpoints: readonly Endpoint[]): readonly Endpoint[] {
  let i = 0;
  // Endpoints of a locality share one Attributes object: each object is read once.
  let checked: Attributes | null = null;
  for (; i < endpoints.length; i++) {
    const attributes = endpoints[i]!.attributes;
    if (attributes === checked) continue;
    if (attributes.get(XDS_HEALTH_STATUS) === 'DRAINING') break;
    checked = attributes;
  }
  if (i === endpoints.length) return endpoints;
  return endpoints.filter((e) => e.attributes.get(XDS_HEALTH_STATUS) !== 'DRAINING');
}

export const overrideHostFactory: PolicyFactory<OverrideHostConfig> = {
  name: XDS_OVERRIDE_HOST,
  parseConfig: (json, path, registry) => parseOverrideHostConfig(json, path, registry),
  create: (helper, registry) => new OverrideHostLb(helper, registry),
};
