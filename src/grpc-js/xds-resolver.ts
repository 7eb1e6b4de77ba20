// lbtree's resolver for `xds:` targets on grpc-js (A27, A31, A74): a shared xDS client per bootstrap, the
// dependency manager and config selector from src/xds, and grpc-js's resolver and config-selector APIs. The
// service config's LB policy is lbtree's xds_cluster_manager_experimental; the XdsConfig travels to the cds
// policies as an update attribute; each call's cluster and request hash travel as pick information, and so
// does its A55 stateful session, whose response side is a dynamic filter; its route's A31 timeout and A44
// retry policy are its method config, so grpc-js's own retry machinery runs the retries; A33 fault injection
// is a dynamic filter too, applying what src/xds/resolver decides (delay the call's start, fail it with a
// status). The xDS client and decoders load with the first `xds:` channel (xds-resolution-start.ts), not with
// `register()`.

import {
  type ChannelOptions,
  experimental,
  Metadata as GrpcMetadata,
  status as GrpcStatus,
  type Metadata,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallMetadata, CancelTimer, Clock, Registry, Status } from '../core/index.js';
import { newChannelId } from '../hash/index.js';
import {
  registerXdsPolicies,
  XDS_CLUSTER_CALL_ATTRIBUTE,
  XDS_OVERRIDE_HOST_CALL_ATTRIBUTE,
} from '../xds/balancer/index.js';
import { XDS_LOAD_REPORTING_ARG } from '../xds/load-store.js';
import type { FaultInjector } from '../xds/resolver/fault-injection.js';
import type { StatefulSessionCall } from '../xds/resolver/stateful-session.js';
import type { CallRouter, XdsResolutionResult } from '../xds/resolver/xds-resolution.js';
import type { XdsRetryPolicy } from '../xds/resources/types.js';
import { XDS_TRANSPORT_SECURITY_REGISTRY_ARG } from '../xds/transport-security.js';
import { XDS_CONFIG_ATTRIBUTE } from '../xds/xds-config.js';
import { canonicalTarget, channelMetricsRecorder } from './channel-metrics.js';
import { CHANNEL_TARGET_OPTION, CHANNEL_XDS_DUMP_OPTION } from './channel-registry.js';
import { registerCsdsAdminService } from './csds-service.js';
import { DEFERRED_ROUTE_PICK_INFO_KEY, type DeferredRoute, HASH_PICK_INFO_KEY } from './picker-adapter.js';
import type { XdsChannelResolution } from './xds-resolution-start.js';
import { XDS_CERTIFICATE_PROVIDERS_OPTION } from './xds-security-options.js';

export const XDS_SCHEME = 'xds';

/** grpc-js's parsed service config (not exported by name). */
type GrpcServiceConfig = Extract<
  NonNullable<Parameters<experimental.ResolverListener>[2]>,
  { ok: true }
>['value'];

/** What `register({ xds })` configured: the bootstrap to use instead of GRPC_XDS_BOOTSTRAP(_CONFIG). */
export interface XdsResolverSettings {
  bootstrap?: unknown;
}
const settings: XdsResolverSettings = {};

export function configureXdsResolver(next: XdsResolverSettings): void {
  settings.bootstrap = next.bootstrap;
}

/** The xDS client, decoders and dependency manager: loaded once, by the first `xds:` channel. */
let resolutionStart: Promise<typeof import('./xds-resolution-start.js')> | undefined;
const loadResolutionStart = () => (resolutionStart ??= import('./xds-resolution-start.js'));

function grpcStatus(s: Status) {
  return { code: s.code as number as GrpcStatus, details: s.details, metadata: new GrpcMetadata() };
}

/** A filter that ends the call with `status` before it is sent (keeps the status' details, unlike CallConfig.status). */
function failingFilter(s: Status): experimental.FilterFactory<experimental.Filter> {
  class FailCall extends experimental.BaseFilter {
    override async sendMetadata(): Promise<Metadata> {
      throw grpcStatus(s);
    }
  }
  return { createFilter: () => new FailCall() };
}

/**
 * A55's StatefulSessionFilter on a grpc-js call, response side: the request side ran in the config selector
 * (the cookie was read and the session handed to the pick). It adds the `set-cookie` header to the response
 * headers, or to the trailers of a trailers-only response, when the endpoint used is not the cookie's.
 */
class StatefulSessionFilter extends experimental.BaseFilter {
  private headersSeen = false;

  constructor(private readonly session: StatefulSessionCall) {
    super();
  }

  override receiveMetadata(metadata: Metadata): Metadata {
    this.headersSeen = true;
    this.addCookie(metadata);
    return metadata;
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    if (!this.headersSeen) this.addCookie(status.metadata);
    return status;
  }

  private addCookie(metadata: Metadata): void {
    const header = this.session.setCookieHeader();
    if (header !== undefined) metadata.add('set-cookie', header);
  }
}

