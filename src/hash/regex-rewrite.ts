import type { RE2JS } from 're2js';
import { ConfigError } from '../core/index.js';
import { LinearMatcher } from './linear-matcher.js';
import { re2js } from './re2.js';

// Envoy's RegexMatchAndSubstitute (the `regex_rewrite` of a header hash policy) with RE2 semantics. Patterns
// come from a control plane, so they must never run on a backtracking engine: re2js is a linear-time RE2 port
// that accepts exactly RE2's syntax. The replacement loop and the `\N` substitution syntax follow RE2's
// GlobalReplace and Rewrite, which Envoy calls, rather than JavaScript's `$N` replace semantics. Matches are
// found by LinearMatcher, so a rewrite costs time linear in the header length whatever the pattern.

/** One piece of a parsed substitution: literal text or a capture group number. */
type Piece = string | number;

/**
 * A compiled regex rewrite. `apply` replaces every non-overlapping match of `pattern` in the input with
 * `substitution`, in which `\0`…`\9` insert capture groups and `\\` is a backslash.
 */
export class RegexRewrite {
  private readonly matcher: LinearMatcher;
  private readonly pieces: readonly Piece[];

  /**
   * Throws a ConfigError at the JSON path of the pattern or the substitution when either is invalid. `compiled`
   * is `pattern` already compiled by the caller (which checked it), if it was.
   */
  constructor(
    readonly pattern: string,
    readonly substitution: string,
    patternPath = '$.pattern',
    substitutionPath = '$.substitution',
    compiled?: RE2JS,
  ) {
    let regex: RE2JS;
    try {
      regex = compiled ?? re2js().RE2JS.compile(pattern);
    } catch (e) {
      if (!(e instanceof re2js().RE2JSException)) throw e;
      throw new ConfigError(patternPath, `invalid RE2 regular expression: ${e.message}`);
    }
    this.matcher = new LinearMatcher(regex);
    this.pieces = parseSubstitution(substitution, regex.groupCount(), substitutionPath);
  }

  apply(input: string): string {
    const scan = this.matcher.scan(input);
    const end = input.length;
    let out = '';
    let p = 0;
    let lastEnd = -1;
    let count = 0;
    for (let m = p <= end ? scan.find(p) : null; m !== null; m = p <= end ? scan.find(p) : null) {
      const start = m[0]!;
      const stop = m[1]!;
      if (p < start) out += input.slice(p, start);
      if (start === stop && start === lastEnd) {
        // RE2: no empty match right where the previous match ended; copy one character and go on.
        if (p < end) {
          const step = isHighSurrogate(input.charCodeAt(p)) && p + 1 < end ? 2 : 1;
          out += input.slice(p, p + step);
          p += step;
        } else {
          p++;
        }
        continue;
      }
      for (const piece of this.pieces) {
        if (typeof piece === 'string') out += piece;
        else if (m[2 * piece]! >= 0) out += input.slice(m[2 * piece], m[2 * piece + 1]);
      }
      p = stop;
      lastEnd = stop;
      count++;
    }
    if (count === 0) return input;
    if (p < end) out += input.slice(p);
    return out;
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** RE2's rewrite syntax: `\N` (one digit) is group N, `\\` a backslash; any other escape is an error. */
function parseSubstitution(text: string, groups: number, path: string): Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      literal += c;
      continue;
    }
    const next = text[i + 1];
    i++;
    if (next === '\\') {
      literal += '\\';
    } else if (next !== undefined && next >= '0' && next <= '9') {
      const group = next.charCodeAt(0) - 48;
      if (group > groups) {
        throw new ConfigError(
          path,
          `refers to capture group \\${group}, but the pattern has ${groups} capture group${groups === 1 ? '' : 's'}`,
        );
      }
      if (literal) pieces.push(literal);
      literal = '';
      pieces.push(group);
    } else {
      throw new ConfigError(
        path,
        next === undefined
          ? 'ends with a lone backslash (write \\\\ for a backslash)'
          : `invalid escape "\\${next}": only \\0 to \\9 and \\\\ are allowed`,
      );
    }
  }
  if (literal) pieces.push(literal);
  return pieces;
}
