// `lbtree control-plane` as a user runs it: a subprocess serving a file, that a client reaches at the
// printed address, that pushes a new version when the file is edited, keeps the last good set when the file
// breaks, prints the client's ACK, and stops cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { runControlPlane } from '../../src/cli/control-plane/command.js';
import { CLUSTER_TYPE_URL, cluster, LISTENER_TYPE_URL, xdsService } from '../../src/control-plane/index.js';
import { AdsTestClient, namesIn } from '../support/ads-test-client.js';
import { nodeScript } from '../support/child-node.js';

/** Output lines (a child's stdout, or what an in-process command prints), with a wait for a matching line. */
class Output {
  readonly lines: string[] = [];
  private readonly waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  private buffer = '';
  constructor(child?: ChildProcess) {
    child?.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      const parts = this.buffer.split('\n');
      this.buffer = parts.pop()!;
      for (const line of parts) this.add(line);
    });
  }
  add(line: string): void {
    this.lines.push(line);
    for (const w of [...this.waiters]) {
      if (w.pattern.test(line)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  }
  /** The first line (already printed or to come, after `from`) matching `pattern`. */
  waitFor(pattern: RegExp, from = 0, timeoutMs = 45_000): Promise<string> {
    const seen = this.lines.slice(from).find((l) => pattern.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no line matching ${pattern} within ${timeoutMs} ms; output:\n${this.lines.join('\n')}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({
        pattern,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }
}

const service = (edsEndpoint: string) =>
  xdsService({ name: 'svc', clusters: [{ name: 'c1', localities: [{ endpoints: [edsEndpoint] }] }] });

test('lbtree control-plane serves the file, pushes edits, keeps the last good set, stops on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-cp-'));
  const file = join(dir, 'resources.yaml');
  writeFileSync(file, stringify(service('127.0.0.1:1001')));
  const child = spawn(
    process.execPath,
    nodeScript('src/cli/main.ts', 'control-plane', '--resources', file, '--port', '0', '--print-bootstrap'),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const out = new Output(child);
  let client: AdsTestClient | undefined;
  try {
    const listening = await out.waitFor(/^listening on /);
    const address = listening.slice('listening on '.length);
    assert.match(address, /^127\.0\.0\.1:\d+$/);
    const bootstrap = JSON.parse((await out.waitFor(/^bootstrap: /)).slice('bootstrap: '.length));
    assert.equal(bootstrap.xds_servers[0].server_uri, address);

    client = new AdsTestClient(address, 'cli-test-node');
    client.send({ typeUrl: CLUSTER_TYPE_URL });
    const v1 = await client.next(30_000);
    assert.equal(v1.versionInfo, '1');
    assert.deepEqual(namesIn(v1), ['c1']);
    client.ack(v1);
    await out.waitFor(/^ACK {2}cli-test-node Cluster version 1/);

    // An edit (written to a new file and renamed over the old one, as editors save) adds a cluster.
    writeFileSync(`${file}.tmp`, stringify([...service('127.0.0.1:1001'), cluster({ name: 'c2' })]));
    renameSync(`${file}.tmp`, file);
    const v2 = await client.next(30_000);
    assert.equal(v2.versionInfo, '2');
    assert.deepEqual(namesIn(v2).sort(), ['c1', 'c2']);
    await out.waitFor(/^serving version 2: /);

    // A broken file is reported with its reason; version 2 keeps serving.
    const before = out.lines.length;
    writeFileSync(
      file,
      '- "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster\n  name: c3\n  lb_policy: NOPE\n',
    );
    const report = await out.waitFor(/not loaded/, before);
    assert.match(report, /resources\[0\] \(Cluster\)/);
    assert.match(report, /still serving version 2/);
    writeFileSync(file, 'key: [unclosed');
    const yamlReport = await out.waitFor(/not loaded/, out.lines.indexOf(report) + 1);
    assert.match(yamlReport, /line 1/);

    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.match(out.lines.at(-1) ?? '', /^stopped \(SIGTERM\)/);
    assert.equal((await client.ended()).code !== 0, true);
  } finally {
    client?.close();
    child.kill('SIGKILL');
  }
});

test('lbtree control-plane: a missing or invalid file is an error before listening', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-cp-'));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, '- name: no-type\n');
  const run = async (resources: string) => {
    const errors: string[] = [];
    const io = {
      out: () => {},
      err: (line: string) => errors.push(line),
      stopped: new Promise<string>(() => {}),
    };
    const code = await runControlPlane({ resources, host: '127.0.0.1', port: 0, printBootstrap: false }, io);
    return { code, stderr: errors.join('\n') };
  };
  const missing = await run(join(dir, 'nope.yaml'));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nope\.yaml: no such file/);
  const invalid = await run(bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /bad\.yaml: resources\[0\]: "@type" is missing/);
});

