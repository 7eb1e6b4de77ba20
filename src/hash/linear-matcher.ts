import type { RE2JS } from 're2js';

// Every leftmost-first match of an RE2 pattern in one input, in time linear in the input length.
//
// Why not re2js's own `Matcher.find`: each call starts a fresh search that may run to the end of the input
// before it can commit to a match (for `a.*Z|a`, every `a` must first rule out a later `Z`), and it sets up
// per-call state the size of the input; a global replace over n matches then costs O(n²) — 2 s for 10,000
// characters. Here one backward pass records, for each input position, which program instructions can
// still reach a match from there. A forward Pike VM over re2js's compiled program then drops every thread
// that cannot match, so it knows where each match starts without searching, and stops exactly where the
// match ends: total work O(input length × program size).
//
// It reads re2js's compiled program (the same instructions its own engines run), so the syntax, flags,
// Unicode classes and case folding are re2js's; test/hash/regex-rewrite.test.ts checks the results
// against re2js's matcher on many patterns and inputs.

/** One instruction of re2js's compiled program (the fields this matcher reads). */
interface Inst {
  readonly op: number;
  readonly out: number;
  readonly arg: number;
  matchRune(rune: number): boolean;
}
interface Prog {
  readonly inst: readonly Inst[];
  readonly start: number;
}

// re2js's instruction opcodes and empty-width assertion flags (RE2's, as re2js numbers them).
const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const FAIL = 5;
const MATCH = 6;
const NOP = 7;
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;
const BEGIN_LINE = 1;
const END_LINE = 2;
const BEGIN_TEXT = 4;
const END_TEXT = 8;
const WORD_BOUNDARY = 16;
const NO_WORD_BOUNDARY = 32;

function compiledProgram(regex: RE2JS): Prog {
  const prog = (regex as unknown as { re2?: () => { prog?: Prog } }).re2?.().prog;
  if (!prog || !Array.isArray(prog.inst) || typeof prog.start !== 'number')
    throw new Error('re2js: compiled program not found (is the installed re2js version supported?)');
  for (const inst of prog.inst)
    if (inst.op < ALT || inst.op > RUNE_ANY_NOT_NL)
      throw new Error(`re2js: unsupported instruction op ${inst.op} in ${regex.pattern()}`);
  return prog;
}

function isWordRune(r: number): boolean {
  return (r >= 48 && r <= 57) || (r >= 65 && r <= 90) || (r >= 97 && r <= 122) || r === 95;
}

/** The code point that ends just before `k` (-1 at the start). */
function runeBefore(input: string, k: number): number {
  if (k === 0) return -1;
  const low = input.charCodeAt(k - 1);
  if (low >= 0xdc00 && low <= 0xdfff && k >= 2) {
    const high = input.charCodeAt(k - 2);
    if (high >= 0xd800 && high <= 0xdbff) return input.codePointAt(k - 2)!;
  }
  return low;
}

/** Which empty-width assertions hold at position `k`. */
function context(input: string, k: number): number {
  const before = runeBefore(input, k);
  const at = k < input.length ? input.codePointAt(k)! : -1;
  let flags = 0;
  if (before < 0) flags |= BEGIN_TEXT | BEGIN_LINE;
  else if (before === 10) flags |= BEGIN_LINE;
  if (at < 0) flags |= END_TEXT | END_LINE;
  else if (at === 10) flags |= END_LINE;
  flags |= isWordRune(before) !== isWordRune(at) ? WORD_BOUNDARY : NO_WORD_BOUNDARY;
  return flags;
}

function consumes(inst: Inst, rune: number): boolean {
  switch (inst.op) {
    case RUNE_ANY:
      return true;
    case RUNE_ANY_NOT_NL:
      return rune !== 10;
    case RUNE:
    case RUNE1:
      return inst.matchRune(rune);
    default:
      return false;
  }
}

interface Thread {
  readonly pc: number;
  readonly caps: Int32Array;
}

/** A compiled pattern, ready to scan inputs. */
export class LinearMatcher {
  private readonly prog: Prog;
  private readonly words: number;
  /** For each instruction, the instructions that reach it without consuming input (ALT, NOP, CAPTURE, EMPTY_WIDTH). */
  private readonly emptyPredecessors: readonly number[][];
  private readonly consuming: readonly number[];
  private readonly matches: readonly number[];
  /** Capture slots: 2 × (groups + 1); slots 0 and 1 are the whole match. */
  readonly slots: number;

  constructor(regex: RE2JS) {
    this.prog = compiledProgram(regex);
    const insts = this.prog.inst;
    this.words = (insts.length + 31) >>> 5;
    this.slots = 2 * (regex.groupCount() + 1);
    const preds: number[][] = insts.map(() => []);
    const consuming: number[] = [];
    const matches: number[] = [];
    insts.forEach((inst, i) => {
      if (inst.op === ALT || inst.op === ALT_MATCH) {
        preds[inst.out]!.push(i);
        preds[inst.arg]!.push(i);
      } else if (inst.op === NOP || inst.op === CAPTURE || inst.op === EMPTY_WIDTH) preds[inst.out]!.push(i);
      else if (inst.op === MATCH) matches.push(i);
      else if (inst.op !== FAIL) consuming.push(i);
    });
    this.emptyPredecessors = preds;
    this.consuming = consuming;
    this.matches = matches;
  }