/** The router a channel uses now (the resolver's latest accepted one). */
interface CurrentRouter {
  readonly router: CallRouter | undefined;
}

/**
 * A call that arrived while the resolution failed (A88, A54: UNAVAILABLE with the reason, never the xDS
 * client's NOT_FOUND / INVALID_ARGUMENT). Each pick routes it with the channel's current router: while that
 * one still fails, the pick fails as a transient failure, so a wait-for-ready call waits (for the resource or
 * its deadline) as it does for any resolver error; once a router works, the call takes its route, hash and
 * session. What a route adds through the call config (its timeout, A44 retry policy, A33 fault injection,
 * response filters) is fixed before the first pick, so such a call goes without them.
 */
class PendingRoute implements DeferredRoute {
  constructor(
    private readonly method: string,
    private readonly current: CurrentRouter,
  ) {}

  route(
    pickInfo: Record<string, unknown>,
    metadata: Parameters<DeferredRoute['route']>[1],
  ): ReturnType<DeferredRoute['route']> {
    const router = this.current.router;
    if (router === undefined) return { status: unavailableStatus('xds resolver stopped'), waitable: true };
    if (router.resolutionError !== undefined) return { status: router.resolutionError, waitable: true };
    const selection = router.select(this.method, metadata as unknown as Parameters<CallRouter['select']>[1]);
    if (!selection.ok) return { status: selection.status, waitable: false };
    delete pickInfo[DEFERRED_ROUTE_PICK_INFO_KEY];
    pickInfo[XDS_CLUSTER_CALL_ATTRIBUTE] = selection.clusterChild;
    pickInfo[HASH_PICK_INFO_KEY] = selection.hash.toString();
    if (selection.session !== undefined) pickInfo[XDS_OVERRIDE_HOST_CALL_ATTRIBUTE] = selection.session;
    // The router holds the cluster in the LB config until released; this pick is the one that needs it.
    selection.release();
    return undefined;
  }
}

function unavailableStatus(details: string): Status {
  return { code: GrpcStatus.UNAVAILABLE as number as Status['code'], details };
}

type CallConfig = ReturnType<experimental.ConfigSelector['invoke']>;
type MethodConfig = CallConfig['methodConfig'];

/** The method config of a call without a route timeout or retry policy, and the filters of a call without a session. */
const NO_TIMEOUT: MethodConfig = Object.freeze({ name: Object.freeze([]) as unknown as [] });
const NO_FILTERS: CallConfig['dynamicFilterFactories'] = Object.freeze([]) as unknown as [];

/** A duration in milliseconds as a method config takes it (`"0.025s"`). */
const seconds = (ms: number) => `${ms / 1000}s`;

/**
 * A44: an xDS retry policy as grpc-js's method config retryPolicy (A6), which grpc-js's own retry machinery runs:
 * each attempt is a new pick, and attempts are capped at grpc-js's limit (5 unless the channel option
 * `grpc-node.retry_max_attempts_limit` says otherwise); `grpc.enable_retries: 0` turns it off.
 */
function grpcRetryPolicy(p: XdsRetryPolicy): NonNullable<MethodConfig['retryPolicy']> {
  return Object.freeze({
    maxAttempts: p.maxAttempts,
    initialBackoff: seconds(p.initialBackoffMs),
    maxBackoff: seconds(p.maxBackoffMs),
    backoffMultiplier: 2,
    retryableStatusCodes: Object.freeze([...p.retryableStatusCodes]) as unknown as GrpcStatus[],
  });
}

/** Node's timers take at most 2^31 - 1 ms (about 24.8 days); a longer delay is waited out in such steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The clock fault delays run on. Unlike lbtree's policy timers these are not unref'd: a delayed call holds the
 * process as the call itself would (grpc-js's deadline timers are not unref'd either). Node may run a timer up
 * to a few milliseconds early (its loop time lags), so a timer that fires early waits out the rest: a call
 * delayed by N ms starts no sooner than N ms after the delay began.
 */
const CALL_CLOCK: Clock = {
  now: () => performance.now(),
  setTimer(delayMs, fn) {
    const due = performance.now() + Math.max(0, delayMs);
    let handle: NodeJS.Timeout;
    const arm = (ms: number) => {
      handle = setTimeout(fire, Math.min(Math.ceil(ms), MAX_TIMER_MS));
    };
    const fire = () => {
      const left = due - performance.now();
      if (left > 0) arm(left);
      else fn();
    };
    arm(Math.max(0, delayMs));
    return () => clearTimeout(handle);
  },
};

/**
 * A33's fault injection filters on a grpc-js call, in filter order: when the call's metadata is sent, each
 * injector decides its fault; the call waits out a delay before anything is sent, and an abort fails it with
 * its status. A call that ends during a delay (deadline, cancellation) cancels it and never starts.
 */
