import { readFileSync } from 'node:fs';

/**
 * What a timed region cost besides its wall time: this process's CPU time (its own thread and V8's GC helper
 * threads), and how much of the machine's CPU time its host took (steal) meanwhile. On a virtual machine a
 * wall-time outlier with steal beside it was the host's doing; one with CPU time above its wall time was
 * parallel garbage collection.
 */
export interface CpuSample {
  readonly cpuMicros: number;
  /** Jiffies (all CPUs) from /proc/stat: the host's steal, and the total; both 0 where there is no /proc. */
  readonly stealTicks: number;
  readonly totalTicks: number;
}

function machineTicks(): { steal: number; total: number } {
  try {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": steal is the 8th field.
    const fields = readFileSync('/proc/stat', 'latin1').slice(0, 256).split('\n', 1)[0]!.trim().split(/\s+/);
    let total = 0;
    // guest and guest_nice are already counted in user and nice.
    for (let i = 1; i <= 8 && i < fields.length; i++) total += Number(fields[i]);
    return { steal: Number(fields[8] ?? 0), total };
  } catch {
    return { steal: 0, total: 0 };
  }
}

/** Starts a sample; the function it returns ends it. */
export function startCpuSample(): () => CpuSample {
  const ticks = machineTicks();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    const after = machineTicks();
    return {
      cpuMicros: used.user + used.system,
      stealTicks: after.steal - ticks.steal,
      totalTicks: after.total - ticks.total,
    };
  };
}

/** The host's share of the machine's CPU time over some samples, in percent; null where it is not known. */
export function stealPercent(samples: readonly CpuSample[]): number | null {
  let steal = 0;
  let total = 0;
  for (const s of samples) {
    steal += s.stealTicks;
    total += s.totalTicks;
  }
  return total > 0 ? (100 * steal) / total : null;
}
