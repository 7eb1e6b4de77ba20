/** One connect-storm measurement in a process of its own, forked by storm.ts: a job in, its figures out. */
import { runStormJob, type StormJob } from './storm-measure.js';

process.once('message', (job: StormJob) => {
  runStormJob(job).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (error: unknown) =>
      process.send!({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
        process.exit(1),
      ),
  );
});
