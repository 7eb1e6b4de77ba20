import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceModule } from '../support/child-node.js';
import { runRefusing } from '../support/refused-modules.js';

// `register()` is what every lbtree-on-grpc-js program runs at start-up; the xDS client and its decoders are
// most of lbtree's load time, so they load with the first `xds:` channel and never for other targets.
const XDS_CLIENT_MODULES = [
  '/protos/gen/envoy/',
  '/xds/resources/index.',
  '/xds/client/xds-client.',
  '/xds/resolver/xds-resolution.',
];
const BOOTSTRAP = {
  xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }],
  node: { id: 'lazy-xds-test' },
};

test('register(), even with { xds }, loads neither the xDS client nor its decoders', () => {
  const run = runRefusing(
    XDS_CLIENT_MODULES,
    `const { register } = await import('${sourceModule('src/grpc-js/index.ts')}');
     const names = register({ xds: { bootstrap: ${JSON.stringify(BOOTSTRAP)} } });
     if (!names.includes('xds_cluster_manager_experimental')) process.exit(3);`,
  );
  assert.equal(run.status, 0, run.stderr);
});

test('the first xds: channel loads them; if that fails, its RPCs fail UNAVAILABLE with the reason', () => {
  // Under the same refusal the channel's resolution cannot start: the failure reaches the RPC, not a throw.
  const run = runRefusing(
    XDS_CLIENT_MODULES,
    `const grpc = await import('@grpc/grpc-js');
     const { register } = await import('${sourceModule('src/grpc-js/index.ts')}');
     register({ xds: { bootstrap: ${JSON.stringify(BOOTSTRAP)} } });
     const client = new grpc.Client('xds:///lazy', grpc.credentials.createInsecure());
     client.makeUnaryRequest('/x/y', (b) => b, (b) => b, Buffer.alloc(0), { deadline: Date.now() + 5000 }, (err) => {
       console.log(err.code, err.details);
       client.close();
     });`,
  );
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^14 .*xds resolver: .* was loaded/m);
});
