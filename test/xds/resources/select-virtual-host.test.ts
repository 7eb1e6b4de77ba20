import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { selectVirtualHost } from '../../../src/xds/resources/index.js';

function vh(name: string, ...domains: string[]) {
  return { name, domains };
}

function pick(hosts: ReturnType<typeof vh>[], authority: string): string | undefined {
  return selectVirtualHost(hosts, authority)?.name;
}

describe('A28 "most specifically matches" (Envoy VirtualHost.domains rules): selectVirtualHost', () => {
  test('an exact domain beats suffix, prefix and universal matches wherever it is listed', () => {
    const hosts = [
      vh('any', '*'),
      vh('prefix', 'echo.*'),
      vh('suffix', '*.example'),
      vh('exact', 'echo.example'),
    ];
    assert.equal(pick(hosts, 'echo.example'), 'exact');
  });

  test('a suffix match beats a prefix match, which beats "*"', () => {
    const hosts = [vh('any', '*'), vh('prefix', 'echo.*'), vh('suffix', '*.example')];
    assert.equal(pick(hosts, 'echo.example'), 'suffix');
    assert.equal(pick(hosts.slice(0, 2), 'echo.example'), 'prefix');
    assert.equal(pick(hosts.slice(0, 1), 'echo.example'), 'any');
  });

  test('among suffix (and among prefix) matches the longest pattern wins', () => {
    assert.equal(pick([vh('short', '*.example'), vh('long', '*.b.example')], 'a.b.example'), 'long');
    assert.equal(pick([vh('short', 'a.*'), vh('long', 'a.b.*')], 'a.b.example'), 'long');
  });

  test('on a tie the first virtual host wins', () => {
    assert.equal(pick([vh('first', '*.example'), vh('second', '*.example')], 'a.example'), 'first');
    assert.equal(pick([vh('first', '*'), vh('second', '*')], 'a'), 'first');
  });

  test('matching ignores case in both the domain and the authority', () => {
    assert.equal(pick([vh('v', 'Echo.Example')], 'ECHO.example'), 'v');
    assert.equal(pick([vh('v', '*.EXAMPLE')], 'a.example'), 'v');
  });

  test('a wildcard stands for at least one character', () => {
    assert.equal(pick([vh('v', '*-bar.example')], '-bar.example'), undefined);
    assert.equal(pick([vh('v', '*-bar.example')], 'x-bar.example'), 'v');
    assert.equal(pick([vh('v', 'echo.*')], 'echo.'), undefined);
  });

  test('a wildcard in the middle, or two wildcards, match nothing', () => {
    assert.equal(pick([vh('v', 'echo.*.example')], 'echo.a.example'), undefined);
    assert.equal(pick([vh('v', '*.echo.*')], 'a.echo.b'), undefined);
  });

  test('no matching domain gives undefined; the port is part of the authority', () => {
    assert.equal(pick([vh('v', 'other.example')], 'echo.example'), undefined);
    assert.equal(pick([], 'echo.example'), undefined);
    assert.equal(pick([vh('v', 'echo.example')], 'echo.example:8080'), undefined);
    assert.equal(pick([vh('v', 'echo.example:8080')], 'echo.example:8080'), 'v');
  });
});
