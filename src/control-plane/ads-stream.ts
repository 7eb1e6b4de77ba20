// One client's ADS stream, state of the world (xDS protocol, "Aggregated Discovery Service" and "ACK/NACK
// and resource type instance version"): per type the subscribed names, the version and nonce last sent.
// A request whose nonce is the last one sent is an ACK (or a NACK when it carries error_detail); a request
// with an older nonce is stale and ignored; a changed name list gets a response. Knows nothing of grpc-js:
// the server hands requests in and takes responses out, which keeps this testable on its own.
import { create } from '@bufbuild/protobuf';
import {
  type DiscoveryRequest,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from '../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { allResourcesRequiredInSotW } from '../protos/type-urls.js';
import { type ResourceSet, type ServedResource, servedName } from './resource-set.js';

/** What the stream knows of one subscribed type. */
export interface TypeSubscription {
  readonly typeUrl: string;
  /** Every resource of the type: `*` asked for, or (LDS / CDS) an empty first name list. */
  readonly wildcard: boolean;
  readonly names: readonly string[];
  /** Version and nonce of the last response sent (undefined before the first one). */
  readonly sentVersion: string | undefined;
  readonly sentNonce: string | undefined;
  /** The last version the client ACKed on this stream. */
  readonly ackedVersion: string | undefined;
}

/**
 * One exchange of a stream, about the response with `nonce` that carried `version`: for a response sent,
 * the names it carried; for an ACK, the names subscribed with it.
 */
export interface ExchangeRecord {
  readonly streamId: number;
  readonly nodeId: string;
  readonly typeUrl: string;
  readonly version: string;
  readonly nonce: string;
  readonly resourceNames: readonly string[];
}

/** The client's ACK of a response (its nonce), which carried `version`. */
export interface AckRecord extends ExchangeRecord {
  /**
   * Whether, with this answer, the client subscribes to every resource of the type (`*`, or the LDS / CDS
   * legacy wildcard): an empty `resourceNames` is the wildcard then, and an unsubscribe otherwise.
   */
  readonly wildcard: boolean;
}

/** The client's NACK of the response with `nonce`, which carried `version`. */
export interface NackRecord extends AckRecord {
  /** error_detail.message: why the client rejected it. */
  readonly reason: string;
  readonly code: number;
  /** version_info of the NACK: the version the client keeps using. */
  readonly keptVersion: string;
}

/** What a stream tells its server (which logs it and passes it on to listeners). */
export type StreamEvent =
  | { readonly kind: 'ack'; readonly ack: AckRecord }
  | { readonly kind: 'nack'; readonly nack: NackRecord }
  | {
      readonly kind: 'stale';
      readonly streamId: number;
      readonly nodeId: string;
      readonly typeUrl: string;
      readonly nonce: string;
    }
  | ({ readonly kind: 'sent' } & ExchangeRecord)
  | {
      /** The client subscribed to a name the served set does not have (told once per name per stream). */
      readonly kind: 'unknown-name';
      readonly streamId: number;
      readonly nodeId: string;
      readonly typeUrl: string;
      readonly name: string;
      /** The names of that type the set does have. */
      readonly known: readonly string[];
    };

export interface StreamHost {
  /** The resource set now served. */
  readonly resources: ResourceSet;
  send(response: DiscoveryResponse): void;
  report(event: StreamEvent): void;
}

interface MutableTypeState {
  wildcard: boolean;
  /** True while the wildcard comes only from an empty first list: a later empty list keeps it. */
  legacyWildcard: boolean;
  names: Set<string>;
  sentVersion: string | undefined;
  sentNonce: string | undefined;
  ackedVersion: string | undefined;
}

export class AdsStream {
  /** node.id from the first request that carried a node (requests after the first may omit it). */
  nodeId = '';
  private readonly types = new Map<string, MutableTypeState>();
  /** `typeUrl name` of every subscribed name already reported as unknown. */
  private readonly reportedUnknown = new Set<string>();
  private nonces = 0;

  constructor(
    readonly id: number,
    readonly peer: string,
    private readonly host: StreamHost,
  ) {}

  subscriptions(): TypeSubscription[] {
    return [...this.types].map(([typeUrl, s]) => ({
      typeUrl,
      wildcard: s.wildcard,
      names: [...s.names],
      sentVersion: s.sentVersion,
      sentNonce: s.sentNonce,
      ackedVersion: s.ackedVersion,
    }));
  }

  onRequest(request: DiscoveryRequest): void {
    if (this.nodeId === '' && request.node?.id) this.nodeId = request.node.id;
    const typeUrl = request.typeUrl;
    if (typeUrl === '') return; // ADS needs the type on every request; nothing to answer.
    let state = this.types.get(typeUrl);
    const nonce = request.responseNonce;
    const answers = state !== undefined && state.sentNonce !== undefined && nonce !== '';
    if (answers && nonce !== state!.sentNonce) {
      // An answer to a response that a newer one replaced: the client will answer the newer one too.
      this.host.report({ kind: 'stale', streamId: this.id, nodeId: this.nodeId, typeUrl, nonce });
      return;
    }
    const names = request.resourceNames;
    if (!state) {
      const legacyWildcard = names.length === 0 && allResourcesRequiredInSotW(typeUrl);
      state = {
        wildcard: legacyWildcard || names.includes('*'),
        legacyWildcard,
        names: new Set(names.filter((n) => n !== '*')),
        sentVersion: undefined,
        sentNonce: undefined,
        ackedVersion: undefined,
      };
      this.types.set(typeUrl, state);
      this.respond(typeUrl, state, true);
      return;
    }
    // The names first: the answer is logged with the subscription it leaves (a wildcard, or an unsubscribe).
    const changed = this.updateNames(state, names);
    if (answers) this.recordAnswer(typeUrl, state, request);
    if (changed) this.respond(typeUrl, state, true);
  }

  /** A new resource set: every subscribed type hears its new version. */
  onResourcesChanged(): void {
    for (const [typeUrl, state] of this.types) this.respond(typeUrl, state, false);
  }

  private recordAnswer(typeUrl: string, state: MutableTypeState, request: DiscoveryRequest): void {
    const ack: AckRecord = {
      streamId: this.id,
      nodeId: this.nodeId,
      typeUrl,
      version: state.sentVersion!,
      nonce: request.responseNonce,
      resourceNames: request.resourceNames,
      wildcard: state.wildcard,
    };
    const error = request.errorDetail;
    if (error) {
      this.host.report({
        kind: 'nack',
        nack: { ...ack, reason: error.message, code: error.code, keptVersion: request.versionInfo },
      });
    } else {
      state.ackedVersion = state.sentVersion;
      this.host.report({ kind: 'ack', ack });
    }
  }

  /** Applies a later request's name list; true when the subscription changed. */
  private updateNames(state: MutableTypeState, names: readonly string[]): boolean {
    // xDS protocol: an empty list keeps a legacy wildcard only until the client has named resources once.
    if (state.legacyWildcard && names.length === 0) return false;
    state.legacyWildcard = false;
    const wildcard = names.includes('*');
    const next = new Set(names.filter((n) => n !== '*'));
    const changed =
      wildcard !== state.wildcard ||
      next.size !== state.names.size ||
      [...next].some((n) => !state.names.has(n));
    state.wildcard = wildcard;
    state.names = next;
    return changed;
  }

  /**
   * Sends the subscribed resources of the type at the current version. LDS / CDS always answer a
   * subscription (a name left out is deleted); RDS / EDS answer only with something to say.
   */
  private respond(typeUrl: string, state: MutableTypeState, subscriptionChanged: boolean): void {
    const set = this.host.resources;
    if (!subscriptionChanged && state.sentVersion === set.version) return;
    const available = set.ofType(typeUrl);
    this.reportUnknownNames(typeUrl, state.names, available);
    const chosen = state.wildcard
      ? [...available.values()]
      : [...state.names].flatMap((name) => {
          const r = available.get(servedName(name, typeUrl));
          return r ? [r] : [];
        });
    const subscribed = state.wildcard || state.names.size > 0;
    if (!subscribed) return;
    if (chosen.length === 0 && !allResourcesRequiredInSotW(typeUrl)) return;
    const nonce = String(++this.nonces);
    state.sentVersion = set.version;
    state.sentNonce = nonce;
    this.host.send(
      create(DiscoveryResponseSchema, {
        versionInfo: set.version,
        typeUrl,
        nonce,
        resources: chosen.map((r) => r.any),
      }),
    );
    this.host.report({
      kind: 'sent',
      streamId: this.id,
      nodeId: this.nodeId,
      typeUrl,
      version: set.version,
      nonce,
      resourceNames: chosen.map((r) => r.name),
    });
  }

  /**
   * A name the set lacks gets an empty response (LDS / CDS, which the client ACKs) or none (RDS / EDS): nothing
   * a person would notice. Said once, with the names the set has: it is usually a typo in a target or a name.
   */
  private reportUnknownNames(
    typeUrl: string,
    names: ReadonlySet<string>,
    available: ReadonlyMap<string, ServedResource>,
  ): void {
    for (const name of names) {
      const key = `${typeUrl} ${name}`;
      if (available.has(servedName(name, typeUrl)) || this.reportedUnknown.has(key)) continue;
      this.reportedUnknown.add(key);
      this.host.report({
        kind: 'unknown-name',
        streamId: this.id,
        nodeId: this.nodeId,
        typeUrl,
        name,
        known: [...available.values()].map((r) => r.name),
      });
    }
  }
}
