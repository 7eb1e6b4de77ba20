import {
  booleanArg,
  type ChannelArgs,
  ConfigError,
  ConfigReader,
  childPath,
  describeValue,
  expectArray,
  expectObject,
  numberArg,
  type ParsedLbConfig,
  type PolicyLookup,
} from '../../core/index.js';

export const PRIORITY = 'priority_experimental';

/** A56 "LB Policy Configuration": one named child. */
export interface PriorityChildConfig {
  /** The child's policy, chosen from its LoadBalancingConfig list when the config was parsed. */
  readonly config: ParsedLbConfig;
  /** A37: re-resolution requests from this child are not passed up. */
  readonly ignoreReresolutionRequests: boolean;
}

export interface PriorityConfig {
  readonly children: ReadonlyMap<string, PriorityChildConfig>;
  /** Child names, highest priority first. Every name is a key of `children`; none repeats. */
  readonly priorities: readonly string[];
  /** Position of each name in `priorities` (children that are not listed are absent). */
  readonly priorityOf: ReadonlyMap<string, number>;
}

/**
 * Parses `{ children: { name: { config: [...], ignoreReresolutionRequests } }, priorities: [name, ...] }`.
 * Nested child configs are validated now, each under its own JSON path. Children not named in `priorities`
 * are allowed (and never used).
 */
export function parsePriorityConfig(json: unknown, path: string, registry: PolicyLookup): PriorityConfig {
  const reader = new ConfigReader(json, path);
  const childrenField = reader.required('children');
  const childrenJson = expectObject(childrenField.value, childrenField.path);
  const children = new Map<string, PriorityChildConfig>();
  for (const name of Object.keys(childrenJson)) {
    const child = new ConfigReader(childrenJson[name], childPath(childrenField.path, name));
    const list = child.required('config');
    children.set(name, {
      config: registry.parseLbConfigList(list.value, list.path),
      ignoreReresolutionRequests: child.optionalBoolean('ignoreReresolutionRequests') ?? false,
    });
  }
  const prioritiesField = reader.required('priorities');
  const list = expectArray(prioritiesField.value, prioritiesField.path);
  const priorities: string[] = [];
  const priorityOf = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    const name = list[i];
    const at = childPath(prioritiesField.path, i);
    if (typeof name !== 'string')
      throw new ConfigError(at, `expected a child name, got ${describeValue(name)}`);
    if (!children.has(name)) throw new ConfigError(at, `no child named "${name}" in children`);
    const first = priorityOf.get(name);
    if (first !== undefined) {
      throw new ConfigError(
        at,
        `"${name}" is listed twice (first at ${childPath(prioritiesField.path, first)})`,
      );
    }
    priorityOf.set(name, i);
    priorities.push(name);
  }
  return { children, priorities, priorityOf };
}

/**
 * Channel setting for the failover timeout in ms (C-core's name). Tests and tuning lower it; default 10 s.
 */
export const PRIORITY_FAILOVER_TIMEOUT_ARG = 'grpc.priority_failover_timeout_ms';
export const DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS = 10_000;

/** Channel setting for how long a deactivated child is kept before it is destroyed, in ms; default 15 min. */
export const PRIORITY_CHILD_RETENTION_ARG = 'grpc.priority_child_retention_ms';
export const DEFAULT_PRIORITY_CHILD_RETENTION_MS = 15 * 60_000;

/**
 * A115: whether a child REMOVED from the config is retained (deactivated for the retention interval) rather
 * than destroyed at once. The environment variable A115 names, or this channel setting (which wins), set to
 * `false` turns retention of removed children off; lower priorities left behind are retained either way.
 * Default on, as A56 describes.
 */
export const PRIORITY_CHILD_POLICY_CACHE_ENV = 'GRPC_EXPERIMENTAL_ENABLE_PRIORITY_LB_CHILD_POLICY_CACHE';
export const PRIORITY_CHILD_POLICY_CACHE_ARG = 'grpc.experimental.enable_priority_lb_child_policy_cache';

/** The timer settings one update carries. */
export interface PriorityTimers {
  readonly failoverMs: number;
  readonly retentionMs: number;
  readonly retainRemovedChildren: boolean;
}

export function priorityTimers(args: ChannelArgs): PriorityTimers {
  const env = process.env[PRIORITY_CHILD_POLICY_CACHE_ENV]?.trim().toLowerCase();
  return {
    failoverMs: Math.max(
      0,
      numberArg(args, PRIORITY_FAILOVER_TIMEOUT_ARG, DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS),
    ),
    retentionMs: Math.max(
      0,
      numberArg(args, PRIORITY_CHILD_RETENTION_ARG, DEFAULT_PRIORITY_CHILD_RETENTION_MS),
    ),
    retainRemovedChildren: booleanArg(args, PRIORITY_CHILD_POLICY_CACHE_ARG, env !== 'false'),
  };
}
