import { envFlag } from '../../core/index.js';

/**
 * A113's switch: pick_first's weighted shuffle and the cds tree's normalized endpoint weights. On unless set
 * to `false`, as in grpc-go (1.85.0-dev, internal/envconfig `PickFirstWeightedShuffling`, default true).
 */
export const PF_WEIGHTED_SHUFFLING_ENV = 'GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING';

/** Read at each use, so a test (or an operator restarting nothing) sees the current setting. */
export function weightedShufflingEnabled(): boolean {
  return envFlag(PF_WEIGHTED_SHUFFLING_ENV, true);
}
