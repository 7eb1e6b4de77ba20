/**
 * The header hash policy's regex rewrite (A42, Envoy RegexMatchAndSubstitute), per call, at header lengths
 * of 100 / 1,000 / 10,000 characters: lbtree's RegexRewrite (linear-time matching over re2js's program)
 * beside what @grpc/grpc-js-xds runs for the same policy (re2-wasm's RE2 with flags `ug` and
 * String.prototype.replace; re2-wasm is grpc-js-xds's own dependency, loaded from where it resolves it).
 * Patterns: `a.*Z|a` on a header of `a`s (every `a` matches, and each match must first rule out a later `Z`:
 * quadratic for a search restarted at each match) and a typical path rewrite `^/(\w+)\.(\w+)/.*$`.
 * Ratio column: lbtree / grpc-js-xds (below 1 = lbtree faster).
 */
import { createRequire } from 'node:module';
import { RegexRewrite } from '../src/hash/regex-rewrite.js';
import { median, ms, printRow, printTableHeader } from './report.js';

interface Re2WasmClass {
  new (pattern: string, flags: string): RegExp;
}

const fromGrpcJsXds = createRequire(createRequire(import.meta.url).resolve('@grpc/grpc-js-xds'));
const { RE2 } = fromGrpcJsXds('re2-wasm') as { RE2: Re2WasmClass };

/** grpc-js-xds's rewrite: RE2 `\N` references become `$N` for String.prototype.replace. */
function grpcJsXdsRewrite(pattern: string, substitution: string): (input: string) => string {
  const regex = new RE2(pattern, 'ug');
  const replacement = substitution.replace(/\$/g, '$$$$').replace(/\\(\d+)/g, '$$$1');
  return (input) => input.replace(regex, replacement);
}

function timePerCall(fn: () => void): number {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) fn(); // JIT warm-up, not counted
  const start = Date.now();
  // At least 3 runs, then up to 1 s of runs; the median is reported.
  while (runs.length < 3 || (runs.length < 15 && Date.now() - start < 1000)) runs.push(ms(fn));
  return median(runs);
}

export function runRegexRewriteBench(): void {
  printTableHeader('header regex rewrite, ms per call (A42 header hash policy)', 'grpc-js-xds (re2-wasm)');
  const cases: { name: string; pattern: string; substitution: string; input: (n: number) => string }[] = [
    { name: '`a.*Z\\|a` on a…a', pattern: 'a.*Z|a', substitution: 'b', input: (n) => 'a'.repeat(n) },
    {
      name: '`^/(\\w+)\\.(\\w+)/.*$` on a path',
      pattern: '^/(\\w+)\\.(\\w+)/.*$',
      substitution: '\\2@\\1',
      input: (n) => `/service.Method/${'x'.repeat(Math.max(0, n - 16))}`,
    },
  ];
  for (const c of cases) {
    const ours = new RegexRewrite(c.pattern, c.substitution);
    const theirs = grpcJsXdsRewrite(c.pattern, c.substitution);
    for (const n of [100, 1_000, 10_000]) {
      const input = c.input(n);
      if (ours.apply(input) !== theirs(input)) throw new Error(`results differ for ${c.name} at ${n}`);
      printRow(
        `${c.name}, ${n.toLocaleString('en-US')} chars`,
        timePerCall(() => ours.apply(input)),
        timePerCall(() => theirs(input)),
        'ms',
      );
    }
  }
}
