import type { MetricsRecorder } from '../core/index.js';
import { ChannelMetricValues } from './channel-metric-values.js';
import { ChannelMetricsRecorder } from './channel-metrics-recorder.js';
import { MetricSelection } from './metric-selection.js';
import { checkMetricsOptions, type MetricsOptions } from './metrics-options.js';
import { OpenTelemetryStatsPlugin } from './opentelemetry-plugin.js';
import type { StatsPlugin } from './stats-plugin.js';

/** One plugin per options object: channels given the same options share its instruments. */
const plugins = new WeakMap<MetricsOptions, OpenTelemetryStatsPlugin>();
/** The selection of options without a MeterProvider (the live view only). */
const viewOnly = new WeakMap<MetricsOptions, MetricSelection>();

function selectionOf(options: MetricsOptions): MetricSelection {
  if (options.meterProvider !== undefined) return pluginFor(options).selection;
  let selection = viewOnly.get(options);
  if (selection === undefined) {
    selection = new MetricSelection(options);
    viewOnly.set(options, selection);
  }
  return selection;
}

/** A79's global stats plugin registry (the options, with their plugin when they name a MeterProvider). */
const globalOptions: MetricsOptions[] = [];

function pluginFor(options: MetricsOptions): OpenTelemetryStatsPlugin {
  let plugin = plugins.get(options);
  if (plugin === undefined) {
    plugin = new OpenTelemetryStatsPlugin(options);
    plugins.set(options, plugin);
  }
  return plugin;
}

/**
 * Records the metrics of every channel created from now on to `options.meterProvider` (A79 global
 * registration), and shows them in the live view; without a MeterProvider, only in the live view. Adding the
 * same options object again does nothing. Returns the function that removes them again (for channels created
 * afterwards).
 */
export function addGlobalMetrics(options: MetricsOptions): () => void {
  checkMetricsOptions(options, 'metrics');
  if (!globalOptions.includes(options)) globalOptions.push(options);
  return () => {
    const at = globalOptions.indexOf(options);
    if (at >= 0) globalOptions.splice(at, 1);
  };
}

/**
 * The recorder of a channel to `target`: the global metrics options plus the channel's own (`channelOptions`,
 * already checked), each with a MeterProvider recording to it, and lbtree's own copy of the values for the
 * live view; undefined when there are no options at all (then components record nothing and compute no
 * values for it).
 */
export function metricsRecorderFor(
  target: string,
  channelOptions?: MetricsOptions,
): MetricsRecorder | undefined {
  const list = globalOptions.slice();
  if (channelOptions !== undefined && !list.includes(channelOptions)) list.push(channelOptions);
  if (list.length === 0) return undefined;
  const otel: OpenTelemetryStatsPlugin[] = [];
  for (const options of list) if (options.meterProvider !== undefined) otel.push(pluginFor(options));
  const values = new ChannelMetricValues(list.map(selectionOf));
  const all: StatsPlugin[] = [...otel, values];
  return new ChannelMetricsRecorder(target, all, values);
}
