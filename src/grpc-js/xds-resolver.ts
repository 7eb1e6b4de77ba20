// lbtree's resolver for `xds:` targets on grpc-js (A27, A31, A74): a shared xDS client per bootstrap, the
// dependency manager and config selector from src/xds, and grpc-js's resolver and config-selector APIs. The
// service config's LB policy is lbtree's xds_cluster_manager_experimental; the XdsConfig travels to the cds
// policies as an update attribute; each call's cluster and request hash travel as pick information, and so
// does its A55 stateful session, whose response side is a dynamic filter; its route's A31 timeout and A44
// retry policy are its method config, so grpc-js's own retry machinery runs the retries; A33 fault injection
// is a dynamic filter too, applying what src/xds/resolver decides (delay the call's start, fail it with a
// status). A call made while the resolution fails is routed by a filter when it would be sent (A88). The xDS client and decoders load with the first `xds:` channel (xds-resolution-start.ts), not with
// `register()`.

import {
  type ChannelOptions,
  experimental,
  Metadata as GrpcMetadata,
  status as GrpcStatus,
  type Metadata,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallMetadata, CancelTimer, Clock, MetricsRecorder, Registry, Status } from '../core/index.js';
import { newChannelId } from '../hash/index.js';
import { CallRetryTracers, recordsCallRetries } from '../metrics/index.js';
import { registerXdsPolicies } from '../xds/balancer/index.js';
import { XDS_LOAD_REPORTING_ARG } from '../xds/load-store.js';
import type { FaultInjector } from '../xds/resolver/fault-injection.js';
import type { StatefulSessionCall } from '../xds/resolver/stateful-session.js';
import type { CallRouter, XdsResolutionResult } from '../xds/resolver/xds-resolution.js';
import type { XdsRetryPolicy } from '../xds/resources/types.js';
import { XDS_TRANSPORT_SECURITY_REGISTRY_ARG } from '../xds/transport-security.js';
import { XDS_CHANNEL_ID_ATTRIBUTE, XDS_CONFIG_ATTRIBUTE } from '../xds/xds-config.js';
import { CALL_RETRY_TRACER, TrackedCall, type TrackedPickInfo } from './call-retry-tracking.js';
import {
  CHANNEL_METRICS_RECORDER_OPTION,
  canonicalTarget,
  channelMetricsRecorder,
} from './channel-metrics.js';
import {
  CHANNEL_KEY_OPTION,
  CHANNEL_TARGET_OPTION,
  CHANNEL_XDS_DUMP_OPTION,
  CHANNEL_XDS_METRICS_OPTION,
  newChannelKey,
} from './channel-registry.js';
import { registerCsdsAdminService } from './csds-service.js';
import { XdsCallConfig, XdsPickInformation } from './xds-call-config.js';
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

/** The router a channel uses now (the resolver's latest accepted one), and word of the next one. */
interface CurrentRouter {
  readonly router: CallRouter | undefined;
  /** Calls `fn` once, when the channel takes its next router or stops; returns the cancel. */
  onNextRouter(fn: () => void): () => void;
}

/** A call's config as grpc-js holds it: this very object is read again when the call's first attempt starts. */
type MutableCallConfig = { -readonly [K in keyof CallConfig]: CallConfig[K] };

/**
 * A call that arrived while the resolution failed (A88, A54: UNAVAILABLE with the reason, never the xDS
 * client's NOT_FOUND / INVALID_ARGUMENT). grpc-js selects a call's config once, before the call is sent, so
 * such a call is routed by this filter when it would be sent: while the channel's router still fails, a call
 * that is not wait-for-ready fails with its status and a wait-for-ready one waits (for the resource or its
 * deadline), as it does for any resolver error; once a router works, the call takes its route as a call routed
 * by the config selector does — cluster, hash and session in its pick information, the A44 retry policy in its
 * method config (grpc-js reads both from `config` after the metadata filters ran), A33 faults and A55's
 * response side run here.
 *
 * The A31 route timeout counts from routing (grpc-js counts a method config timeout from config selection).
 * grpc-js fixes the call's deadline timer at config selection, and no filter or pick can end a call that was
 * sent, so the client enforces the timeout up to the send (a fault delay included); after it, the call carries
 * the remaining time as `grpc-timeout` for the server to enforce — unless the application set a deadline, whose
 * `grpc-timeout` grpc-js writes over it, so a deferred call with its own deadline keeps that one after the send.
 */
