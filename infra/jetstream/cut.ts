// Moving a damaged tail to the cut subject (DESIGN §7): resuming cuts a log from its first damaged
// message on (a message is kept whole or cut whole); the cut messages are republished verbatim to
// pt.<ns>.cut.<episode>, then deleted from the log subject (nothing is thrown away).
import { headers } from "@nats-io/transport-node";
import { subjects } from "../nats.ts";
import { managerOf, type Context } from "./streams.ts";

export interface RawMessage {
  readonly streamSeq: number;
  readonly data: Uint8Array;
}

export async function cutMessages(ctx: Context, episode: string, messages: readonly RawMessage[]): Promise<number> {
  if (messages.length === 0) return 0;
  const cutSubject = subjects.cut(ctx.namespace, episode);
  const logSubject = subjects.log(ctx.namespace, episode);
  // Republished verbatim (never with the original Nats-Msg-Id: that would be swallowed as a duplicate).
  await Promise.all(
    messages.map((m) => {
      const h = headers();
      h.set("Pt-Cut-From", `${ctx.stream}/${logSubject}`);
      h.set("Pt-Cut-Stream-Seq", String(m.streamSeq));
      return ctx.js.publish(cutSubject, m.data, { msgID: `cut:${episode}:${m.streamSeq}`, headers: h });
    }),
  );
  const jsm = await managerOf(ctx);
  await Promise.all(messages.map((m) => jsm.streams.deleteMessage(ctx.stream, m.streamSeq, false)));
  return messages.reduce((n, m) => n + m.data.length, 0);
}
