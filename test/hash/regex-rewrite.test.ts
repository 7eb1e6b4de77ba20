import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RE2JS } from 're2js';
import { RegexRewrite } from '../../src/hash/regex-rewrite.js';
import { seededRandom } from '../../src/sim/seeded-random.js';

// The reference: RE2's GlobalReplace loop over re2js's own matcher (a fresh search from each position). Slow
// (quadratic) but obviously right; RegexRewrite must give the same output on every pattern and input.
const compiled = new Map<string, RE2JS>();
function referenceRewrite(pattern: string, substitution: string, input: string): string {
  const regex = compiled.get(pattern) ?? RE2JS.compile(pattern);
  compiled.set(pattern, regex);
  const m = regex.matcher(input);
  const end = input.length;
  let out = '';
  let p = 0;
  let lastEnd = -1;
  let count = 0;
  while (p <= end && m.find(p)) {
    const start = m.start();
    const stop = m.end();
    if (p < start) out += input.slice(p, start);
    if (start === stop && start === lastEnd) {
      const step =
        p < end && input.charCodeAt(p) >= 0xd800 && input.charCodeAt(p) <= 0xdbff && p + 1 < end ? 2 : 1;
      if (p < end) out += input.slice(p, p + step);
      p += step;
      continue;
    }
    out += substitution.replace(/\\(\d)/g, (_, g: string) => {
      const i = Number(g);
      return m.start(i) >= 0 ? input.slice(m.start(i), m.end(i)) : '';
    });
    p = stop;
    lastEnd = stop;
    count++;
  }
  if (count === 0) return input;
  if (p < end) out += input.slice(p);
  return out;
}

const PATTERNS = [
  'a',
  'a.*Z|a',
  '(a)(b)?',
  'x*',
  'b*',
  '',
  '^a',
  'a$',
  '\\bab',
  '\\Bb',
  '(?i)ab',
  '(?m)^b',
  '(?s)a.b',
  '(a|ab)(c|bcd)(d*)',
  '(a+)(b+)?',
  '(a*)*',
  '(a*|b)*',
  '(|a)+',
  '[[:alpha:]]+\\d',
  '\\pL+',
  '[^a]',
  '.',
  '(?U)a+',
  'a{2,3}',
  '(a)|b',
  '((a)|b)+',
  '(?:a|b)*?c',
  '🙂|x',
  '[🙂-🙃]+',
  '^$',
  '\\z',
  '\\A',
];
const ALPHABET = ['a', 'b', 'c', 'd', 'Z', 'A', 'B', '1', '_', ' ', '\n', '🙂', '🙃', 'é', '-'];

describe('regex rewrite: linear-time matching gives RE2 GlobalReplace results (A42 header policy)', () => {
  test('same output as re2js matching from each position, on many patterns and seeded random inputs', () => {
    const random = seededRandom(10);
    let compared = 0;
    for (const pattern of PATTERNS) {
      const groups = RE2JS.compile(pattern).groupCount();
      const rewrite = new RegexRewrite(pattern, groups > 0 ? '<\\0|\\1>' : '<\\0>');
      for (let i = 0; i < 60; i++) {
        const length = Math.floor(random() * 14);
        let input = '';
        for (let j = 0; j < length; j++) input += ALPHABET[Math.floor(random() * ALPHABET.length)];
        assert.equal(
          rewrite.apply(input),
          referenceRewrite(pattern, rewrite.substitution, input),
          `pattern ${JSON.stringify(pattern)} on ${JSON.stringify(input)}`,
        );
        compared++;
      }
    }
    assert.equal(compared, PATTERNS.length * 60);
  });

  test('long inputs with many matches and far-reaching alternatives give the same output', () => {
    const cases: [string, string, string][] = [
      ['a.*Z|a', '-', 'a'.repeat(500)],
      ['a.*Z|a', '-', `${'a'.repeat(300)}Z${'a'.repeat(200)}`],
      ['(a)(.*Z)?', '\\1', `${'ab'.repeat(200)}Z${'a'.repeat(100)}`],
      ['\\b\\w', '#', 'word '.repeat(100)],
      ['', '.', 'xy🙂'.repeat(50)],
    ];
    for (const [pattern, substitution, input] of cases)
      assert.equal(
        new RegexRewrite(pattern, substitution).apply(input),
        referenceRewrite(pattern, substitution, input),
        pattern,
      );
  });

  test('a 10,000-character header with `a.*Z|a` is rewritten (every `a` replaced)', () => {
    const rewrite = new RegexRewrite('a.*Z|a', 'b');
    assert.equal(rewrite.apply('a'.repeat(10_000)), 'b'.repeat(10_000));
    assert.equal(rewrite.apply(`x${'a'.repeat(9_998)}Z`), 'xb');
  });
});
