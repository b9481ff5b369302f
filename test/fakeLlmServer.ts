// A fake OpenAI-compatible server (node:http on 127.0.0.1, random port) for tests that go through
// the real `openai` client: `reply` decides each answer (status, content, delay, headers); every
// request body is kept and counted.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string };
}

/** `usage` replaces the completion's usage object; `body` (with `contentType`) replaces the whole body, as sent (a non-200's too: a proxy's page); `error` the error object of a non-200. */
export type Reply = { status?: number; content?: string; delayMs?: number; headers?: Record<string, string>; usage?: unknown; body?: string; contentType?: string; error?: unknown };

/** A fake OpenAI-compatible server: `reply` decides each answer; every request is counted. */
export async function fakeServer(reply: (body: ChatBody, n: number) => Reply) {
  const bodies: ChatBody[] = [];
  const authorization: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const body = JSON.parse(raw) as ChatBody;
      bodies.push(body);
      authorization.push(String(req.headers.authorization ?? ""));
      const r = reply(body, bodies.length);
      const send = () => {
        if (res.destroyed) return;
        if ((r.status ?? 200) !== 200 && r.body !== undefined) {
          res.writeHead(r.status!, { "content-type": r.contentType ?? "text/plain", ...r.headers });
          res.end(r.body);
          return;
        }
        if ((r.status ?? 200) !== 200) {
          res.writeHead(r.status!, { "content-type": "application/json", ...r.headers });
          res.end(JSON.stringify({ error: r.error ?? { message: `fake error ${r.status}`, type: "fake" } }));
          return;
        }
        if (r.body !== undefined) {
          res.writeHead(200, { "content-type": r.contentType ?? "application/json" });
          res.end(r.body);
          return;
        }
        const content = r.content ?? "";
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id: `chatcmpl-${bodies.length}`, object: "chat.completion", created: 0, model: `${body.model}-served`,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: "usage" in r ? r.usage : { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }));
      };
      if (r.delayMs !== undefined) setTimeout(send, r.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    bodies,
    authorization,
    get requests() {
      return bodies.length;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

