import {
  CONNECTING,
  IDLE,
  type PickArgs,
  type Picker,
  type PickResult,
  QUEUE,
  READY,
} from '../../../core/index.js';
import { overrideHostState } from '../../call-attributes.js';
import type { XdsHealthStatus } from '../../resources/cluster-load-assignment.js';
import { type AddressEntry, OverrideHostSubchannel } from './address-map.js';

/** What a pick may ask of its policy, off the data path. */
export interface OverridePickHooks {
  /** Start connecting `entry`'s IDLE subchannel soon. */
  connectSoon(entry: AddressEntry): void;
  /** Create a subchannel the policy holds for `entry`, and connect it, soon. */
  createSoon(entry: AddressEntry): void;
  /** A pick queued for an override target: the next state change of a mapped connection re-offers it. */
  overrideQueued(): void;
}

/**
 * A61's picker of xds_override_host (the A55 picker with the cookie's address list): the first READY address
 * of the cookie whose endpoint's health status may be overridden wins; otherwise an IDLE one is connected, a
 * CONNECTING one waited for, or an address without a connection given one, and the pick queues; otherwise the
 * child picks. Either way the endpoint used is reported to the call, so the filter can set the cookie.
 *
 * The address map is shared with the policy (A55 has pickers read it under a lock): in JavaScript picks never
 * run during an update, so the picker reads the live entries and a pick costs one Map lookup per cookie
 * address, with no allocation.
 */
export class OverrideHostPicker implements Picker {
  constructor(
    private readonly child: Picker,
    private readonly entries: ReadonlyMap<string, AddressEntry>,
    private readonly overridable: ReadonlySet<XdsHealthStatus>,
    private readonly hooks: OverridePickHooks,
  ) {}

  pick(args: PickArgs): PickResult {
    const call = overrideHostState(args);
    if (call !== undefined) {
      const cookie = call.cookieAddresses;
      if (cookie.length > 0) {
        let idle: AddressEntry | null = null;
        let missing: AddressEntry | null = null;
        let connecting = false;
        for (let i = 0; i < cookie.length; i++) {
          const entry = this.entries.get(cookie[i]!);
          if (entry === undefined || !this.overridable.has(entry.health)) continue;
          if (entry.inner === null) {
            missing ??= entry;
            continue;
          }
          const state = entry.inner.state;
          if (state === READY) {
            call.setActualAddressList(entry.addressList);
            return entry.result();
          }
          if (state === IDLE) idle ??= entry;
          else if (state === CONNECTING) connecting = true;
        }
        if (idle !== null) {
          this.hooks.connectSoon(idle);
          this.hooks.overrideQueued();
          return QUEUE;
        }
        if (connecting) {
          this.hooks.overrideQueued();
          return QUEUE;
        }
        if (missing !== null) {
          this.hooks.createSoon(missing);
          this.hooks.overrideQueued();
          return QUEUE;
        }
      }
    }
    const result = this.child.constantResult ?? this.child.pick(args);
    if (result.type !== 'complete') return result;
    const subchannel = result.subchannel;
    if (!(subchannel instanceof OverrideHostSubchannel)) return result;
    call?.setActualAddressList(subchannel.addressList);
    return subchannel.resultFor(result);
  }
}
