// A96's retry metrics on channels whose calls grpc-js configures from a plain service config (the channel's
// `grpc.service_config`, or the one its resolver returns), for the resolvers lbtree owns besides xds: (`endpoints:`
// and the front of `dns:`). A call's tracer and end filter travel in its call config, which only a config
// selector gives; grpc-js makes such channels' config selector itself from the service config, with a function
// its package entry does not export. So, only while a channel records A96 metrics, the resolver hands grpc-js a
// config selector that is grpc-js's own (the very function grpc-js 1.14 uses, from its build files) plus the
// tracer: the same method config, retry and hedging policies and timeouts, chosen by the same code.

import { createRequire } from 'node:module';
import { type ChannelOptions, experimental, logVerbosity, type Metadata } from '@grpc/grpc-js';
import { CallRetryTracers, recordsCallRetries } from '../metrics/index.js';
import { CALL_RETRY_TRACER, TrackedCall } from './call-retry-tracking.js';
import { canonicalTarget, channelMetricsRecorder } from './channel-metrics.js';
import { CHANNEL_TARGET_OPTION } from './channel-registry.js';

type GrpcServiceConfig = Extract<
  NonNullable<Parameters<experimental.ResolverListener>[2]>,
  { ok: true }
>['value'];
type CallConfig = ReturnType<experimental.ConfigSelector['invoke']>;

/** The two functions of grpc-js 1.14 that make a channel's default config selector from its service config. */
interface DefaultConfigSelection {
  getDefaultConfigSelector(serviceConfig: GrpcServiceConfig): experimental.ConfigSelector;
  validateServiceConfig(json: unknown): GrpcServiceConfig;
}

let selection: DefaultConfigSelection | null | undefined;

/** grpc-js's default config selection, or null (logged once) when this grpc-js does not have it where 1.14 does. */
function defaultConfigSelection(): DefaultConfigSelection | null {
  if (selection !== undefined) return selection;
  try {
    const require = createRequire(import.meta.url);
    const { getDefaultConfigSelector } = require('@grpc/grpc-js/build/src/resolving-load-balancer.js');
    const { validateServiceConfig } = require('@grpc/grpc-js/build/src/service-config.js');
    if (typeof getDefaultConfigSelector !== 'function' || typeof validateServiceConfig !== 'function') {
      throw new Error('getDefaultConfigSelector or validateServiceConfig is missing');
    }
    selection = { getDefaultConfigSelector, validateServiceConfig };
  } catch (e) {
    selection = null;
    experimental.log(
      logVerbosity.ERROR,
      `lbtree: this @grpc/grpc-js does not make its default config selector where 1.14 does (${(e as Error).message}): ` +
        'A96 retry metrics are recorded on xds: channels only',
    );
  }
  return selection;
}

/** A config selector that is `inner` plus A96's tracer, in the pick information and as the call-end filter. */
class RetryMetricsConfigSelector implements experimental.ConfigSelector {
  constructor(
    private readonly inner: experimental.ConfigSelector,
    private readonly tracers: CallRetryTracers<TrackedCall>,
  ) {}

  invoke(methodName: string, metadata: Metadata, channelId: number): CallConfig {
    // grpc-js's default config selector makes a new config, pick information and filter list per call.
    const config = this.inner.invoke(methodName, metadata, channelId);
    const call = this.tracers.forCall(methodName);
    const methodConfig = config.methodConfig;
    call.hedging = methodConfig.retryPolicy === undefined && methodConfig.hedgingPolicy !== undefined;
    (config.pickInformation as Record<symbol, unknown>)[CALL_RETRY_TRACER] = call;
    config.dynamicFilterFactories.push(call);
    return config;
  }

  unref(): void {
    this.inner.unref();
  }
}

/**
 * `listener` with A96's config selector added to each result, when the channel (these options, this target)
 * records an A96 metric and grpc-js's default config selection is at hand; otherwise `listener` itself. The
 * service config is chosen as grpc-js chooses it: the resolver's, else the channel's `grpc.service_config`.
 */
export function withRetryMetrics(
  listener: experimental.ResolverListener,
  target: experimental.GrpcUri,
  options: ChannelOptions,
): experimental.ResolverListener {
  const recorder = channelMetricsRecorder({ ...options, [CHANNEL_TARGET_OPTION]: canonicalTarget(target) });
  if (!recordsCallRetries(recorder)) return listener;
  const grpcSelection = defaultConfigSelection();
  if (grpcSelection === null) return listener;
  const tracers = new CallRetryTracers(recorder, undefined, TrackedCall);
  let channelDefault: GrpcServiceConfig | null | undefined;
  const defaultServiceConfig = (): GrpcServiceConfig | null => {
    if (channelDefault !== undefined) return channelDefault;
    const text = options['grpc.service_config'];
    try {
      channelDefault =
        typeof text === 'string'
          ? grpcSelection.validateServiceConfig(JSON.parse(text))
          : { loadBalancingConfig: [], methodConfig: [] };
    } catch {
      // grpc-js rejected it when the channel was made: no channel reaches here with it.
      channelDefault = null;
    }
    return channelDefault;
  };
  return (endpoints, attributes, serviceConfig, resolutionNote) => {
    // A service config in error: grpc-js 1.14 keeps no previous one, so it rejects the result.
    const working =
      serviceConfig === null ? defaultServiceConfig() : serviceConfig.ok ? serviceConfig.value : null;
    if (working === null || attributes[experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY] !== undefined) {
      return listener(endpoints, attributes, serviceConfig, resolutionNote);
    }
    const selector = new RetryMetricsConfigSelector(grpcSelection.getDefaultConfigSelector(working), tracers);
    return listener(
      endpoints,
      { ...attributes, [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: selector },
      serviceConfig,
      resolutionNote,
    );
  };
}
