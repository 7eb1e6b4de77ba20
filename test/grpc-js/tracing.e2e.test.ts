import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceModule } from '../support/child-node.js';
import { runWithGrpcEnv } from '../support/grpc-env-child.js';

// A process with two real channels: an `endpoints:` channel running lbtree's priority policy, and an `xds:`
// channel whose xDS client streams to a server that has no ADS service. Each makes one call and the process
// exits when both have their answer, so every trace line the run writes is in its stderr by then.
const TWO_CHANNELS = `
  const grpc = await import('@grpc/grpc-js');
  const { register } = await import('${sourceModule('src/grpc-js/index.ts')}');
  const server = new grpc.Server();
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const address = '127.0.0.1:' + port;
  register({ xds: { bootstrap: { xds_servers: [{ server_uri: address, channel_creds: [{ type: 'insecure' }] }], node: { id: 'tracing-test' } } } });
  const call = (client) => new Promise((resolve) =>
    client.makeUnaryRequest('/lbtree.Test/Call', (b) => b, (b) => b, Buffer.alloc(0), { deadline: Date.now() + 30000 }, (err) => {
      client.close();
      resolve(err.code);
    }));
  const config = { loadBalancingConfig: [{ priority_experimental: { children: { p0: { config: [{ round_robin: {} }] } }, priorities: ['p0'] } }] };
  const insecure = grpc.credentials.createInsecure();
  const priority = new grpc.Client('endpoints:p0=' + address, insecure, { 'grpc.service_config': JSON.stringify(config) });
  const xds = new grpc.Client('xds:///tracing-test', insecure);
  console.log((await Promise.all([call(priority), call(xds)])).join(' '));
  server.forceShutdown();`;

/** The trace lines of one run, by the tracer they were logged under. */
async function traceLines(env: Record<string, string>) {
  const run = await runWithGrpcEnv(TWO_CHANNELS, env);
  assert.equal(run.status, 0, run.stderr);
  // UNIMPLEMENTED from the server through priority; UNAVAILABLE from the xds: channel, whose stream failed.
  assert.equal(run.stdout.trim(), '12 14');
  const lines = (pattern: RegExp) => run.stderr.split('\n').filter((l) => pattern.test(l));
  return {
    priority: lines(/ \| priority_experimental: priority: creating child p0$/),
    xdsClient: lines(/ \| xds client: starting ADS stream 1 to 127\.0\.0\.1:\d+$/),
  };
}

const tagOf = (line: string | undefined) => line?.split(' | ')[2];

test('GRPC_TRACE names lbtree tracers as grpc-js names its own: xds_client, priority, lbtree for all of them, all, -name', async () => {
  const debug = { GRPC_VERBOSITY: 'DEBUG' };
  const [xdsClient, priority, lbtree, all, lbtreeWithoutPriority, notDebug] = await Promise.all([
    traceLines({ ...debug, GRPC_TRACE: 'xds_client' }),
    traceLines({ ...debug, GRPC_TRACE: 'priority' }),
    traceLines({ ...debug, GRPC_TRACE: 'lbtree' }),
    traceLines({ ...debug, GRPC_TRACE: 'all' }),
    traceLines({ ...debug, GRPC_TRACE: 'lbtree,-priority' }),
    traceLines({ GRPC_TRACE: 'xds_client,priority' }),
  ]);

  assert.equal(xdsClient.xdsClient.length, 1);
  assert.equal(tagOf(xdsClient.xdsClient[0]), 'xds_client');
  assert.deepEqual(xdsClient.priority, [], 'GRPC_TRACE=xds_client leaves priority off');

  assert.equal(priority.priority.length, 1);
  assert.equal(tagOf(priority.priority[0]), 'priority');
  assert.deepEqual(priority.xdsClient, [], 'GRPC_TRACE=priority leaves xds_client off');

  assert.equal(tagOf(lbtree.priority[0]), 'lbtree');
  assert.equal(tagOf(lbtree.xdsClient[0]), 'lbtree');

  assert.equal(tagOf(all.priority[0]), 'priority');
  assert.equal(tagOf(all.xdsClient[0]), 'xds_client');

  assert.deepEqual(lbtreeWithoutPriority.priority, [], '-priority turns priority off under lbtree');
  assert.equal(tagOf(lbtreeWithoutPriority.xdsClient[0]), 'lbtree');

  // Trace lines are DEBUG lines: grpc-js's default verbosity (ERROR) prints none.
  assert.deepEqual(notDebug, { priority: [], xdsClient: [] });
});
