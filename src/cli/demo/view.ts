/** What the demo shows while a scenario plays: a live screen on a TTY, plain progress lines otherwise. */
export interface BackendRow {
  readonly name: string;
  readonly address: string;
  readonly running: boolean;
  readonly served: number;
  readonly ratePerSecond: number;
}

/** Lines about something beside the backends (e.g. what a control plane sent and its client answered). */
export interface Panel {
  readonly title: string;
  readonly lines: readonly string[];
}

export type PanelSource = () => Panel;

export interface Frame {
  readonly scenario: string;
  readonly elapsedMs: number;
  /** Undefined at fast pace, where phases end when their outcome shows. */
  readonly durationMs: number | undefined;
  readonly channelState: string;
  readonly event: string;
  readonly backends: readonly BackendRow[];
  readonly failures: number;
  readonly panel?: Panel;
}

export interface View {
  event(text: string): void;
  frame(frame: Frame): void;
  line(text: string): void;
  close(): void;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

const SHOW_CURSOR = '\x1b[?25h';
const HIDE_CURSOR = '\x1b[?25l';

/**
 * Redraws one screen in place, with the cursor hidden meanwhile. The cursor comes back on close, and also
 * when the user presses Ctrl-C (SIGINT, SIGTERM): the process then ends with 130 as a shell expects.
 */
export class LiveView implements View {
  private readonly events: string[] = [];
  private readonly interrupted = (): void => {
    this.close();
    process.exit(130);
  };
  constructor(private readonly out: NodeJS.WritableStream) {
    out.write(HIDE_CURSOR);
    process.once('SIGINT', this.interrupted);
    process.once('SIGTERM', this.interrupted);
  }
  event(text: string): void {
    this.events.push(text);
  }
  line(text: string): void {
    this.events.push(text);
  }
  frame(f: Frame): void {
    const max = Math.max(1, ...f.backends.map((b) => b.ratePerSecond));
    const rows = f.backends.map((b) => {
      const bar = '█'.repeat(Math.round((20 * b.ratePerSecond) / max));
      const state = b.running ? `${b.ratePerSecond.toFixed(0).padStart(6)}/s ${bar}` : '  (down)';
      return `  ${b.name.padEnd(10)} ${b.address.padEnd(22)} ${String(b.served).padStart(7)}  ${state}`;
    });
    const screen = [
      `lbtree demo — ${f.scenario}   ${seconds(f.elapsedMs)}${f.durationMs === undefined ? '' : ` / ${seconds(f.durationMs)}`}   channel: ${f.channelState}`,
      '',
      `  now: ${f.event}`,
      '',
      `  ${'backend'.padEnd(10)} ${'address'.padEnd(22)} ${'RPCs'.padStart(7)}  rate`,
      ...rows,
      '',
      `  failed RPCs: ${f.failures}`,
      '',
      ...(f.panel ? [`  ${f.panel.title}:`, ...f.panel.lines.map((l) => `    ${l}`), ''] : []),
      '  events:',
      ...this.events.slice(-8).map((e) => `    ${e}`),
    ];
    this.out.write(`\x1b[H\x1b[2J${screen.join('\n')}\n`);
  }
  close(): void {
    process.off('SIGINT', this.interrupted);
    process.off('SIGTERM', this.interrupted);
    this.out.write(SHOW_CURSOR);
  }
}

/** Progress lines for logs and CI: events as they happen, a status line every couple of seconds. */
export class PlainView implements View {
  private lastStatus = -Infinity;
  constructor(private readonly out: NodeJS.WritableStream) {}
  event(text: string): void {
    this.out.write(`• ${text}\n`);
  }
  line(text: string): void {
    this.out.write(`${text}\n`);
  }
  frame(f: Frame): void {
    if (f.elapsedMs - this.lastStatus < 2000) return;
    this.lastStatus = f.elapsedMs;
    const parts = f.backends.map(
      (b) => `${b.name}=${b.served}${b.running ? `(${b.ratePerSecond.toFixed(0)}/s)` : '(down)'}`,
    );
    this.out.write(`  [${seconds(f.elapsedMs)}] ${f.channelState} ${parts.join(' ')} failed=${f.failures}\n`);
  }
  close(): void {}
}
