/**
 * Children (or endpoints, ring entries, priorities) visited by the policies while they apply updates,
 * aggregate states and build pickers: every loop over a policy's children adds its length here. A test reads
 * it to check that n children changing state cost O(n) in total (a connect storm) without timing anything;
 * one addition per loop, so it costs nothing measurable.
 */
export const workMeter = { visits: 0 };
