// lbtree/admin: the live view of every channel lbtree runs (docs/admin.md).

export type { HistogramPointValue, InstrumentValues, MetricPointValue } from '../metrics/index.js';
export { type AdminHandler, type AdminHandlerOptions, createAdminHandler } from './admin-handler.js';
export { type AdminServer, type AdminServerOptions, isLoopback, startAdminServer } from './admin-server.js';
export type {
  ChannelSnapshot,
  ChannelSummary,
  MetricsView,
  PicksView,
  PolicyView,
  SubchannelView,
  XdsResourceView,
  XdsView,
} from './channel-snapshot.js';