/** `lbtree control-plane` run in-process on a free port, its output collected line by line. */
async function runInProcess(file: string) {
  const out = new Output();
  let stop: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const exitCode = runControlPlane(
    { resources: file, host: '127.0.0.1', port: 0, printBootstrap: false },
    { out: (line) => out.add(line), err: (line) => out.add(line), stopped },
  );
  const address = (await out.waitFor(/^listening on /)).slice('listening on '.length);
  return {
    out,
    address,
    stop: async () => {
      stop('test over');
      return exitCode;
    },
  };
}

function resourceFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'lbtree-cp-')), 'resources.yaml');
  writeFileSync(file, text);
  return file;
}

test('lbtree control-plane: an empty or comments-only file keeps the last good set; "resources: []" clears it', async () => {
  const file = resourceFile(stringify(service('127.0.0.1:1001')));
  const plane = await runInProcess(file);
  const { out } = plane;
  const client = new AdsTestClient(plane.address, 'empty-file-node');
  try {
    client.send({ typeUrl: CLUSTER_TYPE_URL });
    const v1 = await client.next(30_000);
    assert.deepEqual([v1.versionInfo, namesIn(v1)], ['1', ['c1']]);
    client.ack(v1);

    // What an editor or `gen > file` leaves for a moment: reported, and version 1 keeps serving.
    for (const text of ['', '# regenerated by make resources\n']) {
      const before = out.lines.length;
      writeFileSync(file, text);
      const report = await out.waitFor(/not loaded/, before);
      assert.match(report, /holds no resources/, JSON.stringify(text));
      assert.match(report, /still serving version 1/, JSON.stringify(text));
    }

    // Said on purpose: the next version serves nothing, and the client's cluster is deleted (CDS).
    writeFileSync(file, 'resources: []\n');
    const v2 = await client.next(30_000);
    assert.deepEqual([v2.versionInfo, namesIn(v2)], ['2', []], 'no version was pushed for the empty files');
    await out.waitFor(/^serving version 2: no resources/);
  } finally {
    client.close();
    assert.equal(await plane.stop(), 0);
  }
});

test('lbtree control-plane: a listener it does not have is named once per stream, with the ones it has', async () => {
  const file = resourceFile(stringify(service('127.0.0.1:1001')));
  const plane = await runInProcess(file);
  const { out } = plane;
  const client = new AdsTestClient(plane.address, 'typo-node');
  const unknownLine =
    /^client typo-node \(stream \d+\) asked for Listener "svx", which .*resources\.yaml does not have \(it has Listener "svc"\)$/;
  try {
    client.send({ typeUrl: LISTENER_TYPE_URL, resourceNames: ['svx'] });
    const v1 = await client.next(30_000);
    assert.deepEqual(namesIn(v1), []);
    await out.waitFor(unknownLine);
    client.ack(v1, ['svx']);
    await out.waitFor(/^ACK {2}typo-node Listener version 1/);
    // A new version is sent to the stream again, and ACKed again: the name is not reported again.
    writeFileSync(file, stringify([...service('127.0.0.1:1001'), cluster({ name: 'c2' })]));
    const v2 = await client.next(30_000);
    client.ack(v2, ['svx']);
    await out.waitFor(/^ACK {2}typo-node Listener version 2/);
    assert.equal(out.lines.filter((l) => unknownLine.test(l)).length, 1, out.lines.join('\n'));
  } finally {
    client.close();
    assert.equal(await plane.stop(), 0);
  }
});

test('lbtree control-plane: an empty list after names is logged as an unsubscribe; a wildcard as [*]', async () => {
  const plane = await runInProcess(resourceFile(stringify(service('127.0.0.1:1001'))));
  const { out } = plane;
  const client = new AdsTestClient(plane.address, 'unsub-node');
  try {
    // xDS protocol, legacy wildcard: an empty first LDS / CDS list asks for every resource of the type.
    client.send({ typeUrl: LISTENER_TYPE_URL });
    const lds = await client.next(30_000);
    client.ack(lds);
    assert.equal(await out.waitFor(/^ACK {2}unsub-node Listener /), 'ACK  unsub-node Listener version 1 [*]');
    client.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    const cds = await client.next(30_000);
    client.ack(cds, ['c1']);
    assert.equal(await out.waitFor(/^ACK {2}unsub-node Cluster /), 'ACK  unsub-node Cluster version 1 [c1]');
    // Once names were given, an empty list unsubscribes (the client no longer wants any cluster).
    const before = out.lines.length;
    client.ack(cds, []);
    assert.equal(
      await out.waitFor(/^ACK {2}unsub-node Cluster /, before),
      'ACK  unsub-node Cluster version 1; unsubscribed from all Clusters',
    );
  } finally {
    client.close();
    assert.equal(await plane.stop(), 0);
  }
});
