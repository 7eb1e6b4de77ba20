import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError } from '../../../src/core/index.js';
import {
  loadBootstrap,
  parseBootstrap,
  type XdsBootstrapJson,
  xdsServerKey,
} from '../../../src/xds/client/bootstrap.js';

const INSECURE = [{ type: 'insecure' }];

function rejects(json: unknown, path: string, problem: RegExp): void {
  assert.throws(
    () => parseBootstrap(json),
    (e: unknown) => e instanceof ConfigError && e.path === path && problem.test(e.problem),
    `expected ${path}: ${problem}`,
  );
}

describe('xDS bootstrap (A27 "XdsClient and Bootstrap File", A53 / A88 server features)', () => {
  test('reads servers, the first supported channel credentials, server features and the node', () => {
    const b = parseBootstrap({
      xds_servers: [
        {
          server_uri: 'xds.example.com:443',
          channel_creds: [
            { type: 'google_default' },
            { type: 'tls', config: { ca_certificate_file: '/ca.pem' } },
            { type: 'insecure' },
          ],
          server_features: ['xds_v3', 'ignore_resource_deletion', 'fail_on_data_errors'],
        },
        { server_uri: 'fallback:443', channel_creds: INSECURE },
      ],
      node: {
        id: 'n1',
        cluster: 'c1',
        locality: { region: 'r', zone: 'z', sub_zone: 's' },
        metadata: { team: 'lb', n: 1 },
        unknown_field: true,
      },
      certificate_providers: {},
      unknown_top_level: 1,
    });
    assert.equal(b.xdsServers.length, 2);
    const server = b.xdsServers[0]!;
    assert.equal(server.serverUri, 'xds.example.com:443');
    // A65: refresh_interval defaults to "600s".
    assert.deepEqual(server.channelCredentials, {
      type: 'tls',
      caCertificateFile: '/ca.pem',
      refreshIntervalMs: 600_000,
    });
    assert.equal(server.ignoreResourceDeletion, true);
    assert.equal(server.failOnDataErrors, true);
    assert.equal(server.resourceTimerIsTransientError, false);
    assert.deepEqual(b.node, {
      id: 'n1',
      cluster: 'c1',
      locality: { region: 'r', zone: 'z', subZone: 's' },
      metadata: { team: 'lb', n: 1 },
    });
    assert.equal(b.clientDefaultListenerResourceNameTemplate, '%s');
  });

  test('XdsBootstrapJson spells every field the way parseBootstrap reads it', () => {
    // Typed as the JSON form: a field the type misnames would be unknown to the parser and lost below.
    const json: XdsBootstrapJson = {
      xds_servers: [
        {
          server_uri: 'xds.example.com:443',
          channel_creds: [
            {
              type: 'tls',
              config: {
                ca_certificate_file: '/ca.pem',
                certificate_file: '/c.pem',
                private_key_file: '/k.pem',
                refresh_interval: '30s',
              },
            },
          ],
          server_features: ['resource_timer_is_transient_error'],
        },
      ],
      node: {
        id: 'n1',
        cluster: 'c1',
        locality: { region: 'r', zone: 'z', sub_zone: 's' },
        metadata: { team: 'lb' },
      },
      client_default_listener_resource_name_template: 'listeners/%s',
      certificate_providers: {
        default: {
          plugin_name: 'file_watcher',
          config: {
            certificate_file: '/var/run/secrets/cert-chain.pem',
            private_key_file: '/var/run/secrets/key.pem',
            ca_certificate_file: '/var/run/secrets/root-cert.pem',
            refresh_interval: '900s',
          },
        },
      },
    };
    const b = parseBootstrap(json);
    assert.deepEqual(
      b.certificateProviders,
      new Map([
        [
          'default',
          {
            pluginName: 'file_watcher',
            config: {
              certificateFile: '/var/run/secrets/cert-chain.pem',
              privateKeyFile: '/var/run/secrets/key.pem',
              caCertificateFile: '/var/run/secrets/root-cert.pem',
              refreshIntervalMs: 900_000,
            },
          },
        ],
      ]),
    );
    assert.deepEqual(b.xdsServers, [
      {
        serverUri: 'xds.example.com:443',
        channelCredentials: {
          type: 'tls',
          caCertificateFile: '/ca.pem',
          certificateFile: '/c.pem',
          privateKeyFile: '/k.pem',
          refreshIntervalMs: 30_000,
        },
        serverFeatures: ['resource_timer_is_transient_error'],
        ignoreResourceDeletion: false,
        failOnDataErrors: false,
        resourceTimerIsTransientError: true,
      },
    ]);
    assert.deepEqual(b.node, {
      id: 'n1',
      cluster: 'c1',
      locality: { region: 'r', zone: 'z', subZone: 's' },
      metadata: { team: 'lb' },
    });
    assert.equal(b.clientDefaultListenerResourceNameTemplate, 'listeners/%s');
  });

  test('errors name the field path', () => {
    rejects({}, '$.xds_servers', /required/);
    rejects({ xds_servers: [] }, '$.xds_servers', /at least one/);
    rejects({ xds_servers: [{ channel_creds: INSECURE }] }, '$.xds_servers[0].server_uri', /required/);
    rejects(
      { xds_servers: [{ server_uri: 7, channel_creds: INSECURE }] },
      '$.xds_servers[0].server_uri',
      /string/,
    );
    rejects({ xds_servers: [{ server_uri: 'a:1' }] }, '$.xds_servers[0].channel_creds', /required/);
    rejects(
      { xds_servers: [{ server_uri: 'a:1', channel_creds: [{ type: 'google_default' }] }] },
      '$.xds_servers[0].channel_creds',
      /no supported channel credentials \(supported: insecure, tls; given: \["google_default"\]\)/,
    );
    rejects(
      { xds_servers: [{ server_uri: 'a:1', channel_creds: [{}] }] },
      '$.xds_servers[0].channel_creds[0].type',
      /required/,
    );
    rejects(
      {
        xds_servers: [
          { server_uri: 'a:1', channel_creds: [{ type: 'tls', config: { certificate_file: 'c' } }] },
        ],
      },
      '$.xds_servers[0].channel_creds[0].config',
      /together/,
    );
    rejects(
      { xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE, server_features: ['x', 3] }] },
      '$.xds_servers[0].server_features[1]',
      /string/,
    );
    rejects(
      { xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE }], node: { id: 5 } },
      '$.node.id',
      /string/,
    );
    rejects(
      { xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE }], node: { metadata: [] } },
      '$.node.metadata',
      /object/,
    );
  });

  test('A47 "Bootstrap Config Changes": authorities with their own servers, or the top-level ones; templates', () => {
    const top = { server_uri: 'top:443', channel_creds: INSECURE };
    const b = parseBootstrap({
      xds_servers: [top],
      client_default_listener_resource_name_template:
        'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/%s?project_id=1234',
      authorities: {
        'xds.authority.com': {
          client_listener_resource_name_template:
            'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/%s?project_id=1234',
        },
        'xds.other.com': {
          xds_servers: [
            { server_uri: 'other-a:443', channel_creds: INSECURE },
            { server_uri: 'other-b:443', channel_creds: INSECURE },
          ],
          fallback_on_reachability_only: true,
        },
        'empty.list': { xds_servers: [] },
      },
    });
    assert.equal(
      b.clientDefaultListenerResourceNameTemplate,
      'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/%s?project_id=1234',
    );
    const authority = b.authorities.get('xds.authority.com')!;
    assert.deepEqual(
      authority.xdsServers.map((s) => s.serverUri),
      ['top:443'],
      'no xds_servers: the top-level list',
    );
    assert.equal(authority.fallbackOnReachabilityOnly, false);
    const other = b.authorities.get('xds.other.com')!;
    assert.deepEqual(
      other.xdsServers.map((s) => s.serverUri),
      ['other-a:443', 'other-b:443'],
      'its own list, in priority order (A71)',
    );
    assert.equal(
      other.clientListenerResourceNameTemplate,
      'xdstp://xds.other.com/envoy.config.listener.v3.Listener/%s',
      'the A47 default template',
    );
    assert.equal(other.fallbackOnReachabilityOnly, true, 'A95');
    assert.deepEqual(
      b.authorities.get('empty.list')!.xdsServers.map((s) => s.serverUri),
      ['top:443'],
      'an empty list is no list: the top-level servers',
    );
    assert.equal(parseBootstrap({ xds_servers: [top] }).authorities.size, 0);
    assert.equal(
      parseBootstrap({ xds_servers: [top], client_default_listener_resource_name_template: 'lds-only' })
        .clientDefaultListenerResourceNameTemplate,
      'lds-only',
      'a template without %s is allowed (A47: "if present")',
    );
  });

  test('A47 bad authorities name their path', () => {
    const base = { xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE }] };
    rejects({ ...base, authorities: [] }, '$.authorities', /object/);
    rejects(
      {
        ...base,
        authorities: { 'a.example': { client_listener_resource_name_template: 'xdstp://b.example/x/%s' } },
      },
      '$.authorities["a.example"].client_listener_resource_name_template',
      /must start with "xdstp:\/\/a\.example\/"/,
    );
    rejects(
      { ...base, authorities: { a: { xds_servers: [{ server_uri: '', channel_creds: INSECURE }] } } },
      '$.authorities.a.xds_servers[0].server_uri',
      /non-empty/,
    );
    rejects(
      { ...base, authorities: { a: { fallback_on_reachability_only: 'yes' } } },
      '$.authorities.a.fallback_on_reachability_only',
      /boolean/,
    );
    rejects(
      { ...base, client_default_listener_resource_name_template: 7 },
      '$.client_default_listener_resource_name_template',
      /string/,
    );
  });

  test('GRPC_EXPERIMENTAL_XDS_FEDERATION=false (A47 "Temporary environment variable protection") ignores authorities', () => {
    const json = {
      xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE }],
      authorities: { 'x.example': {} },
    };
    assert.equal(parseBootstrap(json, false).authorities.size, 0);
    assert.equal(parseBootstrap(json, true).authorities.size, 1);
  });

  test('A47 "Server Channel Map": a server is its URI, credentials and known features', () => {
    const [a, b, c, d] = parseBootstrap({
      xds_servers: [
        {
          server_uri: 's:1',
          channel_creds: INSECURE,
          server_features: ['xds_v3', 'ignore_resource_deletion'],
        },
        { server_uri: 's:1', channel_creds: INSECURE, server_features: ['ignore_resource_deletion'] },
        { server_uri: 's:1', channel_creds: INSECURE },
        { server_uri: 's:2', channel_creds: INSECURE, server_features: ['ignore_resource_deletion'] },
      ],
    }).xdsServers;
    assert.equal(xdsServerKey(a!), xdsServerKey(b!), 'unknown features do not count');
    assert.notEqual(xdsServerKey(a!), xdsServerKey(c!));
    assert.notEqual(xdsServerKey(b!), xdsServerKey(d!));
  });

  test('comes from the object given, else GRPC_XDS_BOOTSTRAP (a file), else GRPC_XDS_BOOTSTRAP_CONFIG', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lbtree-bootstrap-'));
    const file = join(dir, 'bootstrap.json');
    writeFileSync(
      file,
      JSON.stringify({ xds_servers: [{ server_uri: 'from-file:1', channel_creds: INSECURE }] }),
    );
    const inline = JSON.stringify({ xds_servers: [{ server_uri: 'from-env:1', channel_creds: INSECURE }] });
    const given = { xds_servers: [{ server_uri: 'given:1', channel_creds: INSECURE }] };
    const uri = (b: ReturnType<typeof loadBootstrap>) => b.xdsServers[0]!.serverUri;
    assert.equal(uri(loadBootstrap(given, { GRPC_XDS_BOOTSTRAP: file })), 'given:1');
    assert.equal(
      uri(loadBootstrap(undefined, { GRPC_XDS_BOOTSTRAP: file, GRPC_XDS_BOOTSTRAP_CONFIG: inline })),
      'from-file:1',
    );
    assert.equal(uri(loadBootstrap(undefined, { GRPC_XDS_BOOTSTRAP_CONFIG: inline })), 'from-env:1');
    assert.throws(() => loadBootstrap(undefined, {}), /no xDS bootstrap: set GRPC_XDS_BOOTSTRAP/);
    assert.throws(
      () => loadBootstrap(undefined, { GRPC_XDS_BOOTSTRAP: join(dir, 'missing.json') }),
      /GRPC_XDS_BOOTSTRAP=.*missing.json: cannot read the file/,
    );
    assert.throws(
      () => loadBootstrap(undefined, { GRPC_XDS_BOOTSTRAP_CONFIG: '{' }),
      /GRPC_XDS_BOOTSTRAP_CONFIG: not valid JSON/,
    );
    assert.throws(
      () => loadBootstrap(undefined, { GRPC_XDS_BOOTSTRAP_CONFIG: '{"xds_servers": [{}]}' }),
      (e: unknown) =>
        e instanceof ConfigError && e.path === 'GRPC_XDS_BOOTSTRAP_CONFIG: $.xds_servers[0].server_uri',
    );
  });

  describe('A29 "Certificate Provider Plugin Framework": certificate_providers', () => {
    const withProviders = (certificate_providers: unknown) => ({
      xds_servers: [{ server_uri: 'a:1', channel_creds: INSECURE }],
      certificate_providers,
    });

    test('absent: no instances; file_watcher with only a CA file, or only identity files', () => {
      assert.equal(parseBootstrap(withProviders(undefined)).certificateProviders.size, 0);
      const b = parseBootstrap(
        withProviders({
          roots: { plugin_name: 'file_watcher', config: { ca_certificate_file: '/ca.pem' } },
          identity: {
            plugin_name: 'file_watcher',
            config: { certificate_file: '/c.pem', private_key_file: '/k.pem', refresh_interval: '0.5s' },
          },
        }),
      );
      assert.deepEqual(b.certificateProviders.get('roots')?.config, {
        caCertificateFile: '/ca.pem',
        refreshIntervalMs: 600_000,
      });
      assert.deepEqual(b.certificateProviders.get('identity')?.config, {
        certificateFile: '/c.pem',
        privateKeyFile: '/k.pem',
        refreshIntervalMs: 500,
      });
    });

    test('bad instances are rejected naming the path', () => {
      const at = '$.certificate_providers.default';
      rejects(withProviders([]), '$.certificate_providers', /object/);
      rejects(withProviders({ default: {} }), `${at}.plugin_name`, /required/);
      rejects(
        withProviders({ default: { plugin_name: 'meshca', config: {} } }),
        `${at}.plugin_name`,
        /unsupported certificate provider plugin "meshca" \(supported: file_watcher\)/,
      );
      // A29: the plugin needs at least one of the two files.
      rejects(withProviders({ default: { plugin_name: 'file_watcher' } }), `${at}.config`, /at least one/);
      rejects(
        withProviders({ default: { plugin_name: 'file_watcher', config: { private_key_file: '/k' } } }),
        `${at}.config`,
        /together/,
      );
      rejects(
        withProviders({ default: { plugin_name: 'file_watcher', config: { ca_certificate_file: '' } } }),
        `${at}.config.ca_certificate_file`,
        /empty/,
      );
      rejects(
        withProviders({
          default: {
            plugin_name: 'file_watcher',
            config: { ca_certificate_file: '/ca', refresh_interval: 60 },
          },
        }),
        `${at}.config.refresh_interval`,
        /duration/,
      );
      rejects(
        withProviders({
          default: {
            plugin_name: 'file_watcher',
            config: { ca_certificate_file: '/ca', refresh_interval: '0s' },
          },
        }),
        `${at}.config.refresh_interval`,
        /greater than 0s/,
      );
    });

    test('A65: tls channel creds may name no file at all (system roots, no client certificate)', () => {
      const b = parseBootstrap({ xds_servers: [{ server_uri: 'a:1', channel_creds: [{ type: 'tls' }] }] });
      assert.deepEqual(b.xdsServers[0]!.channelCredentials, { type: 'tls', refreshIntervalMs: 600_000 });
    });
  });
});
