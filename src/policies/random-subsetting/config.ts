import {
  ConfigReader,
  expectInteger,
  MAX_UINT32,
  type ParsedLbConfig,
  type PolicyLookup,
} from '../../core/index.js';

export const RANDOM_SUBSETTING = 'random_subsetting_experimental';

/** A68 `RandomSubsettingLbConfig`. */
export interface RandomSubsettingConfig {
  /** How many endpoints the child gets: a uint32 of at least 1. */
  readonly subsetSize: number;
  readonly childPolicy: ParsedLbConfig;
}

/** Parses `{ subsetSize, childPolicy }` (or `subset_size`, `child_policy`); both are required (A68). */
export function parseRandomSubsettingConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): RandomSubsettingConfig {
  const reader = new ConfigReader(json, path);
  const size = reader.required('subsetSize');
  const subsetSize = expectInteger(size.value, size.path, 1, MAX_UINT32);
  const child = reader.required('childPolicy');
  return { subsetSize, childPolicy: registry.parseLbConfigList(child.value, child.path) };
}
