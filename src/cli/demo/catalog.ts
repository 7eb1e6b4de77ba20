// The demo's scenarios as `--help` and the argument check see them: names and summaries, with each scenario's
// code (real grpc-js servers and channels) loaded only when it is played, so that `lbtree --help` and
// `lbtree simulate` run without @grpc/grpc-js installed.
import type { Scenario } from './scenario.js';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'round-robin',
    summary: 'round_robin over 3 backends; one goes away mid-load and comes back',
    run: async (context) => (await import('./scenarios/round-robin.js')).playRoundRobin(context),
  },
  {
    name: 'happy-eyeballs',
    summary: 'one endpoint [hanging 127.0.0.1, good address]; pick_first races them 250 ms apart',
    run: async (context) => (await import('./scenarios/happy-eyeballs.js')).playHappyEyeballs(context),
  },
  {
    name: 'priority-failover',
    summary: 'priority_experimental over two zones; priority 0 dies mid-load and comes back',
    run: async (context) => (await import('./scenarios/priority-failover.js')).playPriorityFailover(context),
  },
  {
    name: 'ring-hash-affinity',
    summary: 'ring_hash_experimental hashing the x-user header; one backend dies and comes back',
    run: async (context) => (await import('./scenarios/ring-hash-affinity.js')).playRingHashAffinity(context),
  },
  {
    name: 'xds',
    summary:
      'lbtree’s control plane → xds:/// channel: locality weights, priority outage, RR → ring_hash, a NACK',
    run: async (context) => (await import('./scenarios/xds.js')).playXds(context),
  },
  {
    name: 'outlier-detection',
    summary: 'outlier_detection over 3 backends; one starts failing half its calls, is ejected, returns',
    run: async (context) => (await import('./scenarios/outlier-detection.js')).playOutlierDetection(context),
  },
  {
    name: 'weighted-round-robin',
    summary: 'weighted_round_robin from ORCA utilization 0.2 / 0.4 / 0.8; one backend turns busy',
    run: async (context) =>
      (await import('./scenarios/weighted-round-robin.js')).playWeightedRoundRobin(context),
  },
];
