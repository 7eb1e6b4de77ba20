/**
 * A big EDS push must not freeze the process (issue 25 §5). A channel process (bench/xds-channel-client.ts)
 * makes RATE calls per second in the background while the control plane pushes a ClusterLoadAssignment of N
 * endpoints PUSHES times (the 3 real backends, a marker backend, the rest on a closed loopback port; each push
 * shifts the refused addresses by one, as a changing fleet does). Per push, the longest event-loop stall
 * (the longest gap between the runs of a 10 ms interval timer, less 10 ms: what perf_hooks.monitorEventLoopDelay
 * measures as its max) from the push until SETTLE_MS after the client
 * ACKed it, and the time to that ACK. Side by side in the same run:
 *   - lbtree's `xds:` channel;
 *   - @grpc/grpc-js-xds's `xds:` channel (its pushes take seconds each: GRPC_JS_XDS_PUSHES of them);
 *   - the floor: a plain grpc-js channel whose resolver hands it the same N addresses (bench/xds-channel-floor.ts:
 *     one subchannel per address, all connecting), SETTLE_MS after each push. It pays grpc-js's own costs
 *     (its subchannel pool scans all of a channel's subchannels on each creation; the refused connections).
 * Goal: no stall over 100 ms on lbtree's side. Knobs: BENCH_STALL_N, BENCH_STALL_PUSHES,
 * BENCH_STALL_GRPC_JS_XDS_PUSHES, BENCH_STALL_RATE, BENCH_STALL_SETTLE_MS, BENCH_STALL_SIDES,
 * BENCH_STALL_LOCALITIES (default 10), BENCH_STALL_LOG (the channel process logs its stalls, for reading a
 * profile stall by stall), BENCH_XDS_NODE_FLAGS (e.g. a CPU profile of the channel process).
 */
import { loadavg } from 'node:os';
import { startBackends } from '../src/cli/loopback-backends.js';
import { CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, ControlPlane } from '../src/control-plane/index.js';
import { median } from './report.js';
import { baseline, bigAssignment, ChannelProcess, floorAddresses, type Side } from './xds-channel.js';
import { LOCALITIES } from './xds-channel-assignment.js';

const N = Number(process.env.BENCH_STALL_N ?? 10_000);
const PUSHES = Number(process.env.BENCH_STALL_PUSHES ?? 20);
const GRPC_JS_XDS_PUSHES = Number(process.env.BENCH_STALL_GRPC_JS_XDS_PUSHES ?? 3);
const RATE = Number(process.env.BENCH_STALL_RATE ?? 200);
const SETTLE_MS = Number(process.env.BENCH_STALL_SETTLE_MS ?? 1_000);
/** How many localities the N endpoints are in (the floor's channel gets the same addresses in the same order). */
const LOCALITY_COUNT = Number(process.env.BENCH_STALL_LOCALITIES ?? LOCALITIES);
const ACK_TIMEOUT_MS = 120_000;
const ALL_SIDES: readonly Side[] = ['grpc-js-floor', 'lbtree', 'grpc-js-xds'];
const ONLY = process.env.BENCH_STALL_SIDES?.split(',');
const SIDES = ALL_SIDES.filter((s) => !ONLY || ONLY.includes(s));

