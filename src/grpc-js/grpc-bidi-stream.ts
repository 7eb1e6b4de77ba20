// One bidirectional gRPC call that an xDS stream (ADS or LRS) runs on: responses go to the handlers until the
// call ends, its end is reported once, and close() cancels it.
import type { ClientDuplexStream, ServiceError, StatusObject } from '@grpc/grpc-js';
import type { Status } from '../core/index.js';

export interface BidiStreamHandlers<Response> {
  onResponse(response: Response): void;
  onClose(status: Status): void;
}

export class GrpcBidiStream<Request, Response> {
  protected ended = false;

  constructor(
    private readonly call: ClientDuplexStream<Request, Response>,
    private readonly streamHandlers: BidiStreamHandlers<Response>,
  ) {
    call.on('data', (response: Response) => {
      if (!this.ended) streamHandlers.onResponse(response);
    });
    call.on('status', (status: StatusObject) => this.end(status));
    // The status event carries the outcome; an 'error' listener keeps the stream from throwing it.
    call.on('error', (error: ServiceError) => this.end(error));
  }

  send(request: Request): void {
    if (!this.ended) this.call.write(request);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.call.cancel();
  }

  private end(status: { code: number; details: string }): void {
    if (this.ended) return;
    this.ended = true;
    this.streamHandlers.onClose({ code: status.code, details: status.details });
  }
}