  /** Prepares one input: the backward pass, O(input length × program size). */
  scan(input: string): InputScan {
    const n = input.length;
    const { words, prog, emptyPredecessors } = this;
    // Code point boundaries, then the live sets from the end backwards.
    const bounds: number[] = [];
    for (let k = 0; k < n; k += input.codePointAt(k)! > 0xffff ? 2 : 1) bounds.push(k);
    bounds.push(n);
    const live = new Uint32Array((n + 1) * words);
    const work: number[] = [];
    const consuming = this.consuming;
    for (let b = bounds.length - 1; b >= 0; b--) {
      const k = bounds[b]!;
      const base = k * words;
      // Seeds: MATCH everywhere; a consuming instruction where it accepts this code point and its
      // successor is live at the next boundary.
      for (const i of this.matches) {
        live[base + (i >>> 5)]! |= 1 << (i & 31);
        work.push(i);
      }
      if (k < n) {
        const rune = input.codePointAt(k)!;
        const nextBase = bounds[b + 1]! * words;
        for (let c = 0; c < consuming.length; c++) {
          const i = consuming[c]!;
          const inst = prog.inst[i]!;
          const out = inst.out;
          if ((live[nextBase + (out >>> 5)]! & (1 << (out & 31))) !== 0 && consumes(inst, rune)) {
            live[base + (i >>> 5)]! |= 1 << (i & 31);
            work.push(i);
          }
        }
      }
      // Then everything that reaches a live instruction without consuming input.
      let flags = -1;
      while (work.length > 0) {
        const i = work.pop()!;
        for (const p of emptyPredecessors[i]!) {
          const w = base + (p >>> 5);
          const bit = 1 << (p & 31);
          if ((live[w]! & bit) !== 0) continue;
          const inst = prog.inst[p]!;
          if (inst.op === EMPTY_WIDTH) {
            if (flags < 0) flags = context(input, k);
            if ((inst.arg & ~flags) !== 0) continue;
          }
          live[w]! |= bit;
          work.push(p);
        }
      }
    }
    return new InputScan(input, prog, live, words, this.slots);
  }
}

/** One input after its backward pass: finds the leftmost-first match at or after a position. */
export class InputScan {
  private readonly seen: Uint8Array;

  constructor(
    private readonly input: string,
    private readonly prog: Prog,
    private readonly live: Uint32Array,
    private readonly words: number,
    private readonly slots: number,
  ) {
    this.seen = new Uint8Array(prog.inst.length);
  }

  private isLive(pc: number, k: number): boolean {
    return (this.live[k * this.words + (pc >>> 5)]! & (1 << (pc & 31))) !== 0;
  }

  /**
   * The leftmost-first match starting at or after `from` (a code point boundary), as capture slots
   * ([start, end] of the match, then of each group; -1 for a group that did not take part), or null.
   */
  find(from: number): Int32Array | null {
    const { input, prog } = this;
    const n = input.length;
    let start = from;
    while (start <= n && !this.isLive(prog.start, start))
      start += start < n && input.codePointAt(start)! > 0xffff ? 2 : 1;
    if (start > n) return null;
    const initial = new Int32Array(this.slots).fill(-1);
    initial[0] = start;
    let current: Thread[] = [];
    this.seen.fill(0);
    this.add(current, prog.start, start, initial);
    let best: Int32Array | null = null;
    for (let k = start; current.length > 0; ) {
      const rune = k < n ? input.codePointAt(k)! : -1;
      const width = rune > 0xffff ? 2 : 1;
      const next: Thread[] = [];
      this.seen.fill(0);
      for (const t of current) {
        const inst = prog.inst[t.pc]!;
        if (inst.op === MATCH) {
          best = t.caps.slice();
          best[1] = k;
          break; // threads after this one have lower priority
        }
        if (rune >= 0 && consumes(inst, rune)) this.add(next, inst.out, k + width, t.caps);
      }
      current = next;
      k += width;
    }
    return best;
  }

  /** Follows empty transitions from `pc` at position `k`, keeping only threads that can still match. */
  private add(list: Thread[], pc: number, k: number, caps: Int32Array): void {
    if (this.seen[pc] === 1 || !this.isLive(pc, k)) return;
    this.seen[pc] = 1;
    const inst = this.prog.inst[pc]!;
    switch (inst.op) {
      case ALT:
      case ALT_MATCH:
        this.add(list, inst.out, k, caps);
        this.add(list, inst.arg, k, caps);
        return;
      case NOP:
      case EMPTY_WIDTH: // live only where its assertion holds
        this.add(list, inst.out, k, caps);
        return;
      case CAPTURE: {
        if (inst.arg < caps.length) {
          const copy = caps.slice();
          copy[inst.arg] = k;
          this.add(list, inst.out, k, copy);
        } else this.add(list, inst.out, k, caps);
        return;
      }
      default:
        list.push({ pc, caps });
    }
  }
}
