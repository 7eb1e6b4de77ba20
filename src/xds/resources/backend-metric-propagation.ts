// Which parts of a backend's per-call ORCA report (A51) go into the LRS load reports of a cluster. A64 sent every
// `named_metrics` entry under its own key; A85 replaces that with the Cluster's `lrs_report_endpoint_metrics`:
// only the fields it lists are sent, named metrics as `named_metrics.<key>`, and the top-level utilizations in
// their own LRS fields. A85 keeps A64's behaviour behind GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION=false.

/** What of an ORCA per-call report a cluster's load reports carry. */
export interface XdsBackendMetricPropagation {
  readonly cpuUtilization: boolean;
  readonly memUtilization: boolean;
  readonly applicationUtilization: boolean;
  /** `named_metrics.*`: every named metric. */
  readonly allNamedMetrics: boolean;
  /** `named_metrics.<key>`: these keys of the named metrics (when not all are sent). */
  readonly namedMetricKeys: ReadonlySet<string>;
  /** Put before a named metric's key in LRS: A85's `named_metrics.`, nothing in A64's form. */
  readonly namedMetricPrefix: string;
}

/** A85: the LRS name of ORCA named metric `foo` is `named_metrics.foo`. */
export const NAMED_METRICS_PREFIX = 'named_metrics.';

const NO_KEYS: ReadonlySet<string> = new Set();

/** A85 with `lrs_report_endpoint_metrics` unset: nothing of ORCA reaches LRS. */
export const NO_BACKEND_METRIC_PROPAGATION: XdsBackendMetricPropagation = Object.freeze({
  cpuUtilization: false,
  memUtilization: false,
  applicationUtilization: false,
  allNamedMetrics: false,
  namedMetricKeys: NO_KEYS,
  namedMetricPrefix: NAMED_METRICS_PREFIX,
});

/** A64 (A85's switch off): every named metric under its own key, nothing else. */
export const A64_BACKEND_METRIC_PROPAGATION: XdsBackendMetricPropagation = Object.freeze({
  cpuUtilization: false,
  memUtilization: false,
  applicationUtilization: false,
  allNamedMetrics: true,
  namedMetricKeys: NO_KEYS,
  namedMetricPrefix: '',
});

/**
 * A85 "CDS Resource Validation": `cpu_utilization`, `mem_utilization`, `application_utilization`,
 * `named_metrics.*` and `named_metrics.<key>`; any other string is ignored (forward compatibility), so nothing
 * here is NACKed.
 */
export function parseBackendMetricPropagation(fields: readonly string[]): XdsBackendMetricPropagation {
  if (fields.length === 0) return NO_BACKEND_METRIC_PROPAGATION;
  let cpuUtilization = false;
  let memUtilization = false;
  let applicationUtilization = false;
  let allNamedMetrics = false;
  const keys = new Set<string>();
  for (const field of fields) {
    if (field === 'cpu_utilization') cpuUtilization = true;
    else if (field === 'mem_utilization') memUtilization = true;
    else if (field === 'application_utilization') applicationUtilization = true;
    else if (field === `${NAMED_METRICS_PREFIX}*`) allNamedMetrics = true;
    else if (field.startsWith(NAMED_METRICS_PREFIX)) keys.add(field.slice(NAMED_METRICS_PREFIX.length));
  }
  return Object.freeze({
    cpuUtilization,
    memUtilization,
    applicationUtilization,
    allNamedMetrics,
    namedMetricKeys: allNamedMetrics || keys.size === 0 ? NO_KEYS : keys,
    namedMetricPrefix: NAMED_METRICS_PREFIX,
  });
}

/** Whether any part of an ORCA report is propagated (if not, the call's trailer need not be decoded). */
export function propagatesBackendMetrics(p: XdsBackendMetricPropagation): boolean {
  return (
    p.cpuUtilization ||
    p.memUtilization ||
    p.applicationUtilization ||
    p.allNamedMetrics ||
    p.namedMetricKeys.size > 0
  );
}

/** Equal for equal propagations: A85 makes it part of a locality's stats key. */
export function backendMetricPropagationKey(p: XdsBackendMetricPropagation): string {
  const bits = `${+p.cpuUtilization}${+p.memUtilization}${+p.applicationUtilization}${+p.allNamedMetrics}`;
  return `${bits}|${p.namedMetricPrefix}|${[...p.namedMetricKeys].sort().join('\n')}`;
}
