import {
  type ControlPlane,
  type ControlPlaneEvent,
  type ResourceInput,
  shortTypeName,
} from '../../control-plane/index.js';

interface VersionEntry {
  readonly version: string;
  readonly change: string;
  /** Per resource type sent with this version: `sent`, `ACK` or `NACK`. */
  readonly answers: Map<string, string>;
  /** The reason of the NACK, when the client NACKed a type of this version. */
  nackReason?: string;
}

/**
 * What a control plane pushed to one client (each version with the change it made) and what the client
 * answered per resource type: the demo's view of the xDS conversation.
 */
export class ControlPlaneLog {
  private readonly versions = new Map<string, VersionEntry>();
  private readonly stop: () => void;

  constructor(
    private readonly plane: ControlPlane,
    private readonly nodeId: string,
    /** Called with a line for every NACK as it arrives. */
    private readonly onNack: (line: string) => void = () => {},
  ) {
    this.stop = plane.onEvent((event) => this.record(event));
  }

  /**
   * Pushes `list` as the next version, described as `change`; once the client is connected, resolves when
   * it has answered (ACK or NACK) every type it subscribes to, or after `timeoutMs`. Returns the version.
   */
  async push(change: string, list: readonly ResourceInput[], timeoutMs = 10_000): Promise<string> {
    const version = String(Number(this.plane.version) + 1);
    this.versions.set(version, { version, change, answers: new Map() });
    this.plane.setResources(list);
    const deadline = Date.now() + timeoutMs;
    while (this.connected() && !this.answered(version) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    return version;
  }

  private connected(): boolean {
    return this.plane.clients().some((c) => c.nodeId === this.nodeId);
  }

  /** Whether the client answered `version` for every type it subscribes to. */
  private answered(version: string): boolean {
    const answers = this.versions.get(version)?.answers;
    const types = this.plane
      .clients()
      .filter((c) => c.nodeId === this.nodeId)
      .flatMap((c) => c.subscriptions.map((t) => shortTypeName(t.typeUrl)));
    return answers !== undefined && types.every((t) => answers.get(t) === 'ACK' || answers.get(t) === 'NACK');
  }

  /** `v2 locality weights 3 : 1 — Cluster ACK · ClusterLoadAssignment ACK`, oldest first. */
  lines(): string[] {
    return [...this.versions.values()].map((v) => {
      const answers = [...v.answers]
        .map(([type, answer]) => `${type} ${answer}${answer === 'NACK' ? ` (${v.nackReason})` : ''}`)
        .join(' · ');
      return `v${v.version} ${v.change} — ${answers || 'not sent yet'}`;
    });
  }

  nackReason(version: string): string | undefined {
    return this.versions.get(version)?.nackReason;
  }

  /** Whether the client ACKed every type sent with `version` (and something was sent). */
  acked(version: string): boolean {
    const answers = [...(this.versions.get(version)?.answers.values() ?? [])];
    return answers.length > 0 && answers.every((a) => a === 'ACK');
  }

  close(): void {
    this.stop();
  }

  private record(event: ControlPlaneEvent): void {
    const exchange =
      event.kind === 'sent'
        ? event
        : event.kind === 'ack'
          ? event.ack
          : event.kind === 'nack'
            ? event.nack
            : null;
    if (!exchange || exchange.nodeId !== this.nodeId) return;
    const entry = this.versions.get(exchange.version);
    if (!entry) return;
    const type = shortTypeName(exchange.typeUrl);
    if (event.kind === 'sent') {
      if (!entry.answers.has(type)) entry.answers.set(type, 'sent');
    } else if (event.kind === 'ack') entry.answers.set(type, 'ACK');
    else if (event.kind === 'nack') {
      entry.answers.set(type, 'NACK');
      entry.nackReason = event.nack.reason;
      this.onNack(`v${entry.version} ${type} NACKed: ${event.nack.reason}`);
    }
  }
}
