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
 */
export class Attributes {
  static readonly EMPTY = new Attributes(new Map());

  private constructor(private readonly entries: ReadonlyMap<AttributeKey<unknown>, unknown>) {}

  static of<T>(key: AttributeKey<T>, value: T): Attributes {
    return Attributes.EMPTY.with(key, value);
  }

  get<T>(key: AttributeKey<T>): T | undefined {
    return this.entries.get(key) as T | undefined;
  }

  has(key: AttributeKey<unknown>): boolean {
    return this.entries.has(key);
  }

  with<T>(key: AttributeKey<T>, value: T): Attributes {
    const next = new Map(this.entries);
    next.set(key, value);
    return new Attributes(next);
  }

  without(key: AttributeKey<unknown>): Attributes {
    if (!this.entries.has(key)) return this;
    const next = new Map(this.entries);
    next.delete(key);
    return next.size === 0 ? Attributes.EMPTY : new Attributes(next);
  }

  get size(): number {
    return this.entries.size;
  }

  keys(): IterableIterator<AttributeKey<unknown>> {
    return this.entries.keys();
  }

  toString(): string {
    const parts = [...this.entries].map(([k, v]) => `${k.name}=${JSON.stringify(v)}`);
    return `{${parts.join(', ')}}`;
  }
}
