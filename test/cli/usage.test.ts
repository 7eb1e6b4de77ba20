import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { nodeEval, nodeScript, sourceModule } from '../support/child-node.js';

const lbtree = (...args: string[]) =>
  spawnSync(process.execPath, nodeScript('src/cli/main.ts', ...args), {
    encoding: 'utf8',
    timeout: 60_000,
  });

test('an unknown flag, or one of another command, is a usage error (exit 2), not a stack trace', () => {
  for (const [args, message] of [
    [['demo', '--bogus'], /lbtree: unknown option --bogus/],
    [['simulate', '--duration', '5'], /lbtree: simulate takes no --duration option/],
    [['frobnicate'], /lbtree: unknown command "frobnicate"/],
  ] as const) {
    const r = lbtree(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /lbtree --help/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('--version and -v print the version of package.json', () => {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = lbtree(flag);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`, flag);
  }
});

test('COMMAND --help (and help COMMAND) prints that command’s usage and options, not every command’s', () => {
  const own = {
    simulate: ['--cluster FILE', '--endpoints FILE', '--scenario FILE', '--html OUT.html'],
    demo: ['--scenario NAME', '--duration SECONDS', '--fast', '--plain', '--admin-port PORT', 'round-robin'],
    'control-plane': ['--resources FILE', '--port N', '--print-bootstrap', '--bootstrap-file OUT'],
  } as const;
  for (const [command, options] of Object.entries(own)) {
    for (const args of [
      [command, '--help'],
      [command, '-h'],
      ['help', command],
    ]) {
      const r = lbtree(...args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stdout.startsWith(`Usage:\n  lbtree ${command} `), `${args.join(' ')}:\n${r.stdout}`);
      for (const option of options) assert.ok(r.stdout.includes(option), `${args.join(' ')} lists ${option}`);
      for (const other of Object.keys(own).filter((c) => c !== command))
        assert.ok(!r.stdout.includes(`lbtree ${other} `), `${args.join(' ')} does not describe ${other}`);
    }
  }
  const unknown = lbtree('help', 'frobnicate');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /lbtree: unknown command "frobnicate"/);
});

test('--help: within each section the descriptions start in one column', () => {
  const helps = [['--help'], ['simulate', '--help'], ['demo', '--help'], ['control-plane', '--help']];
  const sections = helps.flatMap((args) => {
    const r = lbtree(...args);
    assert.equal(r.status, 0, args.join(' '));
    return r.stdout.split(/\n\n/).filter((s) => /^[A-Z][^\n]*:\n {2}/.test(s) && !s.startsWith('Usage'));
  });
  assert.ok(sections.length >= 9, `sections found: ${sections.length}`);
  for (const section of sections) {
    const starts = section
      .split('\n')
      .slice(1)
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const term = /^ {2}(\S+(?: \S+)*)( {2,})\S/.exec(line);
        return term ? 2 + term[1]!.length + term[2]!.length : line.search(/\S/);
      });
    assert.equal(new Set(starts).size, 1, `misaligned section:\n${section}`);
  }
});

test('Ctrl-C during the live demo view brings the cursor back and exits 130', () => {
  const script = `
    import { LiveView } from '${sourceModule('src/cli/demo/view.ts')}';
    const view = new LiveView(process.stdout);
    view.frame({ scenario: 's', elapsedMs: 0, durationMs: 1000, channelState: 'READY', event: '-', backends: [], failures: 0 });
    process.kill(process.pid, 'SIGINT');
    setTimeout(() => {}, 10_000);
  `;
  const r = spawnSync(process.execPath, nodeEval(script), {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 130, r.stderr);
  assert.ok(r.stdout.includes('\x1b[?25l'), 'the view hid the cursor');
  assert.ok(r.stdout.endsWith('\x1b[?25h'), 'and showed it again on SIGINT');
});