interface PushFigures {
  readonly maxStallMs: number;
  /** The most CPU time the process spent between two runs of its 10 ms timer: the stall the machine's load does not stretch. */
  readonly maxStallCpuMs: number;
  /** From the push to the client's ACK of it; NaN for the floor (no control plane). */
  readonly ackMs: number;
  readonly ok: number;
  readonly failed: number;
  readonly heapBytes: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The channel's stall figures, or null (its process killed) when it does not answer within the ACK cap. */
async function readStall(channel: ChannelProcess) {
  channel.send({ cmd: 'stall' });
  const answer = await channel.nextWithin(ACK_TIMEOUT_MS);
  if (answer === null) return null;
  if (!('maxStallMs' in answer)) throw new Error(`expected the stall figures, got ${JSON.stringify(answer)}`);
  return answer;
}

async function settledStall(channel: ChannelProcess) {
  await sleep(SETTLE_MS);
  return readStall(channel);
}

async function measureSide(side: Side): Promise<PushFigures[]> {
  const servers = await startBackends(['b1', 'b2', 'b3', 'marker']);
  const backends = servers.slice(0, 3);
  const marker = servers[3]!;
  const plane = new ControlPlane({ resources: baseline(backends) });
  await plane.listen('127.0.0.1:0');
  const nodeId = `eds-stall-${side}`;
  const channel = await ChannelProcess.start(side, plane, nodeId, floorAddresses(backends, marker));
  const figures: PushFigures[] = [];
  try {
    await channel.request({ cmd: 'load', rate: RATE }, 'loading');
    await sleep(SETTLE_MS);
    await readStall(channel);
    const pushes = side === 'grpc-js-xds' ? GRPC_JS_XDS_PUSHES : PUSHES;
    for (let push = 0; push < pushes; push++) {
      let ackMs = Number.NaN;
      if (side === 'grpc-js-floor') {
        await channel.request({ cmd: 'push', n: N, shift: push }, 'pushed');
      } else {
        const resources = bigAssignment(N, backends, marker, push, LOCALITY_COUNT);
        const start = process.hrtime.bigint();
        const version = plane.setResources(resources);
        const filter = { nodeId, typeUrl: CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, version };
        const acked = await plane.waitForAck(filter, ACK_TIMEOUT_MS).then(
          () => true,
          () => false,
        );
        ackMs = acked ? Number(process.hrtime.bigint() - start) / 1e6 : Number.POSITIVE_INFINITY;
      }
      // No ACK within the cap (or no answer): the side's pushes end here, its process is stopped.
      const read = Number.isFinite(ackMs) || Number.isNaN(ackMs) ? await settledStall(channel) : null;
      if (read === null) {
        figures.push({
          maxStallMs: Number.NaN,
          maxStallCpuMs: Number.NaN,
          ackMs: Number.POSITIVE_INFINITY,
          ok: 0,
          failed: 0,
          heapBytes: 0,
        });
        break;
      }
      figures.push({ ...read, ackMs });
    }
  } finally {
    await channel.exit();
    await plane.close();
    for (const s of servers) s.stop();
  }
  return figures;
}

export async function runXdsEdsStallBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const runs = new Map<Side, PushFigures[]>();
  for (const side of SIDES) runs.set(side, await measureSide(side));
  console.log(
    `\n## a ${N.toLocaleString('en')}-endpoint EDS push (${LOCALITY_COUNT} localities) under ${RATE} calls/s: the longest event-loop stall (load average at start ${load.join(' ')})\n`,
  );
  console.log(
    '| side | pushes | first push: longest stall | later pushes: median of longest stalls | later pushes: longest stall | longest stall in CPU time: first push / later ones | push → ACK (median) | calls failed |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [side, list] of runs) {
    const later = list.slice(1);
    const fmt = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : `${x.toFixed(1)} ms`);
    const name = side === 'grpc-js-floor' ? 'grpc-js floor (plain channel, same addresses)' : side;
    console.log(
      `| ${name} | ${list.length} | ${fmt(list[0]?.maxStallMs)} | ${fmt(later.length ? median(later.map((f) => f.maxStallMs)) : undefined)} | ${fmt(later.length ? Math.max(...later.map((f) => f.maxStallMs)) : undefined)} | ${fmt(list[0]?.maxStallCpuMs)} / ${fmt(later.length ? Math.max(...later.map((f) => f.maxStallCpuMs)) : undefined)} | ${fmt(median(list.map((f) => f.ackMs)))} | ${list.reduce((n, f) => n + f.failed, 0)} of ${list.reduce((n, f) => n + f.failed + f.ok, 0)} |`,
    );
  }
  for (const [side, list] of runs) {
    if (list.some((f) => f.ackMs === Number.POSITIVE_INFINITY)) {
      console.log(
        `\n${side}: no ACK (or no answer) within ${ACK_TIMEOUT_MS / 1000} s at push ${list.length}; its pushes stopped there.`,
      );
    }
    console.log(
      `\n${side}, per push (longest stall ms / most CPU ms between two timer runs / ACK ms / heap MB): ${list.map((f) => `${f.maxStallMs.toFixed(0)}/${f.maxStallCpuMs.toFixed(0)}/${Number.isNaN(f.ackMs) ? '-' : f.ackMs.toFixed(0)}/${(f.heapBytes / 2 ** 20).toFixed(0)}`).join(', ')}`,
    );
  }
}
