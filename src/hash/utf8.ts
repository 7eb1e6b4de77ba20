const encoder = new TextEncoder();

/**
 * A reusable UTF-8 buffer: hashing a string (a header value on the pick path, a ring key while building the
 * ring) then allocates nothing. `bytes[0, length)` holds the text last set.
 */
export class Utf8Buffer {
  bytes = new Uint8Array(64);
  length = 0;

  /** Replaces the content with `text` encoded as UTF-8. */
  set(text: string): this {
    const n = text.length;
    // A UTF-16 unit never needs more than 3 bytes.
    this.reserve(n * 3);
    const bytes = this.bytes;
    // ASCII, the usual case for addresses and header values, is copied by hand: faster than encodeInto for
    // short strings.
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        this.length = encoder.encodeInto(text, bytes).written;
        return this;
      }
      bytes[i] = c;
    }
    this.length = n;
    return this;
  }

  /** Makes room for `size` bytes (the content is kept). */
  reserve(size: number): void {
    if (size <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(size, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}
