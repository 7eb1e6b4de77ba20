// The live view in a real browser: headless Chromium (Debian's `chromium`, driven by playwright-core) opens the
// page of a real grpc-js channel over two loopback backends, finds the LB tree the page draws, and sees a
// backend's subchannel leave READY when the test stops that backend, through the page's server-sent events
// (no reload). Without /usr/bin/chromium this file's one test is skipped, saying how to get it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type AdminServer, startAdminServer } from '../../src/admin/index.js';
import { type Backend, newClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import { liveChannels, METRICS_CHANNEL_OPTION, register } from '../../src/grpc-js/index.js';

const CHROMIUM = '/usr/bin/chromium';
const skip =
  !existsSync(CHROMIUM) &&
  `no ${CHROMIUM}: run \`apt-get install -y chromium\` (as root) to run the browser test`;
if (skip) console.log(`# live view browser test skipped: ${skip}`);

describe('the live view in headless Chromium', { skip }, () => {
  let backends: Backend[];
  let admin: AdminServer;
  let client: ReturnType<typeof newClient>;
  let browser: import('playwright-core').Browser;

  before(async () => {
    register();
    backends = await startBackends(['a', 'b']);
    admin = await startAdminServer({ port: 0, updateIntervalMs: 100 });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    client?.close();
    for (const b of backends) b.stop();
    await browser?.close();
    await admin?.close();
  });

  test('the page draws the tree, then shows the stopped backend leave READY without a reload', async () => {
    const [a, b] = backends as [Backend, Backend];
    const target = `endpoints:p0=${a.address};p0=${b.address}`;
    // The registry lists A66's canonical form of the target (scheme://authority/path).
    const listed = `endpoints:///p0=${a.address};p0=${b.address}`;
    client = newClient(
      target,
      [
        {
          priority_experimental: { children: { p0: { config: [{ round_robin: {} }] } }, priorities: ['p0'] },
        },
      ],
      // The view's metrics without a MeterProvider: A94's disconnections, off unless named.
      { [METRICS_CHANNEL_OPTION]: { enableMetrics: ['grpc.subchannel.disconnections'] } },
    );
    for (let i = 0; i < 4; i++) await whoami(client, { deadlineMs: 10_000 });
    const channel = liveChannels.list().find((c) => c.target === listed);
    assert.ok(channel, `the registry lists ${listed}`);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${admin.url}channels/${channel.id}`);
    // The tree as the policies see it: priority → round_robin → a pick_first per backend, both READY.
    const root = page.locator('#tree > .node[data-policy="priority_experimental"]');
    await root.waitFor({ timeout: 15_000 });
    assert.equal(await root.getAttribute('data-state'), 'READY');
    await page.locator('.node[data-policy="round_robin"]').waitFor({ timeout: 15_000 });
    const row = (address: string, state: string) =>
      page.locator(`tr.subchannel[data-address="${address}"][data-state="${state}"]`);
    await row(a.address, 'READY').waitFor({ timeout: 15_000 });
    await row(b.address, 'READY').waitFor({ timeout: 15_000 });
    assert.match(
      (await page.textContent('#title')) ?? '',
      new RegExp(`Channel ${channel.id}: endpoints:///p0=`),
    );
    const disconnections = page.locator('#metrics tr.metric[data-metric="grpc.subchannel.disconnections"]');
    await disconnections.first().waitFor({ timeout: 15_000 });
    assert.match((await disconnections.first().textContent()) ?? '', /nothing recorded yet/);
    assert.match((await page.textContent('#xds')) ?? '', /no xDS client/);
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));

    b.stop();
    // Reconnecting to a stopped server fails: the row turns TRANSIENT_FAILURE while a stays READY.
    await row(b.address, 'TRANSIENT_FAILURE').waitFor({ timeout: 15_000 });
    assert.equal(await row(a.address, 'READY').count(), 1);
    // The counter moved on the page: one disconnection, labelled with the channel's target.
    const moved = page.locator(
      '#metrics tr.metric[data-metric="grpc.subchannel.disconnections"][data-value="1"]',
    );
    await moved.waitFor({ timeout: 15_000 });
    assert.match((await moved.textContent()) ?? '', /grpc\.target=endpoints:\/\/\/p0=/);
    assert.deepEqual(navigations, [], 'the page updated in place');
    assert.equal(await page.textContent('#connection'), 'live');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
