import { experimental } from '@grpc/grpc-js';
import type { Registry } from '../core/index.js';
import { addGlobalMetrics, type MetricsOptions } from '../metrics/index.js';
import { defaultRegistry, PICK_FIRST, ROUND_ROBIN, WEIGHTED_ROUND_ROBIN } from '../policies/index.js';
import { reportUnknownMetricNames } from './channel-metrics.js';
import { ENDPOINTS_SCHEME, EndpointsResolver } from './endpoints-resolver.js';
import { grpcJsOnlyPolicy } from './grpc-js-child.js';
import { frontDnsResolver } from './misread-targets.js';
import { grpcPolicyClasses } from './policy-adapter.js';
import { type RecordEveryChannelOption, recordEveryChannel } from './recorded-channels.js';
import { enableXds, type XdsRegisterOption } from './xds-resolver.js';

/** Policies grpc-js ships itself: lbtree takes their names only when asked to. */
const GRPC_JS_BUILTINS: ReadonlySet<string> = new Set([PICK_FIRST, ROUND_ROBIN, WEIGHTED_ROUND_ROBIN]);
/** Prefix of the names (aliases in lbtree's registry) under which lbtree's pick_first / round_robin / weighted_round_robin are always available. */
export const LBTREE_PREFIX = 'lbtree_';

export interface RegisterOptions {
  /** Also register lbtree's pick_first and round_robin under grpc-js's own names (default false). */
  readonly replaceBuiltins?: boolean;
  /** The policies to register (default: the process-wide registry, custom policies included). */
  readonly registry?: Registry;
  /** Also lbtree's `xds:` resolver and xDS policies: true, or `{ bootstrap }` (see README "xDS targets"). */
  readonly xds?: XdsRegisterOption;
  /**
   * A flight recorder on every channel whose options name none: true (the defaults) or its options (ring size,
   * interval); false turns that off again. Read them from `liveChannels` (each channel's `recorder`) (see README "Record and replay").
   */
  readonly recorder?: RecordEveryChannelOption;
  /**
   * A79: record the metrics (A78, A91, A94) of every channel created afterwards to this MeterProvider; each
   * metric is off until named in `enableMetrics`; without a MeterProvider, the enabled metrics are recorded
   * for the live view (lbtree/admin) only. Per channel: the `lbtree.metrics` channel option. Throws a
   * TypeError naming the field when invalid.
   */
  readonly metrics?: MetricsOptions;
}

/**
 * Registers in grpc-js every name lbtree's registry knows, canonical names and aliases alike: the gRFC names
 * (`priority_experimental`, …), the suffix-less names @grpc/grpc-js-xds generates (`priority`, `ring_hash`,
 * `weighted_target`, `xds_wrr_locality`, `least_request`), `lbtree_pick_first` / `lbtree_round_robin`, and
 * custom policies added with `registerPolicy`. `pick_first` / `round_robin` stay grpc-js's unless
 * `replaceBuiltins` (then lbtree's also become grpc-js's default policy). lbtree's parents parse their
 * children through the same registry, so each of these names means the same policy at every depth of a tree.
 * Also registers the `endpoints:` target scheme, and puts a front on grpc-js's `dns` resolver for the targets
 * of lbtree's that grpc-js misreads as DNS names (`endpoints:` with nothing after it; `xds:` targets when no `xds` resolver is registered): they fail with lbtree's
 * error instead of a DNS parse error; every other DNS target goes to grpc-js's resolver. Call it AFTER
 * @grpc/grpc-js-xds's `register()`, whose policies otherwise replace lbtree's under the shared names. Safe to
 * call again. Returns the grpc-js names registered.
 */
export function register(options: RegisterOptions = {}): string[] {
  const registry = options.registry ?? defaultRegistry();
  if (options.metrics !== undefined) {
    addGlobalMetrics(options.metrics);
    reportUnknownMetricNames(options.metrics, 'register({ metrics })');
  }
  enableXds(registry, options.xds);
  recordEveryChannel(options.recorder);
  // lbtree's parents parse their children through this: lbtree's names first, then grpc-js's own.
  const lookup = registry.withFallback(grpcJsOnlyPolicy);
  const names: string[] = [];
  for (const name of registry.allNames()) {
    if (GRPC_JS_BUILTINS.has(name) && !options.replaceBuiltins) continue;
    const classes = grpcPolicyClasses(name, registry.get(name)!, lookup);
    experimental.registerLoadBalancerType(name, classes.LoadBalancer, classes.Config);
    names.push(name);
  }
  experimental.registerResolver(ENDPOINTS_SCHEME, EndpointsResolver);
  frontDnsResolver();
  return names;
}
