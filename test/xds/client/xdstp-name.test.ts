// gRFC A47 resource names and the `xds:` target's Listener name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import {
  clientListenerResourceName,
  UnknownXdsAuthorityError,
} from '../../../src/xds/client/listener-name.js';
import { parseResourceName, percentEncodePath } from '../../../src/xds/client/xdstp-name.js';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

describe('xdstp: names (A47 "Resource Cache", xRFC TP1 normalisation)', () => {
  test('an old-style name is one opaque string of no authority', () => {
    assert.deepEqual(parseResourceName('server.example.com', LDS), {
      ok: true,
      authority: undefined,
      canonical: 'server.example.com',
    });
  });

  test('context parameters are sorted; the last of duplicate keys wins; the authority may be empty', () => {
    assert.deepEqual(
      parseResourceName('xdstp://auth.example/envoy.config.listener.v3.Listener/a/b?z=1&a=2&m=3', LDS),
      {
        ok: true,
        authority: 'auth.example',
        canonical: 'xdstp://auth.example/envoy.config.listener.v3.Listener/a/b?a=2&m=3&z=1',
      },
    );
    const dup = parseResourceName('xdstp://a/envoy.config.cluster.v3.Cluster/c?k=1&k=2', CDS);
    assert.ok(dup.ok && dup.canonical === 'xdstp://a/envoy.config.cluster.v3.Cluster/c?k=2');
    const empty = parseResourceName('xdstp:///envoy.config.cluster.v3.Cluster/c', CDS);
    assert.ok(empty.ok && empty.authority === '');
  });

  test('malformed names are errors that quote the name', () => {
    const cases: [string, RegExp][] = [
      ['xdstp:auth/envoy.config.cluster.v3.Cluster/c', /expected "xdstp:\/\/authority\/type\/id"/],
      ['xdstp://auth', /no resource type after the authority/],
      ['xdstp://auth/envoy.config.cluster.v3.Cluster', /expected "xdstp:\/\/auth\/type\/id"/],
      ['xdstp://auth/envoy.config.cluster.v3.Cluster/', /expected "xdstp:\/\/auth\/type\/id"/],
      [
        'xdstp://auth/envoy.config.listener.v3.Listener/c',
        /resource type "envoy.config.listener.v3.Listener" where "envoy.config.cluster.v3.Cluster"/,
      ],
      ['xdstp://auth/envoy.config.cluster.v3.Cluster/c#alt', /directives/],
    ];
    for (const [name, error] of cases) {
      const parsed = parseResourceName(name, CDS);
      assert.ok(!parsed.ok, name);
      assert.match(parsed.error, error, name);
      assert.ok(parsed.error.includes(name), 'the error quotes the name');
    }
  });

  test('with federation off every name is old-style', () => {
    const name = 'xdstp://auth/envoy.config.cluster.v3.Cluster/c?b=1&a=2';
    assert.deepEqual(parseResourceName(name, CDS, false), {
      ok: true,
      authority: undefined,
      canonical: name,
    });
  });

  test('percent-encoding keeps RFC 3986 path characters and "/", encodes the rest as UTF-8', () => {
    assert.equal(percentEncodePath("a-b._~!$&'()*+,;=:@/c"), "a-b._~!$&'()*+,;=:@/c");
    assert.equal(percentEncodePath('a b?c#d%e[é]'), 'a%20b%3Fc%23d%25e%5B%C3%A9%5D');
  });
});

describe('the Listener of an xds: target (A47 "xds Resolver Changes", its examples)', () => {
  const bootstrap = parseBootstrap({
    xds_servers: [{ server_uri: 'xds-server.authority.com', channel_creds: [{ type: 'insecure' }] }],
    client_default_listener_resource_name_template:
      'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/%s?project_id=1234',
    authorities: {
      'xds.authority.com': {
        client_listener_resource_name_template:
          'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/%s?project_id=1234',
      },
      'xds.other.com': {
        xds_servers: [{ server_uri: 'xds-server.other.com', channel_creds: [{ type: 'insecure' }] }],
      },
    },
  });

  test('xds:server.example.com: the top-level template', () => {
    assert.equal(
      clientListenerResourceName(bootstrap, undefined, 'server.example.com'),
      'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/server.example.com?project_id=1234',
    );
  });

  test("xds://xds.authority.com/server.example.com: the authority's template", () => {
    assert.equal(
      clientListenerResourceName(bootstrap, 'xds.authority.com', 'server.example.com'),
      'xdstp://xds.authority.com/envoy.config.listener.v3.Listener/grpc/client/server.example.com?project_id=1234',
    );
  });

  test('xds://xds.other.com/server.other.com: the default per-authority template', () => {
    assert.equal(
      clientListenerResourceName(bootstrap, 'xds.other.com', 'server.other.com'),
      'xdstp://xds.other.com/envoy.config.listener.v3.Listener/server.other.com',
    );
  });

  test('the name is percent-encoded in xdstp: templates only', () => {
    assert.equal(
      clientListenerResourceName(bootstrap, 'xds.other.com', 'a b'),
      'xdstp://xds.other.com/envoy.config.listener.v3.Listener/a%20b',
    );
    const plain = parseBootstrap({
      xds_servers: [{ server_uri: 's', channel_creds: [{ type: 'insecure' }] }],
      client_default_listener_resource_name_template: 'listeners/%s',
    });
    assert.equal(clientListenerResourceName(plain, undefined, 'a b'), 'listeners/a b');
    assert.equal(
      clientListenerResourceName(plain, '', 'a b'),
      'listeners/a b',
      'xds:///name has no authority',
    );
  });

  test('an authority the bootstrap lacks is an error naming it', () => {
    assert.throws(
      () => clientListenerResourceName(bootstrap, 'nowhere.example', 'x'),
      (e: unknown) =>
        e instanceof UnknownXdsAuthorityError &&
        e.authority === 'nowhere.example' &&
        /"nowhere.example"/.test(e.message),
    );
  });
});
