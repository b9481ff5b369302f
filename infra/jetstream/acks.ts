// Publishing with acks collected on one subscription per connection and namespace: what
// nc.request does, without its per-request mux entry and the Error it constructs (with a stack)
// each time a request completes.
import { JetStreamApiError, type ApiError, type PubAck } from "@nats-io/jetstream";
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Context } from "./streams.ts";

export type Attempt = { readonly ack: PubAck; readonly error: null } | { readonly ack: null; readonly error: unknown };

export class AckInbox {
  private readonly nc: NatsConnection;
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly waiting = new Map<number, { readonly resolve: (a: Attempt) => void; readonly timer: NodeJS.Timeout; readonly subject: string }>();
  private next = 0;

  constructor(nc: NatsConnection) {
    this.nc = nc;
    this.prefix = createInbox();
    this.sub = nc.subscribe(`${this.prefix}.*`, { callback: (error, m) => { if (error === null) this.acked(m); } });
  }

  /** Publishes one message and resolves with its ack, or the error (a timeout after `timeoutMs`). */
  publish(subject: string, body: string, h: MsgHdrs, timeoutMs: number): Promise<Attempt> {
    const token = ++this.next;
    return new Promise<Attempt>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        resolve({ ack: null, error: new Error(`no ack within ${timeoutMs} ms`) });
      }, timeoutMs);
      this.waiting.set(token, { resolve, timer, subject });
      try {
        this.nc.publish(subject, body, { reply: `${this.prefix}.${token}`, headers: h });
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(token);
        resolve({ ack: null, error });
      }
    });
  }

  private acked(m: Msg): void {
    const token = Number(m.subject.slice(this.prefix.length + 1));
    const entry = this.waiting.get(token);
    if (entry === undefined) return; // timed out meanwhile
    this.waiting.delete(token);
    clearTimeout(entry.timer);
    if (m.data.length === 0) {
      entry.resolve({ ack: null, error: new Error(`no JetStream stream answered for ${entry.subject} (${m.headers?.code ?? "?"} ${m.headers?.description ?? "no responders"})`) });
      return;
    }
    try {
      const reply = m.json<PubAck & { error?: ApiError }>();
      entry.resolve(reply.error !== undefined ? { ack: null, error: new JetStreamApiError(reply.error) } : { ack: reply, error: null });
    } catch (error) {
      entry.resolve({ ack: null, error });
    }
  }

  get closed(): boolean {
    return this.sub.isClosed();
  }
}

export function acksOf(ctx: Context): AckInbox {
  if (ctx.acks === null || ctx.acks.closed) ctx.acks = new AckInbox(ctx.nc);
  return ctx.acks;
}
