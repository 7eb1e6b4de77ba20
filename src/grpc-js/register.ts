import { experimental } from '@grpc/grpc-js';
import type { Registry } from '../core/index.js';
import { defaultRegistry } from '../policies/index.js';
import { ENDPOINTS_SCHEME, EndpointsResolver } from './endpoints-resolver.js';
import { grpcPolicyClasses } from './policy-adapter.js';

/** Policies grpc-js ships itself: lbtree takes their names only when asked to. */
const GRPC_JS_BUILTINS = new Set(['pick_first', 'round_robin']);
/** Prefix of the names under which lbtree's versions of grpc-js's built-ins are always available. */
export const LBTREE_PREFIX = 'lbtree_';

export interface RegisterOptions {
  /** Also register lbtree's pick_first and round_robin under grpc-js's own names (default false). */
  readonly replaceBuiltins?: boolean;
  /** The policies to register (default: the process-wide registry, custom policies included). */
  readonly registry?: Registry;
}

/**
 * Registers lbtree's policies in grpc-js under their gRFC names (`priority_experimental`, …), the
 * suffix-less names @grpc/grpc-js-xds uses (`priority`, …), and `lbtree_pick_first` / `lbtree_round_robin`;
 * with `replaceBuiltins`, also as `pick_first` / `round_robin` (and so as grpc-js's default policy). Also
 * registers the `endpoints:` target scheme. Safe to call again. Returns the grpc-js names registered.
 */
export function register(options: RegisterOptions = {}): string[] {
  const registry = options.registry ?? defaultRegistry();
  const names: string[] = [];
  for (const name of registry.names()) {
    const factory = registry.get(name)!;
    const grpcNames = new Set<string>();
    if (GRPC_JS_BUILTINS.has(name)) {
      grpcNames.add(LBTREE_PREFIX + name);
      if (options.replaceBuiltins) grpcNames.add(name);
    } else {
      grpcNames.add(name);
      if (name.endsWith('_experimental')) grpcNames.add(name.slice(0, -'_experimental'.length));
    }
    for (const grpcName of grpcNames) {
      const classes = grpcPolicyClasses(grpcName, factory, registry);
      experimental.registerLoadBalancerType(grpcName, classes.LoadBalancer, classes.Config);
      names.push(grpcName);
    }
  }
  experimental.registerResolver(ENDPOINTS_SCHEME, EndpointsResolver);
  return names;
}
