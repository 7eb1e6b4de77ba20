import type { MetricsRecorder } from '../core/index.js';
import { ChannelMetricsRecorder } from './channel-metrics-recorder.js';
import { checkMetricsOptions, type MetricsOptions } from './metrics-options.js';
import { OpenTelemetryStatsPlugin } from './opentelemetry-plugin.js';

/** One plugin per options object: channels given the same options share its instruments. */
const plugins = new WeakMap<MetricsOptions, OpenTelemetryStatsPlugin>();
/** A79's global stats plugin registry. */
const globalPlugins: OpenTelemetryStatsPlugin[] = [];

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
 * registration). Adding the same options object again does nothing. Returns the function that removes them
 * again (for channels created afterwards).
 */
export function addGlobalMetrics(options: MetricsOptions): () => void {
  const plugin = pluginFor(checkMetricsOptions(options, 'metrics'));
  if (!globalPlugins.includes(plugin)) globalPlugins.push(plugin);
  return () => {
    const at = globalPlugins.indexOf(plugin);
    if (at >= 0) globalPlugins.splice(at, 1);
  };
}

/**
 * The recorder of a channel to `target`: the global plugins plus the channel's own (`channelOptions`, already
 * checked), or undefined when there is none (then components record nothing and compute no values for it).
 */
export function metricsRecorderFor(
  target: string,
  channelOptions?: MetricsOptions,
): MetricsRecorder | undefined {
  const list = globalPlugins.slice();
  if (channelOptions !== undefined) {
    const own = pluginFor(channelOptions);
    if (!list.includes(own)) list.push(own);
  }
  return list.length === 0 ? undefined : new ChannelMetricsRecorder(target, list);
}
