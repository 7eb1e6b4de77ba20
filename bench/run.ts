/**
 * `npm run bench`: every benchmark section, lbtree beside the comparison implementation measured in the
 * same run. `npm run bench -- <name>` runs the sections whose name contains <name>.
 */

import { runAdapterBench } from './adapter.js';
import { runEdsDecodeBench } from './eds-decode.js';
import { runEdsPushTurnsBench } from './eds-push-turns.js';
import { runMetricsBench } from './metrics.js';
import { runPriorityBench } from './priority.js';
import { runRecorderBench } from './recorder.js';
import { runRegexRewriteBench } from './regex-rewrite.js';
import { runRingHashBench } from './ring-hash.js';
import { runRoundRobinBench } from './round-robin.js';
import { runStormBench } from './storm.js';
import { runStormRoundsBench } from './storm-rounds.js';
import { runWeightedRoundRobinBench } from './weighted-round-robin.js';
import { runXdsChannelBench } from './xds-channel.js';
import { runXdsChannelBlocksBench } from './xds-channel-blocks.js';
import { runXdsChannelCostBench } from './xds-channel-cost.js';
import { runXdsClientBench } from './xds-client.js';
import { runXdsEdsStallBench } from './xds-eds-stall.js';
import { runXdsIstioOverheadBench } from './xds-istio-overhead.js';

const sections: Record<string, () => void | Promise<void>> = {
  'round-robin': runRoundRobinBench,
  adapter: runAdapterBench,
  priority: runPriorityBench,
  'ring-hash': runRingHashBench,
  'regex-rewrite': runRegexRewriteBench,
  storm: runStormBench,
  'storm-rounds': runStormRoundsBench,
  'xds-client': runXdsClientBench,
  'xds-channel': runXdsChannelBench,
  'xds-channel-cost': runXdsChannelCostBench,
  'xds-channel-blocks': runXdsChannelBlocksBench,
  'xds-istio-overhead': runXdsIstioOverheadBench,
  'weighted-round-robin': runWeightedRoundRobinBench,
  'eds-decode': runEdsDecodeBench,
  recorder: runRecorderBench,
  metrics: runMetricsBench,
  'xds-eds-stall': runXdsEdsStallBench,
  'eds-push-turns': runEdsPushTurnsBench,
};

const filter = process.argv.slice(2);
console.log(`# lbtree benchmarks (node ${process.version}, ${process.platform}/${process.arch})`);
for (const [name, run] of Object.entries(sections)) {
  if (filter.length > 0 && !filter.some((f) => name.includes(f))) continue;
  await run();
}
