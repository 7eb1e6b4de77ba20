// Bounds on the regexes a control plane sends (route and header matchers, string matchers, hash policy
// rewrites): re2js matches in linear time, but compiling costs time and memory in proportion to the compiled
// program, which repetition multiplies — `x{1000}` repeated 1,000 times is a 7 KB pattern of a million
// instructions (seconds and hundreds of MB). re2js already refuses Go's shapes (a repeat count over 1,000,
// nested repeats whose product is over 1,000); C-core's RE2 refuses programs over its memory budget (8 MiB by
// default). lbtree counts re2js's compiled instructions: per regex, and per resource, so that decoding any
// resource stays fast whatever it holds. The size is estimated from the pattern before compiling (the estimate
// is Go's regexp/syntax size rule, which re2js also follows) and checked again on the compiled program.

import type { RE2JS } from 're2js';

/** Most instructions one compiled regex may have (`x{1000}` has 1,002; Envoy's default error level is 100). */
export const MAX_RE2_PROGRAM_SIZE = 10_000;

/**
 * What compiling one more distinct regex costs beyond its instructions, counted in instructions (measured:
 * about 20 µs for a one-character pattern, about 1.5 µs per instruction).
 */
export const RE2_COMPILE_OVERHEAD = 16;

/**
 * Most that all the distinct regexes of one resource may cost together (instructions plus the overhead each):
 * a resource of 1,000 distinct small regexes fits, and compiling the most a resource may hold takes tens of ms.
 */
export const MAX_RE2_COST_PER_RESOURCE = 25_000;

/** The cost so far of the resource being decoded, and its regexes by flags and pattern (decoding is synchronous). */
let resourceCost = 0;
const resourceRegexes = new Map<string, RE2JS>();

/** Starts the count for a new resource (decodeResource calls it). */
export function resetRe2Budget(): void {
  resourceCost = 0;
  resourceRegexes.clear();
}

/** A pattern the resource already compiled with the same flags: it costs nothing more. */
export function compiledBefore(pattern: string, flags: number): RE2JS | undefined {
  return resourceRegexes.get(`${flags}:${pattern}`);
}

/**
 * Refuses, before compiling, a pattern whose estimate is over twice the per-regex limit (so a refused pattern
 * costs at most that much compiling); the limits themselves are checked on the compiled size.
 */
export function re2EstimateProblem(pattern: string): string | undefined {
  const estimate = estimateRe2Size(pattern);
  if (estimate <= 2 * MAX_RE2_PROGRAM_SIZE) return undefined;
  return `would compile to about ${estimate} instructions, more than the ${MAX_RE2_PROGRAM_SIZE} allowed per regex`;
}

/** Counts a compiled regex against the limits: why it is refused, or undefined (then it is remembered). */
export function chargeRe2(pattern: string, flags: number, regex: RE2JS): string | undefined {
  const size = regex.programSize();
  if (size > MAX_RE2_PROGRAM_SIZE)
    return `compiles to ${size} instructions, more than the ${MAX_RE2_PROGRAM_SIZE} allowed per regex`;
  const cost = resourceCost + size + RE2_COMPILE_OVERHEAD;
  if (cost > MAX_RE2_COST_PER_RESOURCE) {
    return `compiles to ${size} instructions, which brings the cost of the resource's distinct regexes to ${cost} (${RE2_COMPILE_OVERHEAD} more per regex), more than the ${MAX_RE2_COST_PER_RESOURCE} allowed per resource`;
  }
  resourceCost = cost;
  resourceRegexes.set(`${flags}:${pattern}`, regex);
  return undefined;
}

/** One open group while estimating: the finished alternatives' sizes, the current sequence, its last atom. */
interface Frame {
  alternatives: number;
  count: number;
  sequence: number;
  last: number;
  readonly capture: boolean;
}

