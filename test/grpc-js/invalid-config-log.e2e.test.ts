import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceModule } from '../support/child-node.js';
import { runWithGrpcEnv } from '../support/grpc-env-child.js';

// min_ring_size with the letter O for a zero: the config does not parse, so grpc-js falls back to pick_first.
const TYPO = { loadBalancingConfig: [{ ring_hash_experimental: { min_ring_size: '1O24' } }] };
const OTHER_TYPO = { loadBalancingConfig: [{ ring_hash_experimental: { max_ring_size: '4O96' } }] };
const VALID = { loadBalancingConfig: [{ least_request_experimental: { choice_count: 3 } }] };
// A child's error is carried to the update (see policy-adapter.ts): with no previous config, RPCs fail with it.
const CHILD_TYPO = {
  loadBalancingConfig: [
    { priority_experimental: { children: { p0: { config: [{ round_robbin: {} }] } }, priorities: ['p0'] } },
  ],
};

// Five real channels, one after another, to a server that answers: two with the same typo (two resolutions of
// one config), one with another typo, one valid, one with a typo in a priority child. Each makes one call.
const CHANNELS = `
  const grpc = await import('@grpc/grpc-js');
  const { register } = await import('${sourceModule('src/grpc-js/index.ts')}');
  register();
  const server = new grpc.Server();
  const same = (b) => b;
  const method = { path: '/lbtree.Test/Echo', requestStream: false, responseStream: false,
    requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same };
  server.addService({ Echo: method }, { Echo: (call, callback) => callback(null, call.request) });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const results = [];
  for (const config of ${JSON.stringify([TYPO, TYPO, OTHER_TYPO, VALID, CHILD_TYPO])}) {
    const client = new grpc.Client('127.0.0.1:' + port, grpc.credentials.createInsecure(),
      { 'grpc.service_config': JSON.stringify(config) });
    results.push(await new Promise((resolve) =>
      client.makeUnaryRequest('/lbtree.Test/Echo', same, same, Buffer.from('hi'), { deadline: Date.now() + 30000 },
        (err, reply) => { client.close(); resolve(err ? 'error ' + err.code : reply.toString()); })));
  }
  console.log(results.join(','));
  server.forceShutdown();`;

test('an invalid lbtree config logs one ERROR line naming its JSON path, at the default verbosity, once per config', async () => {
  const run = await runWithGrpcEnv(CHANNELS);
  assert.equal(run.status, 0, run.stderr);
  // grpc-js falls back to pick_first for the typos: their calls work. The child's error fails its calls.
  assert.equal(run.stdout.trim(), 'hi,hi,hi,hi,error 14');
  const errors = run.stderr.split('\n').filter((l) => l.startsWith('E '));
  assert.equal(errors.length, 3, run.stderr);
  assert.match(
    errors[0]!,
    /^E lbtree: invalid ring_hash_experimental config, not used: \$\.ring_hash_experimental\.min_ring_size: expected an integer, got string "1O24" \(grpc-js goes on to the next loadBalancingConfig entry, or to pick_first when none is left/,
  );
  assert.match(
    errors[1]!,
    /: \$\.ring_hash_experimental\.max_ring_size: expected an integer, got string "4O96"/,
  );
  assert.match(
    errors[2]!,
    /^E lbtree: invalid priority_experimental config, its updates are rejected: \$\.priority_experimental\.children\.p0\.config: no registered LB policy among \[round_robbin\]/,
  );
});
