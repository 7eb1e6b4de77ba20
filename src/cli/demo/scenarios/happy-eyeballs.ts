import { Backend, Blackhole, newClient, whoami } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { playStage } from '../stage.js';

/** A dual-stack endpoint whose first address hangs: Happy Eyeballs connects through the second. */
export async function playHappyEyeballs({ view, pace, ipv6 }: ScenarioContext): Promise<ScenarioResult> {
  const hole = await new Blackhole('127.0.0.1').start();
  const good = await new Backend('dual-stack', ipv6 ? '::1' : '127.0.0.1').start();
  const target = `endpoints:${hole.address},${good.address}`;
  view.event(`endpoint [${hole.address} (accepts TCP, never answers), ${good.address}] with pick_first`);
  const client = newClient(target, [{ lbtree_pick_first: {} }], pace.channelOptions);
  const load = new LoadGenerator(client, pace.ratePerSecond / 2, 2);
  try {
    const started = Date.now();
    await whoami(client, { waitForReady: true, deadlineMs: 10_000 });
    const firstMs = Date.now() - started;
    view.event(`first RPC completed after ${firstMs} ms through ${good.address}`);
    load.start();
    await playStage({
      scenario: 'Happy Eyeballs',
      view,
      client,
      load,
      backends: [good],
      pace: pace.fast ? pace : { ...pace, durationMs: Math.min(pace.durationMs, 4000) },
      cues: [{ label: `all traffic on ${good.address}; ${hole.address} was abandoned` }],
    });
    await load.stop();
    return {
      notes: [`first RPC after ${firstMs} ms (Connection Attempt Delay 250 ms + connect)`],
      expectations: [
        {
          description: 'the first RPC completes through the good address in under 2 s',
          met: firstMs < 2000,
        },
        { description: 'no RPC failed', met: load.failures === 0 },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    hole.stop();
    good.stop();
  }
}
