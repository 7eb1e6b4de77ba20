import type { ChannelOptions } from '@grpc/grpc-js';
import { FlightRecorder, type FlightRecorderOptions } from '../recorder/index.js';
import { liveChannels } from './channel-registry.js';

/**
 * The channel option that turns the flight recorder on for one channel: its value is the
 * {@link FlightRecorder} to write to (`new Client(target, creds, { [FLIGHT_RECORDER_OPTION]: recorder })`), or
 * `false` to keep a channel out of `register({ recorder })`'s. It never reaches grpc-js's subchannels.
 */
export const FLIGHT_RECORDER_OPTION = 'lbtree.flight_recorder';

/** The options with recording off (`false`: not even `register({ recorder })`'s). */
export function withoutFlightRecorder(options: ChannelOptions): ChannelOptions {
  return options[FLIGHT_RECORDER_OPTION] === false
    ? options
    : { ...options, [FLIGHT_RECORDER_OPTION]: false };
}

/** `register({ recorder })`: a recorder for every channel (true: the defaults), or none (false). */
export type RecordEveryChannelOption = boolean | FlightRecorderOptions;

let everyChannel: FlightRecorderOptions | null = null;

/** Sets whether channels without their own recorder get one (see `register({ recorder })`). */
export function recordEveryChannel(option: RecordEveryChannelOption | undefined): void {
  if (option === undefined) return;
  everyChannel = option === false ? null : option === true ? {} : option;
}

/** One channel's recording, as `recordedChannels()` lists them. */
export interface ChannelRecordingEntry {
  /** The id of the (first) channel writing to it in `liveChannels`, as a number. */
  readonly id: number;
  readonly label: string;
  readonly recorder: FlightRecorder;
  /** The recording as a file (JSON lines, docs/recording-format.md). */
  export(): string;
}

/**
 * Every recorder a live channel writes to now, oldest first: per-channel ones and `register({ recorder })`'s.
 * Read from `liveChannels`, the one registry: a recorder appears once however many channels write to it (an
 * application may give one recorder to several channels).
 *
 * @deprecated Use `liveChannels.list()`: each channel's entry carries its `recorder` (undefined when it does
 * not record) and `exportRecording()`.
 */
export function recordedChannels(): ChannelRecordingEntry[] {
  const seen = new Map<FlightRecorder, ChannelRecordingEntry>();
  for (const channel of liveChannels.list()) {
    const recorder = channel.recorder;
    if (recorder === undefined || seen.has(recorder)) continue;
    seen.set(recorder, {
      id: Number(channel.id),
      label: recorder.label,
      recorder,
      export: () => recorder.export(),
    });
  }
  return [...seen.values()];
}

/**
 * The recorder a root policy writes to for these channel options: the channel's own, or a new one when
 * every channel records (`owned`: the root made it and gives it up when destroyed), or none.
 */
export function recorderFor(
  options: ChannelOptions,
  current: FlightRecorder | null,
): { recorder: FlightRecorder; owned: boolean } | null {
  const own = options[FLIGHT_RECORDER_OPTION] as unknown;
  if (own instanceof FlightRecorder) return { recorder: own, owned: false };
  if (everyChannel === null || own === false) return null;
  if (current !== null) return { recorder: current, owned: true };
  const label =
    typeof options['grpc.default_authority'] === 'string' ? options['grpc.default_authority'] : '';
  return { recorder: new FlightRecorder({ label, ...everyChannel }), owned: true };
}
