import { asConfigError, parseNested } from './config-depth.js';
import { ConfigError, childPath } from './config-error.js';
import { expectArray, expectObject } from './config-reader.js';
import type { Helper, LoadBalancer, ParsedLbConfig, PolicyFactory, PolicyLookup } from './load-balancer.js';

export interface RegisterOptions {
  /** Replace a policy (or alias) already registered under the same name. */
  readonly override?: boolean;
  /**
   * Further names the policy answers to at every depth of a tree, e.g. `priority` for
   * `priority_experimental` (the names @grpc/grpc-js-xds generates).
   */
  readonly aliases?: readonly string[];
}

/**
 * Policies by name. A LoadBalancingConfig list is parsed against it, as gRPC's service config does. Each
 * policy has one canonical name (`factory.name`) and may have aliases; an alias is looked up through the
 * canonical name, so replacing a policy replaces it under all its names.
 */
export class Registry implements PolicyLookup {
  private readonly factories = new Map<string, PolicyFactory>();
  /** alias → canonical name. */
  private readonly aliasOf = new Map<string, string>();

  register(factory: PolicyFactory, options: RegisterOptions = {}): void {
    const aliases = options.aliases ?? [];
    for (const name of [factory.name, ...aliases]) {
      if (!options.override && this.has(name)) {
        throw new Error(`LB policy "${name}" is already registered (pass { override: true } to replace it)`);
      }
    }
    this.aliasOf.delete(factory.name);
    this.factories.set(factory.name, factory);
    for (const alias of aliases) this.addAlias(alias, factory.name);
  }

  /** Makes `alias` another name of the registered policy `name`. */
  addAlias(alias: string, name: string): void {
    const canonical = this.canonicalName(name);
    if (canonical === undefined) throw new Error(`cannot alias "${alias}": no LB policy "${name}"`);
    if (alias === canonical) return;
    this.factories.delete(alias);
    this.aliasOf.set(alias, canonical);
  }

  /** The canonical name `name` stands for (itself for a canonical name), or undefined when unknown. */
  canonicalName(name: string): string | undefined {
    if (this.factories.has(name)) return name;
    const canonical = this.aliasOf.get(name);
    return canonical !== undefined && this.factories.has(canonical) ? canonical : undefined;
  }

  get(name: string): PolicyFactory | undefined {
    const canonical = this.canonicalName(name);
    return canonical === undefined ? undefined : this.factories.get(canonical);
  }

  has(name: string): boolean {
    return this.canonicalName(name) !== undefined;
  }

  /** Canonical names. */
  names(): string[] {
    return [...this.factories.keys()];
  }

  /** The aliases of the canonical policy `name`. */
  aliasesOf(name: string): string[] {
    const aliases: string[] = [];
    for (const [alias, canonical] of this.aliasOf) if (canonical === name) aliases.push(alias);
    return aliases;
  }

  /** Every name that resolves: canonical names and aliases. */
  allNames(): string[] {
    return [...this.factories.keys(), ...[...this.aliasOf.keys()].filter((a) => this.has(a))];
  }

  /** A new registry with the same policies and aliases; changes to either do not reach the other. */
  clone(): Registry {
    const copy = new Registry();
    for (const factory of this.factories.values()) copy.register(factory);
    for (const [alias, canonical] of this.aliasOf) copy.addAlias(alias, canonical);
    return copy;
  }

  /**
   * Takes the first entry whose policy is registered and whose config parses. Entries naming unknown
   * policies are skipped. When nothing is usable, the error is the first registered entry's parse error
   * (the most useful thing to show an operator) or, failing that, a list of the names that were offered.
   * A single entry object is accepted as a one-element list. Whatever a policy's parser throws comes out as
   * a ConfigError naming the entry, and lists nested more than MAX_LB_CONFIG_DEPTH deep are rejected.
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
      const factory = this.get(name);
      if (!factory) continue;
      const configPath = childPath(entryPath, name);
      try {
        const config = parseNested(configPath, () =>
          factory.parseConfig(entry[name] ?? {}, configPath, this),
        );
        return { factory, config };
      } catch (e) {
        firstError ??= asConfigError(e, configPath, name);
      }
    }
    if (firstError) throw firstError;
    throw new ConfigError(
      path,
      list.length === 0
        ? 'empty LB policy list'
        : `no registered LB policy among [${offered.join(', ')}] (registered: ${this.allNames().join(', ')})`,
    );
  }

  /** Builds a policy for an already parsed config. */
  create<C>(parsed: ParsedLbConfig<C>, helper: Helper): LoadBalancer<C> {
    return parsed.factory.create(helper, this);
  }
}
