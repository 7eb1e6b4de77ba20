// Bad input on real grpc-js channels with lbtree registered (issue 9, issue 10 §2): each case ends in a
// prompt, explained RPC failure or in the next usable config, never in an exception or a wait until the
// deadline.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { MAX_LB_CONFIG_DEPTH } from '../../src/core/index.js';
import { register } from '../../src/grpc-js/index.js';

/** Runs one RPC and returns how it ended and how long it took. */
async function outcome(
  client: ReturnType<typeof newClient>,
  options: Parameters<typeof whoami>[1] = {},
): Promise<{ ok: string | null; code: number | null; message: string; ms: number }> {
  const start = Date.now();
  try {
    const name = await whoami(client, { deadlineMs: 10_000, ...options });
    return { ok: name, code: null, message: '', ms: Date.now() - start };
  } catch (e) {
    const error = e as Error & { code?: number };
    return { ok: null, code: error.code ?? null, message: error.message, ms: Date.now() - start };
  }
}

/**
 * A service config whose LB config nests `levels` priority policies, written as text: JSON.stringify itself
 * overflows the stack on an object this deep.
 */
function nestedPriorityServiceConfig(levels: number): string {
  const open = '{"priority_experimental":{"priorities":["c"],"children":{"c":{"config":[';
  const close = ']}}}}';
  return `{"loadBalancingConfig":[${open.repeat(levels)}{"lbtree_round_robin":{}}${close.repeat(levels)}]}`;
}

describe('bad input on a real grpc-js channel', () => {
  let backend: Backend;
  const clients: ReturnType<typeof newClient>[] = [];
  const client = (target: string, config: unknown[]) => {
    const c = newClient(target, config);
    clients.push(c);
    return c;
  };
  before(async () => {
    register();
    [backend] = (await startBackends(['a'])) as [Backend];
  });
  after(() => {
    for (const c of clients) c.close();
    backend.stop();
  });

  for (const levels of [1_000, 3_000]) {
    test(`a priority config nested ${levels} levels deep: RPCs fail at once with the ConfigError and its path`, async () => {
      const c = new BackendClient(`endpoints:${backend.address}`, grpc.credentials.createInsecure(), {
        'grpc.service_config': nestedPriorityServiceConfig(levels),
      });
      clients.push(c);
      const result = await outcome(c);
      assert.equal(result.code, 14, result.message);
      assert.match(
        result.message,
        new RegExp(
          `\\$\\.priority_experimental\\.children\\.c\\.config\\[0\\].*: LB policy configs nested more than ${MAX_LB_CONFIG_DEPTH} levels deep`,
        ),
      );
      assert.ok(result.ms < 5_000, `failed after ${result.ms} ms`);
    });
  }

  test('an entry whose own fields are invalid is skipped: grpc-js falls through to the next entry', async () => {
    const c = client(`endpoints:${backend.address}`, [
      { lbtree_pick_first: { shuffleAddressList: 'yes' } },
      { ring_hash_experimental: { minRingSize: 0 } },
      { lbtree_round_robin: {} },
    ]);
    assert.equal((await outcome(c)).ok, 'a');
  });

  test('a priority child with an invalid config: RPCs fail with the child’s path, not with a fallback', async () => {
    const c = client(`endpoints:${backend.address}`, [
      {
        priority_experimental: {
          children: { p0: { config: [{ ring_hash: { min_ring_size: 0 } }] } },
          priorities: ['p0'],
        },
      },
      { lbtree_round_robin: {} },
    ]);
    const result = await outcome(c);
    assert.equal(result.code, 14);
    assert.match(
      result.message,
      /\$\.priority_experimental\.children\.p0\.config\[0\]\.ring_hash\.min_ring_size: 0 is out of range/,
    );
  });

  test('ring_hash without a request hash: wait-for-ready RPCs fail at once with INTERNAL (issue 10 §2)', async () => {
    const c = client(`endpoints:${backend.address}`, [{ ring_hash_experimental: {} }]);
    for (const waitForReady of [false, true]) {
      const result = await outcome(c, { waitForReady });
      assert.equal(result.code, 13, `${waitForReady ? 'wait-for-ready' : 'plain'}: ${result.message}`);
      assert.match(result.message, /no request hash/);
      assert.ok(result.ms < 5_000, `failed after ${result.ms} ms`);
    }
  });

  test('an invalid endpoints: target fails non-wait-for-ready RPCs at once with the resolver’s error', async () => {
    for (const config of [
      [{ lbtree_round_robin: {} }],
      [{ priority_experimental: { children: {}, priorities: [] } }],
    ]) {
      const c = client('endpoints:127.0.0.1:notaport', config);
      const result = await outcome(c);
      assert.equal(result.code, 14, result.message);
      assert.match(result.message, /invalid endpoints: target "127\.0\.0\.1:notaport"/);
      assert.ok(result.ms < 5_000, `failed after ${result.ms} ms`);
    }
  });

  test('an empty endpoints: target fails with the endpoints resolver’s error, not a DNS parse error', async () => {
    // grpc-js reads "endpoints:" (no path) as a DNS name; lbtree's front on the dns scheme takes it back.
    const result = await outcome(client('endpoints:', [{ lbtree_round_robin: {} }]));
    assert.equal(result.code, 14, result.message);
    assert.match(result.message, /invalid endpoints: target "": empty endpoint list/);
    assert.ok(result.ms < 5_000, `failed after ${result.ms} ms`);
  });

  test('an xds: target without an xds resolver registered fails naming register({ xds: true })', async () => {
    // register() ran without { xds }: grpc-js has no resolver for the scheme and reads the target as a DNS name.
    for (const target of ['xds:///my-service', 'xds://authority.example/my-service']) {
      const result = await outcome(client(target, [{ lbtree_round_robin: {} }]));
      assert.equal(result.code, 14, result.message);
      assert.ok(
        result.message.includes(
          `no resolver is registered for xds: targets, so grpc-js read "${target}" as a DNS name: ` +
            'call register({ xds: true }) from lbtree/grpc-js',
        ),
        result.message,
      );
      assert.ok(result.ms < 5_000, `failed after ${result.ms} ms`);
    }
  });

  test('DNS targets still resolve through grpc-js’s DNS resolver, behind the front', async () => {
    const port = backend.address.slice(backend.address.lastIndexOf(':') + 1);
    for (const target of [`localhost:${port}`, `dns:localhost:${port}`, `dns:///127.0.0.1:${port}`]) {
      assert.equal((await outcome(client(target, [{ lbtree_round_robin: {} }]))).ok, 'a', target);
    }
  });
});
