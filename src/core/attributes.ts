/** A typed key for {@link Attributes}. Identity is the key object, so two keys never collide by name. */
export class AttributeKey<T> {
  declare readonly _type?: T;
  constructor(readonly name: string) {}
  toString(): string {
    return this.name;
  }
}

/**
 * An immutable map from typed keys to values. `with` returns a new map; the original is never changed, so
 * attributes can be shared between endpoints, updates and children without copying.
 *
 * Kept as two short parallel arrays: an endpoint carries a handful of attributes, a linear scan over them is
 * faster than hashing, and deriving one (each level of a tree peels or adds a path element, per endpoint
 * when each has its own locality) copies a few slots instead of building a Map.
 */
export class Attributes {
  static readonly EMPTY = new Attributes([], []);

  private constructor(
    private readonly keyList: readonly AttributeKey<unknown>[],
    private readonly valueList: readonly unknown[],
    /**
     * The map this one was made from by `with` adding its last key, or null: removing that key again gives
     * `base` back itself, not a copy (a parent prepends a path element per endpoint, the child below peels it
     * off, and the endpoints underneath see their own attributes again, by identity).
     */
    private readonly base: Attributes | null = null,
  ) {}

  static of<T>(key: AttributeKey<T>, value: T): Attributes {
    return new Attributes([key], [value]);
  }

  get<T>(key: AttributeKey<T>): T | undefined {
    const keys = this.keyList;
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) return this.valueList[i] as T;
    return undefined;
  }

  has(key: AttributeKey<unknown>): boolean {
    return this.keyList.includes(key);
  }

  with<T>(key: AttributeKey<T>, value: T): Attributes {
    const at = this.keyList.indexOf(key);
    if (at >= 0) {
      const values = this.valueList.slice();
      values[at] = value;
      return new Attributes(this.keyList, values);
    }
    // Arrays of the exact size: a push would reserve 17 more slots in each, kept on every endpoint that has
    // attributes of its own (a locality per endpoint).
    const n = this.keyList.length;
    const keys = new Array<AttributeKey<unknown>>(n + 1);
    const values = new Array<unknown>(n + 1);
    for (let i = 0; i < n; i++) {
      keys[i] = this.keyList[i]!;
      values[i] = this.valueList[i];
    }
    keys[n] = key;
    values[n] = value;
    return new Attributes(keys, values, this);
  }

  without(key: AttributeKey<unknown>): Attributes {
    const at = this.keyList.indexOf(key);
    if (at < 0) return this;
    if (this.base !== null && at === this.keyList.length - 1) return this.base;
    if (this.keyList.length === 1) return Attributes.EMPTY;
    const keys = this.keyList.slice();
    const values = this.valueList.slice();
    keys.splice(at, 1);
    values.splice(at, 1);
    return new Attributes(keys, values);
  }

  get size(): number {
    return this.keyList.length;
  }

  /**
   * Whether `other` holds the same keys in the same order, with equal values: the same value (`Object.is`),
   * or arrays of the same values (a hierarchical path). A resolver re-delivering a list builds new attribute
   * objects with equal contents; other values (objects) must be the same object to count as equal.
   */
  equals(other: Attributes): boolean {
    if (other === this) return true;
    const keys = this.keyList;
    const otherKeys = other.keyList;
    if (keys.length !== otherKeys.length) return false;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== otherKeys[i] || !sameValue(this.valueList[i], other.valueList[i])) return false;
    }
    return true;
  }

  keys(): IterableIterator<AttributeKey<unknown>> {
    return this.keyList.values();
  }

  toString(): string {
    const parts = this.keyList.map((k, i) => `${k.name}=${JSON.stringify(this.valueList[i])}`);
    return `{${parts.join(', ')}}`;
  }
}

/** {@link Attributes.equals}'s value equality: `Object.is`, or arrays of `Object.is`-equal values. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
