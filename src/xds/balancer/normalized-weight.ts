// A113 "CDS LB Policy changes": an endpoint's weight is its locality's share of the priority times its own share
// of the locality, both in UQ1.31 fixed point (1 integer bit, 31 fractional bits: 2^31 stands for 1.0), so it
// stays a uint32 and a locality's weights never sum past one. Both steps round down, and a product that
// rounds to 0 becomes 1.

/** 1.0 in UQ1.31. */
export const UQ1_31_ONE = 2 ** 31;
/** Below this, `numerator × 2^31` and any quotient times the denominator are exact in a double. */
const EXACT = 2 ** 53;

/** floor(numerator × 2^31 / denominator), for 0 < numerator ≤ denominator (a share, in UQ1.31). */
export function toUq1_31(numerator: number, denominator: number): number {
  const scaled = numerator * UQ1_31_ONE; // a power of two: exact
  if (denominator * UQ1_31_ONE < EXACT) {
    let q = Math.floor(scaled / denominator);
    // The double quotient may round up across an integer; q × denominator ≤ scaled < 2^53 checks exactly.
    if (q * denominator > scaled) q--;
    return q;
  }
  // Sums past 2^22 (EDS endpoint weights are uint32, so a locality's sum may pass 2^32): exact in BigInt.
  return Number((BigInt(numerator) << 31n) / BigInt(denominator));
}

/** floor(a × b / 2^31) for two UQ1.31 values (each ≤ 2^31), exactly: a × b may reach 2^62. */
export function multiplyUq1_31(a: number, b: number): number {
  const aHigh = Math.floor(a / 0x1_0000);
  const aLow = a % 0x1_0000;
  const high = aHigh * b; // < 2^47
  const low = aLow * b; // < 2^47
  // a × b / 2^31 = high / 2^15 + low / 2^31; split high at 2^15 so the remainder joins low exactly.
  const highQuotient = Math.floor(high / 0x8000);
  const highRemainder = high - highQuotient * 0x8000;
  return highQuotient + Math.floor((highRemainder * 0x1_0000 + low) / UQ1_31_ONE);
}

/** A113: the endpoint's final weight from its normalized locality and endpoint weights; never 0. */
export function endpointWeightUq1_31(localityShare: number, endpointShare: number): number {
  return multiplyUq1_31(localityShare, endpointShare) || 1;
}
