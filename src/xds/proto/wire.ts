// The protobuf binary wire format (varints, fixed-width values, length-delimited records): just enough to
// read and write the xDS resources lbtree understands. Written from the encoding spec
// (protobuf.dev/programming-guides/encoding); 64-bit integers travel as bigint so none loses precision.

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

export type WireType = 0 | 1 | 2 | 3 | 4 | 5;

/** Malformed binary input. `offset` is the byte position in the buffer being read. */
export class WireError extends Error {
  override readonly name = 'WireError';
  /** The fields being read when the problem was found, outermost first (filled in as the error unwinds). */
  readonly fieldPath: string[] = [];
  constructor(
    readonly problem: string,
    readonly offset: number,
  ) {
    super(`${problem} (at byte ${offset})`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();
const TWO_32 = 0x1_0000_0000;

/** Reads one message's bytes, in order. */
export class WireReader {
  pos: number;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A field tag: the field number and wire type. */
  tag(): { fieldNumber: number; wireType: WireType } {
    const at = this.pos;
    const key = this.uint32();
    const fieldNumber = key >>> 3;
    const wireType = (key & 7) as WireType;
    if (fieldNumber === 0) throw new WireError('field number 0 is invalid', at);
    if (wireType > 5) throw new WireError(`unknown wire type ${wireType}`, at);
    return { fieldNumber, wireType };
  }

  /** A varint as a number when it fits in 53 bits, else as a bigint. Callers narrow it by field type. */
  private varintParts(): { lo: number; hi: number } {
    // Up to 10 bytes, 7 bits each: the low 28 bits, then 4 bits straddling, then the high bits.
    let lo = 0;
    let hi = 0;
    let shift = 0;
    const buf = this.buf;
    const start = this.pos;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint', start);
      const b = buf[this.pos++]!;
      if (shift < 28) {
        lo |= (b & 0x7f) << shift;
      } else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >>> 4;
      } else {
        hi |= (b & 0x7f) << (shift - 32);
      }
      if ((b & 0x80) === 0) return { lo: lo >>> 0, hi: hi >>> 0 };
      shift += 7;
    }
    throw new WireError('varint longer than 10 bytes', start);
  }

  /** uint32 / enum / bool / int32 fields: the low 32 bits (int32 negatives are sign-extended on the wire). */
  uint32(): number {
    // Fast path: one byte.
    if (this.pos < this.end) {
      const b = this.buf[this.pos]!;
      if (b < 0x80) {
        this.pos++;
        return b;
      }
    }
    return this.varintParts().lo;
  }

  int32(): number {
    return this.uint32() | 0;
  }

  uint64(): bigint {
    const { lo, hi } = this.varintParts();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  int64(): bigint {
    return BigInt.asIntN(64, this.uint64());
  }

  sint32(): number {
    const n = this.uint32();
    return (n >>> 1) ^ -(n & 1);
  }

  sint64(): bigint {
    const n = this.uint64();
    return (n >> 1n) ^ -(n & 1n);
  }

  bool(): boolean {
    const { lo, hi } = this.varintParts();
    return lo !== 0 || hi !== 0;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) throw new WireError(`truncated: ${n} more bytes expected`, this.pos);
  }

  fixed32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  sfixed32(): number {
    return this.fixed32() | 0;
  }

  fixed64(): bigint {
    const lo = this.fixed32();
    const hi = this.fixed32();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  sfixed64(): bigint {
    return BigInt.asIntN(64, this.fixed64());
  }

  float(): number {
    this.need(4);
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).getFloat32(0, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    this.need(8);
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }

  /** A length-delimited record's bounds; the reader moves past it. */
  delimited(): { start: number; end: number } {
    const at = this.pos;
    const { lo, hi } = this.varintParts();
    const length = hi * TWO_32 + lo;
    if (this.pos + length > this.end) {
      throw new WireError(`length ${length} runs past the end of the enclosing record`, at);
    }
    const start = this.pos;
    this.pos += length;
    return { start, end: this.pos };
  }

  /** Bytes are returned as a view of the input, not a copy. */
  bytes(): Uint8Array {
    const { start, end } = this.delimited();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const { start, end } = this.delimited();
    try {
      return utf8.decode(this.buf.subarray(start, end));
    } catch {
      throw new WireError('string field is not valid UTF-8', start);
    }
  }

  /** Skips a field of any wire type (groups included, for old encoders). */
  skip(wireType: WireType, fieldNumber: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varintParts();
        return;
      case WIRE_FIXED64:
        this.need(8);
        this.pos += 8;
        return;
      case WIRE_LENGTH_DELIMITED:
        this.delimited();
        return;
      case WIRE_FIXED32:
        this.need(4);
        this.pos += 4;
        return;
      case WIRE_START_GROUP:
        for (;;) {
          if (this.done) throw new WireError(`unterminated group ${fieldNumber}`, this.pos);
          const t = this.tag();
          if (t.wireType === WIRE_END_GROUP) {
            if (t.fieldNumber !== fieldNumber) throw new WireError('mismatched end of group', this.pos);
            return;
          }
          this.skip(t.wireType, t.fieldNumber);
        }
      default:
        throw new WireError(`unexpected end of group ${fieldNumber}`, this.pos);
    }
  }
}

/** Builds one message's bytes. Nested messages are written to their own writer and then embedded. */
export class WireWriter {
  private buf = new Uint8Array(64);
  private len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  tag(fieldNumber: number, wireType: WireType): void {
    this.varint32((fieldNumber << 3) | wireType);
  }

  /** An unsigned 32-bit varint. */
  varint32(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v > 0x7f) {
      this.buf[this.len++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.len++] = v;
  }

  /** A 64-bit varint (two's complement for negatives, so 10 bytes). */
  varint64(value: bigint): void {
    this.ensure(10);
    let v = BigInt.asUintN(64, value);
    while (v > 0x7fn) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  /** int32 and enum values: negatives are sign-extended to 64 bits, as the spec requires. */
  int32(value: number): void {
    if (value >= 0) this.varint32(value);
    else this.varint64(BigInt(value));
  }

  sint32(value: number): void {
    this.varint32(((value << 1) ^ (value >> 31)) >>> 0);
  }

  sint64(value: bigint): void {
    this.varint64(BigInt.asUintN(64, (value << 1n) ^ (value >> 63n)));
  }

  bool(value: boolean): void {
    this.ensure(1);
    this.buf[this.len++] = value ? 1 : 0;
  }

  fixed32(value: number): void {
    this.ensure(4);
    const v = value >>> 0;
    this.buf[this.len++] = v & 0xff;
    this.buf[this.len++] = (v >>> 8) & 0xff;
    this.buf[this.len++] = (v >>> 16) & 0xff;
    this.buf[this.len++] = v >>> 24;
  }

  fixed64(value: bigint): void {
    const v = BigInt.asUintN(64, value);
    this.fixed32(Number(v & 0xffff_ffffn));
    this.fixed32(Number(v >> 32n));
  }

  float(value: number): void {
    this.ensure(4);
    new DataView(this.buf.buffer, this.len, 4).setFloat32(0, value, true);
    this.len += 4;
  }

  double(value: number): void {
    this.ensure(8);
    new DataView(this.buf.buffer, this.len, 8).setFloat64(0, value, true);
    this.len += 8;
  }

  bytes(value: Uint8Array): void {
    this.varint32(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.len);
    this.len += value.length;
  }

  string(value: string): void {
    this.bytes(utf8Encoder.encode(value));
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