class FaultInjectionFilter extends experimental.BaseFilter {
  private cancel: CancelTimer | undefined;

  constructor(
    private readonly faults: readonly FaultInjector[],
    /** The call's hold on its cluster: a call that never starts is never committed, so it is released here. */
    private readonly release: () => void,
  ) {
    super();
  }

  override async sendMetadata(metadata: Promise<Metadata>): Promise<Metadata> {
    const sent = await metadata;
    for (const injector of this.faults) {
      const fault = injector.decide(sent as unknown as CallMetadata);
      if (fault === undefined) continue;
      const abort = await new Promise<Status | undefined>((resolve) => {
        this.cancel = fault.run(CALL_CLOCK, resolve);
      });
      if (abort !== undefined) throw grpcStatus(abort);
    }
    return sent;
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    // grpc-js ends every call through here, one ended during a delay included: the delay is over (its promise
    // stays pending, so grpc-js starts no attempt), and the call is done picking.
    this.cancel?.();
    this.release();
    return status;
  }
}

/** grpc-js's view of one config selector (A31): route, cluster and hash per call, released when replaced. */
class GrpcConfigSelector implements experimental.ConfigSelector {
  /**
   * A route's timeout and retry policy as grpc-js's method config, made once per distinct pair (calls allocate
   * none): by retry policy (undefined: none), then by timeout (undefined: none).
   */
  private readonly methodConfigs = new Map<
    XdsRetryPolicy | undefined,
    Map<number | undefined, MethodConfig>
  >();

  constructor(
    private readonly router: CallRouter,
    private readonly current: CurrentRouter,
  ) {}

  invoke(methodName: string, metadata: Metadata): CallConfig {
    if (this.router.resolutionError !== undefined) {
      const pending: Record<string, unknown> = {
        [DEFERRED_ROUTE_PICK_INFO_KEY]: new PendingRoute(methodName, this.current),
      };
      return {
        methodConfig: NO_TIMEOUT,
        pickInformation: pending as Record<string, string>,
        status: GrpcStatus.OK,
        dynamicFilterFactories: NO_FILTERS,
      };
    }
    const selection = this.router.select(
      methodName,
      metadata as unknown as Parameters<CallRouter['select']>[1],
    );
    if (!selection.ok) {
      return {
        methodConfig: NO_TIMEOUT,
        pickInformation: {},
        status: GrpcStatus.OK,
        dynamicFilterFactories: [failingFilter(selection.status)],
      };
    }
    const pickInformation: Record<string, unknown> = {
      [XDS_CLUSTER_CALL_ATTRIBUTE]: selection.clusterChild,
      [HASH_PICK_INFO_KEY]: selection.hash.toString(),
    };
    const session = selection.session;
    const faults = selection.faults;
    let filters =
      faults.length === 0
        ? NO_FILTERS
        : [{ createFilter: () => new FaultInjectionFilter(faults, selection.release) }];
    if (session !== undefined) {
      // A61's call attribute is an object the pick writes to. grpc-js types pick information as strings, but
      // hands every pick of the call this very object (load-balancing-call.js passes callConfig.pickInformation
      // to the picker), so the session travels in it; lbtree's picker adapter reads values untyped.
      pickInformation[XDS_OVERRIDE_HOST_CALL_ATTRIBUTE] = session;
      filters = [...filters, { createFilter: () => new StatefulSessionFilter(session) }];
    }
    return {
      methodConfig: this.methodConfig(selection.timeoutMs, selection.retryPolicy),
      onCommitted: selection.release,
      pickInformation: pickInformation as Record<string, string>,
      status: GrpcStatus.OK,
      dynamicFilterFactories: filters,
    };
  }

  private methodConfig(timeoutMs: number | undefined, retry: XdsRetryPolicy | undefined): MethodConfig {
    if (timeoutMs === undefined && retry === undefined) return NO_TIMEOUT;
    let byTimeout = this.methodConfigs.get(retry);
    if (byTimeout === undefined) {
      byTimeout = new Map();
      this.methodConfigs.set(retry, byTimeout);
    }
    let config = byTimeout.get(timeoutMs);
    if (config === undefined) {
      const timeout =
        timeoutMs === undefined
          ? undefined
          : { seconds: Math.floor(timeoutMs / 1000), nanos: Math.round((timeoutMs % 1000) * 1e6) };
      config = Object.freeze({
        name: Object.freeze([]) as unknown as [],
        ...(timeout !== undefined ? { timeout: Object.freeze(timeout) } : {}),
        ...(retry !== undefined ? { retryPolicy: grpcRetryPolicy(retry) } : {}),
      });
      byTimeout.set(timeoutMs, config);
    }
    return config;
  }

  unref(): void {
    this.router.release();
  }
}

