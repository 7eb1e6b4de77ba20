import { count } from '../../count.js';
import { newClient, startBackends } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { Pace } from '../pace.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { describePhase, playStage } from '../stage.js';

const seconds = (ms: number) => `${(ms / 1000).toFixed(3)}s`;

/**
 * outlier_detection_experimental (A50) over round_robin: failure-percentage ejection, at most one of the
 * three backends (34 %). At human pace the ejection lasts one phase, so od-2 returns during the last one.
 */
function outlierDetectionConfig(pace: Pace): unknown[] {
  const phaseMs = pace.durationMs / 3;
  return [
    {
      outlier_detection_experimental: {
        // At least 4 calls per backend per interval even when a loaded machine manages 30 RPCs a second.
        interval: seconds(pace.fast ? 500 : Math.max(500, phaseMs / 6)),
        baseEjectionTime: seconds(pace.fast ? 1000 : phaseMs),
        maxEjectionPercent: 34,
        failurePercentageEjection: { threshold: 30, minimumHosts: 3, requestVolume: 4 },
        childPolicy: [{ round_robin: {} }],
      },
    },
  ];
}

/** One of three backends starts failing half its calls: it is ejected, and after it recovers it returns. */
export async function playOutlierDetection({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const backends = await startBackends(['od-1', 'od-2', 'od-3']);
  const flaky = backends[1]!;
  const client = newClient(
    `endpoints:${backends.map((b) => b.address).join(';')}`,
    outlierDetectionConfig(pace),
    pace.channelOptions,
  );
  const load = new LoadGenerator(client, pace.ratePerSecond);
  // Ejected: the load went on for 40 RPCs since od-2 last received a call.
  let flakyCalls = -1;
  let loadAtLastFlakyCall = 0;
  const ejected = () => {
    const calls = flaky.served + flaky.failed;
    const now = load.total + load.failures;
    if (calls !== flakyCalls) {
      flakyCalls = calls;
      loadAtLastFlakyCall = now;
    }
    return now - loadAtLastFlakyCall >= 40;
  };
  try {
    load.start();
    const phases = await playStage({
      scenario: 'outlier detection',
      view,
      client,
      load,
      backends,
      pace,
      cues: [
        { label: 'round_robin under outlier_detection: od-1, od-2, od-3 share the load' },
        {
          label: 'od-2 starts failing half its calls: its failure percentage is over 30 %',
          action: () => {
            flaky.failEvery = 2;
          },
          settled: ejected,
        },
        {
          label: 'od-2 is ejected (no call fails now) and recovers; after base_ejection_time it serves again',
          action: () => {
            flaky.failEvery = 0;
          },
          settled: (s) => (s.get('od-2') ?? 0) >= 20,
        },
      ],
    });
    await load.stop();
    const [steady, failing, back] = phases;
    return {
      notes: [
        ...phases.map(describePhase),
        `od-2 failed ${count(flaky.failed, 'call')} in all, ${failing?.failures ?? 0} of them before it was ejected`,
      ],
      expectations: [
        {
          description: 'before the failures every backend serves',
          met: backends.every((b) => (steady?.served.get(b.name) ?? 0) > 0),
        },
        {
          description: 'od-2 is ejected after failing (no call reaches it for 40 RPCs in a row)',
          met: (failing?.failures ?? 0) > 0 && failing?.settled === true,
        },
        {
          description:
            'once it is ejected no RPC fails; after it recovers od-2 is un-ejected and serves again',
          met: back?.failures === 0 && (back?.served.get('od-2') ?? 0) > 0,
        },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    for (const b of backends) b.stop();
  }
}
