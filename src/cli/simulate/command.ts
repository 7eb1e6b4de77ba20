import { readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { clusterToTreeFromJson } from '../../xds/index.js';
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
function readResource(path: string): unknown {
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
  // Every Envoy field is known (the generated protos are complete), so an unknown one is a typo: it is
  // rejected with its JSON path rather than silently dropped.
  const tree = clusterToTreeFromJson(readResource(options.cluster), readResource(options.endpoints));
  const scenario = parseScenario(readResource(options.scenario));
  const report = runScenario(tree, scenario);
  const title = `lbtree simulate: ${options.cluster} + ${options.endpoints} under ${options.scenario}`;
  out(`${title}\n\nroot LB config: ${JSON.stringify(tree.config)}\n`);
  const timeline = textReport(report);
  out(`${timeline}\n`);
  if (options.html) {
    writeFileSync(options.html, htmlReport(report, title, timeline));
    out(`\nwrote ${options.html}\n`);
  }
}
