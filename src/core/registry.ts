import { ConfigError, childPath } from './config-error.js';
import { expectArray, expectObject } from './config-reader.js';
import type { Helper, LoadBalancer, ParsedLbConfig, PolicyFactory, PolicyLookup } from './load-balancer.js';

export interface RegisterOptions {
  /** Replace a policy already registered under the same name. */
  readonly override?: boolean;
}

/** Policies by name. A LoadBalancingConfig list is parsed against it, as gRPC's service config does. */
export class Registry implements PolicyLookup {
  private readonly factories = new Map<string, PolicyFactory>();

  register(factory: PolicyFactory, options: RegisterOptions = {}): void {
    if (this.factories.has(factory.name) && !options.override) {
      throw new Error(
        `LB policy "${factory.name}" is already registered (pass { override: true } to replace it)`,
      );
    }
    this.factories.set(factory.name, factory);
  }

  get(name: string): PolicyFactory | undefined {
    return this.factories.get(name);
  }

  has(name: string): boolean {
    return this.factories.has(name);
  }

  names(): string[] {
    return [...this.factories.keys()];
  }

  /** A new registry with the same policies; changes to either do not reach the other. */
  clone(): Registry {
    const copy = new Registry();
    for (const factory of this.factories.values()) copy.register(factory);
    return copy;
  }

  /**
   * Takes the first entry whose policy is registered and whose config parses. Entries naming unknown
   * policies are skipped. When nothing is usable, the error is the first registered entry's parse error
   * (the most useful thing to show an operator) or, failing that, a list of the names that were offered.
   * A single entry object is accepted as a one-element list.
   */
  parseLbConfigList(json: unknown, path = '$'): ParsedLbConfig {
    const list = Array.isArray(json) ? json : [expectObject(json, path)];
    const asList = Array.isArray(json);
    expectArray(list, path);
    let firstError: ConfigError | undefined;
    const offered: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const entryPath = asList ? childPath(path, i) : path;
      const entry = expectObject(list[i], entryPath);
      const names = Object.keys(entry);
      if (names.length !== 1) {
        throw new ConfigError(entryPath, `each entry must have exactly one policy name, got ${names.length}`);
      }
      const name = names[0]!;
      offered.push(name);
      const factory = this.factories.get(name);
      if (!factory) continue;
      try {
        const config = factory.parseConfig(entry[name] ?? {}, childPath(entryPath, name), this);
        return { factory, config };
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        firstError ??= e;
      }
    }
    if (firstError) throw firstError;
    throw new ConfigError(
      path,
      list.length === 0
        ? 'empty LB policy list'
        : `no registered LB policy among [${offered.join(', ')}] (registered: ${this.names().join(', ')})`,
    );
  }

  /** Builds a policy for an already parsed config. */
  create<C>(parsed: ParsedLbConfig<C>, helper: Helper): LoadBalancer<C> {
    return parsed.factory.create(helper, this);
  }
}
