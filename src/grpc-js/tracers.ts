import { experimental, logVerbosity } from '@grpc/grpc-js';
import type { Trace } from '../core/index.js';

/** The tracer that turns on every lbtree line. */
export const LBTREE_TRACER = 'lbtree';

const NO_TRACE: Trace = () => {};

/**
 * The tracers GRPC_TRACE turns on, read as grpc-js reads it: GRPC_NODE_TRACE first, a comma-separated list,
 * `all` for every tracer, `-name` to turn one off. grpc-js prints a trace line only if its tracer is on, so
 * lbtree picks for each line a tracer grpc-js will print: the line's own (`priority`, `xds_client`, …), or
 * else `lbtree`, which turns on all of lbtree's lines.
 */
export class TracerSelection {
  private readonly on = new Set<string>();
  private readonly off = new Set<string>();
  private readonly all: boolean;
  private readonly tags = new Map<string, string | null>();

  constructor(env: NodeJS.ProcessEnv) {
    for (const name of (env.GRPC_NODE_TRACE ?? env.GRPC_TRACE ?? '').split(',')) {
      if (name.startsWith('-')) this.off.add(name.slice(1));
      else if (name !== '') this.on.add(name);
    }
    this.all = this.on.has('all');
  }

  /** Whether any tracer is on: with none, lbtree's traces are functions that do nothing. */
  get any(): boolean {
    return this.on.size > 0;
  }

  /** The tracer a line of `name` is logged under so that grpc-js prints it; null when it is off. */
  tagFor(name: string): string | null {
    let tag = this.tags.get(name);
    if (tag === undefined) {
      tag = this.isOn(name) ? name : !this.off.has(name) && this.isOn(LBTREE_TRACER) ? LBTREE_TRACER : null;
      this.tags.set(name, tag);
    }
    return tag;
  }

  private isOn(name: string): boolean {
    return !this.off.has(name) && (this.all || this.on.has(name));
  }
}

// Read once, when grpc-js reads it: a tracer that is off costs one branch and builds no message.
const processSelection = new TracerSelection(process.env);

/** Lines of one tracer (the xDS client's `xds_client`) on grpc-js's logger, at DEBUG like grpc-js's own. */
export function namedTrace(tracer: string, selection: TracerSelection = processSelection): Trace {
  const tag = selection.tagFor(tracer);
  return tag === null ? NO_TRACE : (message) => experimental.trace(logVerbosity.DEBUG, tag, message());
}

/** A policy's line starts with the name of the policy that wrote it: `priority: child p0 reported READY`. */
const WRITER = /^([a-z][a-z0-9_]*): /;

/**
 * The trace of a policy tree that grpc-js runs as `policyName`. Each line's tracer is the policy that wrote it,
 * read from the start of the line (`priority: …` is the `priority` tracer's); a line that names none is
 * `policyName`'s. Lines are logged prefixed with `policyName`. With any tracer on, messages are built to be
 * read; with none, nothing is.
 */
export function lbtreeTracer(policyName: string, selection: TracerSelection = processSelection): Trace {
  if (!selection.any) return NO_TRACE;
  return (message) => {
    const text = message();
    const tag = selection.tagFor(WRITER.exec(text)?.[1] ?? policyName);
    if (tag !== null) experimental.trace(logVerbosity.DEBUG, tag, `${policyName}: ${text}`);
  };
}
