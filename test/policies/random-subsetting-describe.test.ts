// random_subsetting_experimental (A68) as the live view shows it: its subset_size, the endpoints it was given,
// the subset it chose, and its child's node under it; its state is the child's (A68 "Handling Subchannel
// Connectivity State Notifications": the child's reports pass through unchanged).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { startAdminServer } from '../../src/admin/index.js';
import { unavailable } from '../../src/core/index.js';
import { ChannelRegistry } from '../../src/grpc-js/channel-registry.js';
import { RANDOM_SUBSETTING } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';

const SERVERS = Array.from({ length: 6 }, (_, i) => `10.0.0.${i + 1}:443`);
const CONFIG = [{ [RANDOM_SUBSETTING]: { subsetSize: 2, childPolicy: [{ round_robin: {} }] } }];

/** The addresses the tree holds a subchannel for (round_robin connects to every endpoint it is given). */
const connected = (sim: Simulation) => [...sim.subchannels].filter(([, s]) => !s.released).map(([k]) => k);

test('describe(): subset_size, the endpoints offered, the chosen subset, and the child round_robin under it', () => {
  const sim = new Simulation({ seed: 7 });
  sim.update(SERVERS, CONFIG);
  sim.advance(1);
  const node = sim.describe()!;
  assert.equal(node.policy, RANDOM_SUBSETTING);
  assert.equal(node.state, 'READY');
  assert.equal(node.facts?.subset_size, 2);
  assert.equal(node.facts?.endpoints, 6);
  const subset = node.facts?.subset as readonly string[];
  assert.equal(subset.length, 2);
  // The subset shown is the one the child was given: the only addresses connected.
  assert.deepEqual([...subset].sort(), connected(sim).sort());
  assert.equal(node.children?.length, 1);
  const child = node.children![0]!;
  assert.equal(child.name, 'round_robin');
  assert.equal(child.node.policy, 'round_robin');
  assert.equal(child.node.state, 'READY');
  assert.deepEqual(child.node.children?.map((c) => c.name).sort(), [...subset].sort());
});

test("describe(): the child's TRANSIENT_FAILURE and its status show on random_subsetting, as the channel sees them", () => {
  const sim = new Simulation({ seed: 7 });
  for (const a of SERVERS) sim.script(a, 'hang');
  sim.update(SERVERS, CONFIG);
  const subset = connected(sim);
  assert.equal(subset.length, 2);
  for (const a of subset) sim.subchannel(a).setState('TRANSIENT_FAILURE', unavailable(`${a}: refused`));
  sim.flush();
  assert.equal(sim.state, 'TRANSIENT_FAILURE');
  const node = sim.describe()!;
  assert.equal(node.state, 'TRANSIENT_FAILURE');
  assert.equal(node.status?.code, sim.status.code);
  assert.equal(node.status?.details, sim.status.details);
  assert.equal(node.children![0]!.node.state, 'TRANSIENT_FAILURE');
});

test('the live view serves random_subsetting with its facts and its child (JSON of the channel page)', async () => {
  const sim = new Simulation({ seed: 7 });
  sim.update(SERVERS, CONFIG);
  sim.advance(1);
  const registry = new ChannelRegistry();
  const channel = {
    id: registry.nextId(),
    target: 'endpoints:subset',
    createdAt: 0,
    describe: () => sim.describe(),
    xdsDump: () => undefined,
    xdsConfig: () => undefined,
  };
  registry.add(channel);
  const server = await startAdminServer({ port: 0, registry });
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: server.port, path: `/channels/${channel.id}.json` },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const tree = (
      JSON.parse(body) as {
        tree: {
          policy: string;
          state: string;
          facts: Record<string, unknown>;
          children: { name: string; node: { policy: string; subchannels?: unknown; children?: unknown[] } }[];
        };
      }
    ).tree;
    assert.equal(tree.policy, RANDOM_SUBSETTING);
    assert.equal(tree.state, 'READY');
    assert.equal(tree.facts.subset_size, 2);
    assert.equal(tree.facts.endpoints, 6);
    assert.deepEqual([...(tree.facts.subset as string[])].sort(), connected(sim).sort());
    assert.equal(tree.children[0]!.node.policy, 'round_robin');
    assert.equal(tree.children[0]!.node.children?.length, 2);
  } finally {
    await server.close();
    sim.destroy();
  }
});
