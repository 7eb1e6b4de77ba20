// Moving unsigned 64-bit values between bigint and a pair of uint32 words. Storing a bigint into a
// BigUint64Array reduces it mod 2^64 and is far cheaper than BigInt shifts and masks, which allocate.

const cell = new BigUint64Array(1);
const words = new Uint32Array(cell.buffer);
// Which half of the cell is the high word depends on the platform's byte order.
const HIGH = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;
const LOW = 1 - HIGH;

/**
 * Writes `value mod 2^64` to `out` as [high 32 bits, low 32 bits]. Never throws for a bigint (negative and
 * oversized values wrap); allocation-free, so pickers can call it on every pick.
 */
export function splitU64(value: bigint, out: Uint32Array): void {
  cell[0] = value;
  out[0] = words[HIGH]!;
  out[1] = words[LOW]!;
}

/** The unsigned 64-bit bigint whose high and low 32-bit words are given. */
export function joinU64(high: number, low: number): bigint {
  words[HIGH] = high;
  words[LOW] = low;
  return cell[0]!;
}
