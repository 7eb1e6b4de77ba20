import {
  type ChildOf,
  ConfigReader,
  childPath,
  expectInteger,
  expectObject,
  MAX_UINT32,
  type ParsedLbConfig,
  type PolicyLookup,
} from '../../core/index.js';

export const WEIGHTED_TARGET = 'weighted_target_experimental';

/** A28 `WeightedTargetConfig.Target`. */
export interface WeightedTargetChildConfig {
  /** uint32, at least 1: a target that could never be picked is a config error. */
  readonly weight: number;
  readonly childPolicy: ParsedLbConfig;
}

export interface WeightedTargetConfig {
  readonly targets: ReadonlyMap<string, WeightedTargetChildConfig>;
  /**
   * Which target each endpoint goes to, when a parent names them otherwise than by hierarchical path:
   * xds_wrr_locality (A52), whose targets are the endpoints' own localities. Each endpoint then goes to its
   * target as it is, with no path prepended per endpoint only to be peeled off again. Never from JSON: by
   * default an endpoint goes to the target its path names first (A56).
   */
  readonly childOf?: ChildOf;
}

/** Parses `{ targets: { name: { weight, childPolicy: [...] } } }`, validating every child's config now. */
export function parseWeightedTargetConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): WeightedTargetConfig {
  const reader = new ConfigReader(json, path);
  const targetsField = reader.required('targets');
  const targetsJson = expectObject(targetsField.value, targetsField.path);
  const targets = new Map<string, WeightedTargetChildConfig>();
  for (const name of Object.keys(targetsJson)) {
    const target = new ConfigReader(targetsJson[name], childPath(targetsField.path, name));
    const weight = target.required('weight');
    const childPolicy = target.required('childPolicy');
    targets.set(name, {
      weight: expectInteger(weight.value, weight.path, 1, MAX_UINT32),
      childPolicy: registry.parseLbConfigList(childPolicy.value, childPolicy.path),
    });
  }
  return { targets };
}

/** How long a target removed from the config is kept for reuse (A28: "cached for 15 minutes"). */
export const WEIGHTED_TARGET_CHILD_RETENTION_MS = 15 * 60_000;
