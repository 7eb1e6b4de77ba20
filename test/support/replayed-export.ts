import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayRecording } from '../../src/cli/simulate/replay.js';
import { replayTextReport } from '../../src/cli/simulate/replay-report.js';
import { type FlightRecorder, readRecording } from '../../src/recorder/index.js';

/**
 * A recorder's export read back and replayed in the simulator, as `lbtree simulate --replay` does. A copy of the
 * file stays on disk until `discard()`, and `text` (the replay's report) names it, so a failing assertion that
 * prints `text` says which file to replay by hand. KEEP_RECORDING=1 keeps the copy after a pass too.
 */
export function replayExport(recorder: FlightRecorder, name: string) {
  const exported = recorder.export();
  const recording = readRecording(exported);
  const report = replayRecording(recording);
  const saved = join(tmpdir(), `lbtree-e2e-${name}-${process.pid}.lbrec`);
  writeFileSync(saved, exported);
  return {
    recording,
    report,
    text: `${replayTextReport(report)}\n(recording: ${saved})`,
    discard(): void {
      if (process.env.KEEP_RECORDING) console.log(`kept ${saved}`);
      else rmSync(saved);
    },
  };
}