/** `xds:///name` and `xds://authority/name` (A47: the authority is looked up in the bootstrap). */
export function xdsTarget(target: experimental.GrpcUri): { authority: string | undefined; name: string } {
  const name = target.path.replace(/^\//, '');
  if (name === '') throw new Error('xds: target has no name (expected xds:///name or xds://authority/name)');
  return { authority: target.authority || undefined, name };
}

export class XdsResolver implements experimental.Resolver, CurrentRouter {
  /** The router of the result grpc-js holds now (calls routed at pick time use it). */
  router: CallRouter | undefined;
  /** Set from the first updateResolution until destroy (or a failed start, so that grpc-js's retry retries). */
  private starting = false;
  private resolution: XdsChannelResolution | null = null;
  private destroyed = false;
  private readonly channelId = newChannelId(Math.random);

  constructor(
    private readonly target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
    private readonly options: ChannelOptions,
  ) {}

  updateResolution(): void {
    if (this.resolution !== null) {
      this.resolution.requestReresolution();
      return;
    }
    // While the modules load, a request adds nothing: the resolution starts fresh once they are in.
    if (this.starting) return;
    this.starting = true;
    loadResolutionStart().then(
      (m) => this.start(m.startXdsResolution),
      (e: unknown) => this.fail(e),
    );
  }

  private start(startXdsResolution: typeof import('./xds-resolution-start.js').startXdsResolution): void {
    if (this.destroyed) return;
    try {
      const metrics = channelMetricsRecorder({
        ...this.options,
        [CHANNEL_TARGET_OPTION]: canonicalTarget(this.target),
      });
      this.resolution = startXdsResolution(
        xdsTarget(this.target),
        settings.bootstrap,
        this.channelId,
        (result) => this.deliver(result),
        metrics,
      );
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    this.starting = false;
    if (this.destroyed) return;
    this.listener(
      experimental.statusOrFromError({
        code: GrpcStatus.UNAVAILABLE,
        details: `xds resolver: ${(e as Error).message}`,
        metadata: new GrpcMetadata(),
      }),
      {},
      null,
      '',
    );
  }

  private deliver(result: XdsResolutionResult): boolean {
    const serviceConfig: GrpcServiceConfig = {
      loadBalancingConfig: result.lbConfig as GrpcServiceConfig['loadBalancingConfig'],
      methodConfig: [],
    };
    const attributes: Record<string | symbol, unknown> = {
      [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: new GrpcConfigSelector(result.router, this),
      [XDS_CONFIG_ATTRIBUTE]: result.xdsConfig,
      [CHANNEL_TARGET_OPTION]: canonicalTarget(this.target),
    };
    // A29: for XdsChannelCredentials, on every subchannel of the channel.
    if (this.resolution !== null) {
      attributes[XDS_CERTIFICATE_PROVIDERS_OPTION] = this.resolution.certificateProviders;
      attributes[XDS_TRANSPORT_SECURITY_REGISTRY_ARG] = this.resolution.transportSecurity;
      attributes[CHANNEL_XDS_DUMP_OPTION] = this.resolution.dump;
      // A27: xds_cluster_impl of a cluster with lrs_server counts into the client's load stores.
      attributes[XDS_LOAD_REPORTING_ARG] = this.resolution.loadReporting;
    }
    // Set before grpc-js takes the result: its new picker re-picks the calls waiting on the previous one.
    const previous = this.router;
    this.router = result.router;
    const accepted = this.listener(
      experimental.statusOrFromValue([]),
      attributes as Record<string, unknown>,
      experimental.statusOrFromValue(serviceConfig),
      result.router.resolutionError?.details ?? '',
    );
    if (!accepted) this.router = previous;
    return accepted;
  }

  destroy(): void {
    this.destroyed = true;
    this.router = undefined;
    this.resolution?.stop();
    this.resolution = null;
  }

  static getDefaultAuthority(target: experimental.GrpcUri): string {
    return target.path.replace(/^\//, '');
  }
}

/** `register({ xds })`: true, or `{ bootstrap }` (otherwise GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG). */
export type XdsRegisterOption = boolean | { readonly bootstrap?: unknown };

/**
 * Adds the xDS policies to `registry` (before grpc-js names are registered from it) and makes lbtree's resolver
 * the `xds:` scheme's, replacing @grpc/grpc-js-xds's if that registered first (grpc-js keeps one per scheme);
 * registers the CSDS admin service.
 */
export function enableXds(registry: Registry, option: XdsRegisterOption | undefined): void {
  if (!option) return;
  registerXdsPolicies(registry);
  configureXdsResolver(option === true ? {} : { bootstrap: option.bootstrap });
  experimental.registerResolver(XDS_SCHEME, XdsResolver);
  // A40: `addAdminServicesToServer(server)` serves the xDS clients' CSDS.
  registerCsdsAdminService();
}