/**
 * An estimate of the compiled program size of an RE2 pattern, in the way Go's regexp/syntax (and re2js)
 * compute it: a literal or class is 1, a capture or `*` adds 2, `+` / `?` add 1, an alternation adds one per
 * `|`, `{n,m}` is m copies plus m − n, `{n,}` n copies plus 1. Invalid syntax is left to the compiler.
 */
export function estimateRe2Size(pattern: string): number {
  const stack: Frame[] = [];
  let frame: Frame = { alternatives: 0, count: 0, sequence: 0, last: 0, capture: false };
  const atom = (size: number) => {
    frame.sequence += size;
    frame.last = size;
  };
  const quantify = (size: (sub: number) => number) => {
    frame.sequence += size(frame.last) - frame.last;
    frame.last = size(frame.last);
  };
  const n = pattern.length;
  let i = 0;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? n : end;
        for (let k = i + 2; k < stop; k++) atom(1);
        i = end < 0 ? n : end + 2;
        continue;
      }
      if ((e === 'p' || e === 'P' || e === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? n : end + 1;
      } else if (e === 'p' || e === 'P') {
        i += 3;
      } else if (e === 'x') {
        i += 4;
      } else {
        i += 2;
      }
      atom(1);
      continue;
    }
    if (c === '[') {
      let k = i + 1;
      if (pattern[k] === '^') k++;
      if (pattern[k] === ']') k++;
      while (k < n && pattern[k] !== ']') {
        if (pattern[k] === '\\') k += 2;
        else if (pattern[k] === '[' && pattern[k + 1] === ':') {
          const end = pattern.indexOf(':]', k + 2);
          k = end < 0 ? k + 1 : end + 2;
        } else k++;
      }
      i = k + 1;
      atom(1);
      continue;
    }
    if (c === '(') {
      let capture = true;
      let k = i + 1;
      if (pattern[k] === '?') {
        const named = pattern.startsWith('?P<', k) || /^\?<[^=!]/.test(pattern.slice(k, k + 3));
        if (named) {
          const end = pattern.indexOf('>', k);
          k = end < 0 ? n : end + 1;
        } else {
          capture = false;
          let j = k + 1;
          while (j < n && pattern[j] !== ')' && pattern[j] !== ':') j++;
          if (pattern[j] === ')') {
            // A flags group, `(?i)`: no atom.
            i = j + 1;
            continue;
          }
          k = j + 1;
        }
      }
      stack.push(frame);
      frame = { alternatives: 0, count: 0, sequence: 0, last: 0, capture };
      i = k;
      continue;
    }
    if (c === ')') {
      const inner = closeAlternation(frame);
      const size = inner + (frame.capture ? 2 : 0);
      frame = stack.pop() ?? { alternatives: 0, count: 0, sequence: 0, last: 0, capture: false };
      atom(size);
      i++;
      continue;
    }
    if (c === '|') {
      frame.alternatives += frame.sequence;
      frame.count++;
      frame.sequence = 0;
      frame.last = 0;
      i++;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      quantify((sub) => (c === '*' ? 2 : 1) + sub);
      i++;
      if (pattern[i] === '?') i++;
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m !== null) {
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
        quantify((sub) => (max === -1 ? (min === 0 ? 2 + sub : 1 + min * sub) : max * sub + (max - min)));
        i += m[0].length;
        if (pattern[i] === '?') i++;
        continue;
      }
    }
    // A literal (one per code point), `.`, `^` or `$`.
    i += (pattern.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    atom(1);
  }
  let size = closeAlternation(frame);
  while (stack.length > 0) {
    const outer = stack.pop()!;
    outer.sequence += size;
    size = closeAlternation(outer);
  }
  // The program's own start (capture 0) and match instructions.
  return Math.max(1, size) + 3;
}

function closeAlternation(frame: Frame): number {
  const total = frame.alternatives + frame.sequence;
  return frame.count === 0 ? total : total + frame.count;
}