class DeferredRouteFilter extends experimental.BaseFilter {
  private ended = false;
  private stopWaiting: (() => void) | undefined;
  private release: (() => void) | undefined;
  /** Once routed: the call's fault and session filters, in filter order. */
  private readonly routed: experimental.BaseFilter[] = [];
  private cancelTimeout: (() => void) | undefined;

  constructor(
    private readonly method: string,
    private readonly current: CurrentRouter,
    private readonly config: MutableCallConfig,
    private readonly methodConfig: (
      timeoutMs: number | undefined,
      retry: XdsRetryPolicy | undefined,
    ) => MethodConfig,
  ) {
    super();
  }

  override async sendMetadata(metadata: Promise<Metadata>): Promise<Metadata> {
    const sent = await metadata;
    const selection = await this.route(sent);
    this.release = () => selection.release();
    // Ended meanwhile (its deadline, a cancellation): nothing is started for it.
    if (this.ended) {
      selection.release();
      throw grpcStatusOf(GrpcStatus.CANCELLED, 'the call ended before it was routed');
    }
    if (selection.session !== undefined) this.routed.push(new StatefulSessionFilter(selection.session));
    const tracer = (this.config.pickInformation as TrackedPickInfo)[CALL_RETRY_TRACER] as
      | TrackedCall
      | undefined;
    this.config.pickInformation = new XdsPickInformation(selection, this.method, tracer).asPickInformation;
    this.config.methodConfig = this.methodConfig(undefined, selection.retryPolicy);
    this.config.onCommitted = this.release;
    const timeoutMs = selection.timeoutMs;
    const due = timeoutMs === undefined ? undefined : performance.now() + timeoutMs;
    let out: Promise<Metadata> = Promise.resolve(sent);
    if (selection.faults.length > 0) {
      const faults = new FaultInjectionFilter(selection.faults, selection);
      this.routed.unshift(faults);
      out = faults.sendMetadata(out);
    }
    if (timeoutMs !== undefined) {
      out = Promise.race([
        out,
        new Promise<never>((_, reject) => {
          this.cancelTimeout = CALL_CLOCK.setTimer(timeoutMs, () =>
            reject(
              grpcStatusOf(
                GrpcStatus.DEADLINE_EXCEEDED,
                `Deadline exceeded: the route's timeout of ${timeoutMs} ms`,
              ),
            ),
          );
        }),
      ]);
    }
    const filtered = await out;
    this.cancelTimeout?.();
    if (due !== undefined) filtered.set('grpc-timeout', grpcTimeout(due - performance.now()));
    return filtered;
  }

  override receiveMetadata(metadata: Metadata): Metadata {
    for (const f of this.routed) metadata = f.receiveMetadata(metadata);
    return metadata;
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    this.ended = true;
    this.stopWaiting?.();
    this.cancelTimeout?.();
    for (const f of this.routed) status = f.receiveTrailers(status);
    // A call that never started is never committed: its hold on the cluster ends here (release is idempotent).
    this.release?.();
    return status;
  }

  /** The call's route once the channel's router works; throws the status that ends the call instead. */
  private async route(metadata: Metadata): Promise<Extract<ReturnType<CallRouter['select']>, { ok: true }>> {
    for (;;) {
      const router = this.current.router;
      if (router === undefined) throw grpcStatus(unavailableStatus('xds resolver stopped'));
      if (router.resolutionError === undefined) {
        const selection = router.select(
          this.method,
          metadata as unknown as Parameters<CallRouter['select']>[1],
        );
        if (!selection.ok) throw grpcStatus(selection.status);
        return selection;
      }
      if (!metadata.getOptions().waitForReady) throw grpcStatus(router.resolutionError);
      await new Promise<void>((resolve) => {
        this.stopWaiting = this.current.onNextRouter(resolve);
      });
    }
  }
}

function grpcStatusOf(code: GrpcStatus, details: string) {
  return { code, details, metadata: new GrpcMetadata() };
}

