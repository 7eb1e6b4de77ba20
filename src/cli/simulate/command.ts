import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { clusterToTreeFromJson, type PlainClusterTree, XdsResourceError } from '../../xds/index.js';
import type { XdsCertificateProviderRef, XdsUpstreamTls } from '../../xds/resources/tls-context.js';
import { xdsClustersOf } from '../../xds/xds-config.js';
import { htmlReport } from './html.js';
import { textReport } from './report.js';
import { runScenario } from './run-scenario.js';
import { parseScenario } from './scenario.js';

export interface SimulateOptions {
  readonly cluster: string;
  readonly endpoints: string;
  readonly scenario: string;
  readonly html?: string;
}

/** YAML is a superset of JSON, so one parser reads both ways people write Envoy resources. */
export function readResource(path: string): unknown {
  try {
    return parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

/**
 * `lbtree simulate`: an xDS cluster (Cluster + ClusterLoadAssignment, proto3-JSON or YAML) turned into
 * lbtree's policy tree, run in the simulator under the scenario; prints the timeline and shares.
 */
export function simulate(options: SimulateOptions, out: (text: string) => void): void {
  // The page is written last: find out now, not after the run, that it cannot be.
  if (options.html) checkWritable(options.html);
  const endpoints = readResource(options.endpoints);
  checkLocalityWeights(endpoints, options.endpoints);
  const scenario = parseScenario(readResource(options.scenario));
  // Every Envoy field is known (the generated protos are complete), so an unknown one is a typo: it is
  // rejected with its JSON path rather than silently dropped.
  const tree = withScenarioHint(() =>
    clusterToTreeFromJson(readResource(options.cluster), endpoints, {
      certificateProviderInstances: scenario.certificateProviders,
    }),
  );
  const report = runScenario(tree, scenario);
  const title = `lbtree simulate: ${options.cluster} + ${options.endpoints} under ${options.scenario}`;
  out(`${title}\n\nroot LB config: ${JSON.stringify(tree.config)}\n`);
  const tls = clusterTls(tree);
  if (tls !== undefined)
    out(`transport security: ${describeTls(tls)} (shown only: the simulator makes no connections)\n`);
  const timeline = textReport(report);
  out(`${timeline}\n`);
  if (options.html) {
    writeFileSync(options.html, htmlReport(report, title, timeline, scenario));
    out(`\nwrote ${options.html}\n`);
  }
}

function checkWritable(path: string): void {
  try {
    closeSync(openSync(path, 'w'));
  } catch (e) {
    throw new Error(`--html ${path}: cannot write the page (${(e as Error).message})`);
  }
}

/**
 * An EDS locality without load_balancing_weight (or with 0) is ignored by gRPC clients (gRFC A27), so it
 * would never get traffic; when every locality of a priority is like that the priority policy is left with
 * nothing to balance. Say so, naming the locality, instead of letting either happen silently.
 */
function checkLocalityWeights(assignment: unknown, file: string): void {
  const localities = (assignment as { endpoints?: unknown } | null)?.endpoints;
  if (!Array.isArray(localities)) return;
  localities.forEach((l: Record<string, unknown> | null, i) => {
    const weight = l?.load_balancing_weight ?? l?.loadBalancingWeight;
    const value =
      typeof weight === 'object' && weight !== null ? (weight as { value?: unknown }).value : weight;
    if (value === undefined || Number(value) === 0) {
      const name = JSON.stringify(l?.locality ?? {});
      throw new Error(
        `${file}: endpoints[${i}] (locality ${name}) has no load_balancing_weight; gRPC ignores a locality ` +
          'without a positive weight (gRFC A27), so it would get no traffic. Give it a weight such as 1.',
      );
    }
  });
}

/** The simulator has no bootstrap: an unknown provider instance is declared in the scenario instead. */
function withScenarioHint<T>(build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof XdsResourceError && e.field.endsWith('instance_name')) {
      throw new Error(
        `${e.message}; lbtree simulate has no bootstrap: declare the instance in the scenario's certificate_providers`,
      );
    }
    throw e;
  }
}

/** The cluster's A29 UpstreamTlsContext as validated, from the attributes the tree is delivered with. */
function clusterTls(tree: PlainClusterTree): XdsUpstreamTls | undefined {
  const clusters = xdsClustersOf(tree.attributes);
  for (const entry of clusters?.clusters.values() ?? []) {
    if (entry.ok && entry.value.cluster.upstreamTls !== undefined) return entry.value.cluster.upstreamTls;
  }
  return undefined;
}

function describeTls(tls: XdsUpstreamTls): string {
  const provider = (ref: XdsCertificateProviderRef) =>
    `certificate provider "${ref.instanceName}"${ref.certificateName === '' ? '' : ` (certificate "${ref.certificateName}")`}`;
  const roots =
    tls.caCertificates.kind === 'provider'
      ? provider(tls.caCertificates.provider)
      : 'the system root certificates (A82)';
  const identity =
    tls.identityCertificate === undefined
      ? 'no client certificate'
      : `identity from ${provider(tls.identityCertificate)}`;
  const sans =
    tls.matchSubjectAltNames.length === 0
      ? 'any SAN'
      : `SAN ${tls.matchSubjectAltNames.map((m) => (m.kind === 'safe_regex' ? `safe_regex ${JSON.stringify(m.regex.patternInput)}` : `${m.kind} ${JSON.stringify(m.value)}`)).join(' or ')}`;
  return `TLS (A29), roots from ${roots}, ${identity}, ${sans}`;
}
