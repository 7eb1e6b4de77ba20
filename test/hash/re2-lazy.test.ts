// re2js loads on the first regex, not with the modules that may compile one (issue 25 §4: an `xds:` channel whose
// resources hold no regex does not pay for it on its way to its first call). This file runs in its own process.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { RegexRewrite } from '../../src/hash/index.js';
import { compileRe2 } from '../../src/xds/resources/validation.js';

const loadedModules = createRequire(import.meta.url).cache;
const re2jsLoaded = () => Object.keys(loadedModules).some((path) => /[\\/]re2js[\\/]/.test(path));

test('re2js is loaded by the first regex compiled, not by the modules that compile them', () => {
  assert.equal(re2jsLoaded(), false);
  const rewrite = new RegexRewrite('a+', 'b');
  assert.equal(re2jsLoaded(), true);
  assert.equal(rewrite.apply('caat'), 'cbt');
  // Both compile paths share the one load; syntax errors still come out as the caller's error.
  assert.equal(compileRe2('x.z', 'match.safe_regex.regex').matches('xyz'), true);
  assert.throws(() => new RegexRewrite('(', 'b'), /invalid RE2 regular expression/);
});