/** A `grpc-timeout` header value (at most 8 digits): milliseconds, or whole seconds beyond that. */
function grpcTimeout(ms: number): string {
  const left = Math.max(0, Math.ceil(ms));
  return left < 1e8 ? `${left}m` : `${Math.min(Math.ceil(left / 1000), 99_999_999)}S`;
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
    private readonly routed: { release(): void },
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
    this.routed.release();
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
    /** A96: set when the channel records retry metrics; each call then gets a tracer. */
    private readonly tracers: CallRetryTracers<TrackedCall> | undefined,
  ) {}

  invoke(methodName: string, metadata: Metadata): CallConfig {
    if (this.router.resolutionError !== undefined) {
      // Routed when it would be sent (DeferredRouteFilter), which fills in this config.
      const config: MutableCallConfig = {
        methodConfig: NO_TIMEOUT,
        pickInformation: {},
        status: GrpcStatus.OK,
        dynamicFilterFactories: [],
      };
      const methodConfig = this.methodConfig.bind(this);
      config.dynamicFilterFactories = [
        { createFilter: () => new DeferredRouteFilter(methodName, this.current, config, methodConfig) },
      ];
      const tracer = this.tracers?.forCall(methodName);
      if (tracer !== undefined) {
        (config.pickInformation as Record<symbol, unknown>)[CALL_RETRY_TRACER] = tracer;
        config.dynamicFilterFactories.push(tracer);
      }
      return config;
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
    const session = selection.session;
    const faults = selection.faults;
    let filters =
      faults.length === 0
        ? NO_FILTERS
        : [{ createFilter: () => new FaultInjectionFilter(faults, selection) }];
    // A61's call attribute is an object the pick writes to (the config is the pick information: see XdsCallConfig).
    if (session !== undefined)
      filters = [...filters, { createFilter: () => new StatefulSessionFilter(session) }];
    // A96: xDS configures no hedging (A44), so a call's later attempts are retries and transparent retries.
    const tracer = this.tracers?.forCall(methodName);
    if (tracer !== undefined) filters = [...filters, tracer];
    return new XdsCallConfig(
      selection,
      methodName,
      this.methodConfig(selection.timeoutMs, selection.retryPolicy),
      filters,
      tracer,
    );
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
  /** The router of the result grpc-js holds now (calls that waited out a resolution error use it). */
  router: CallRouter | undefined;
  private nextRouterWaiters = new Set<() => void>();
  /** Set from the first updateResolution until destroy (or a failed start, so that grpc-js's retry retries). */
  private starting = false;
  private resolution: XdsChannelResolution | null = null;
  /** A96: the tracers of the channel's calls, when the channel records retry metrics. */
  private callRetryTracers: CallRetryTracers<TrackedCall> | undefined;
  private destroyed = false;
  private readonly channelId = newChannelId(Math.random);
  /** The channel's registry key: on every result, errors included. */
  private readonly channelKey = newChannelKey();
  /** The channel's metrics recorder, made with the resolution (the xDS client's metrics), handed to the tree. */
  private metrics: MetricsRecorder | undefined;

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
      this.callRetryTracers = recordsCallRetries(metrics)
        ? new CallRetryTracers(metrics, undefined, TrackedCall)
        : undefined;
      this.metrics = metrics;
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
      { [CHANNEL_KEY_OPTION]: this.channelKey },
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
      [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: new GrpcConfigSelector(
        result.router,
        this,
        this.callRetryTracers,
      ),
      [XDS_CONFIG_ATTRIBUTE]: result.xdsConfig,
      [XDS_CHANNEL_ID_ATTRIBUTE]: this.channelId,
      [CHANNEL_TARGET_OPTION]: canonicalTarget(this.target),
      [CHANNEL_KEY_OPTION]: this.channelKey,
      ...(this.metrics !== undefined && { [CHANNEL_METRICS_RECORDER_OPTION]: this.metrics }),
    };
    // A29: for XdsChannelCredentials, on every subchannel of the channel.
    if (this.resolution !== null) {
      attributes[XDS_CERTIFICATE_PROVIDERS_OPTION] = this.resolution.certificateProviders;
      attributes[XDS_TRANSPORT_SECURITY_REGISTRY_ARG] = this.resolution.transportSecurity;
      attributes[CHANNEL_XDS_DUMP_OPTION] = this.resolution.dump;
      attributes[CHANNEL_XDS_METRICS_OPTION] = this.resolution.clientMetrics;
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
    else this.wakeWaiters();
    return accepted;
  }

  onNextRouter(fn: () => void): () => void {
    this.nextRouterWaiters.add(fn);
    return () => this.nextRouterWaiters.delete(fn);
  }

  private wakeWaiters(): void {
    const waiters = this.nextRouterWaiters;
    this.nextRouterWaiters = new Set();
    for (const wake of waiters) wake();
  }

  destroy(): void {
    this.destroyed = true;
    this.router = undefined;
    this.wakeWaiters();
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
