// `probetown llm serve`: an OpenAI-compatible endpoint on 127.0.0.1 over the local model, so other
// processes (NATS workers, a second run, any OpenAI client) share one loaded model through the
// ordinary `--llm http://127.0.0.1:<port>/v1` path. Serves GET /v1/models and POST
// /v1/chat/completions (response_format json_object or json_schema; usage counts). One generation
// at a time (the client queues); requests wait their turn.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { ChatError, type ChatMessage } from "../../infra/openaiClient.ts";
import type { LocalChatClient } from "../../infra/localModelClient.ts";

export interface ServeTotals {
  requests: number;
  completions: number;
  promptTokens: number;
  completionTokens: number;
}

export interface LocalServer {
  readonly url: string;
  readonly totals: ServeTotals;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

const send = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

const fail = (res: ServerResponse, status: number, message: string, code: string | null = null, type = "invalid_request_error"): void => send(res, status, { error: { message, type, code } });

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new ChatError("http_error", `the request body is over ${MAX_BODY} bytes`, 413));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

interface CompletionRequest {
  model?: unknown;
  messages?: unknown;
  temperature?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  seed?: unknown;
  response_format?: { type?: unknown; json_schema?: { schema?: unknown } };
}

const isMessage = (m: unknown): m is ChatMessage =>
  typeof m === "object" && m !== null && ["system", "user", "assistant"].includes((m as { role?: unknown }).role as string) && typeof (m as { content?: unknown }).content === "string";

export function serveLocalModel(client: LocalChatClient, options: { readonly model: string; readonly port: number; readonly timeoutMs?: number; readonly log?: (line: string) => void }): Promise<LocalServer> {
  const totals: ServeTotals = { requests: 0, completions: 0, promptTokens: 0, completionTokens: 0 };
  const created = Math.floor(Date.now() / 1000);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/v1/models") return send(res, 200, { object: "list", data: [{ id: options.model, object: "model", created, owned_by: "probetown-local" }] });
    if (path !== "/v1/chat/completions") return fail(res, 404, `no route ${req.method} ${path}: this server has GET /v1/models and POST /v1/chat/completions`, "not_found");
    if (req.method !== "POST") return fail(res, 405, "use POST", "method_not_allowed");
    totals.requests++;
    let body: CompletionRequest;
    try {
      body = JSON.parse(await readBody(req)) as CompletionRequest;
    } catch (error) {
      return fail(res, error instanceof ChatError ? 413 : 400, error instanceof ChatError ? error.message : "the body is not JSON");
    }
    if (typeof body !== "object" || body === null) return fail(res, 400, "the body must be a JSON object");
    if (typeof body.model !== "string" || body.model !== options.model) return fail(res, 404, `The model '${String(body.model)}' does not exist (this server serves '${options.model}')`, "model_not_found");
    if (!Array.isArray(body.messages) || body.messages.length === 0 || !body.messages.every(isMessage)) return fail(res, 400, "'messages' must be a non-empty list of {role: system|user|assistant, content: string}");
    const format = body.response_format?.type;
    let schema: object | undefined;
    if (format === "json_schema") {
      const s = body.response_format?.json_schema?.schema;
      if (typeof s !== "object" || s === null) return fail(res, 400, "response_format json_schema needs json_schema.schema, an object");
      schema = s;
    } else if (format !== undefined && format !== "json_object" && format !== "text") return fail(res, 400, `response_format type '${String(format)}' is not supported (json_object, json_schema, text)`);
    const maxTokens = typeof body.max_completion_tokens === "number" ? body.max_completion_tokens : typeof body.max_tokens === "number" ? body.max_tokens : 256;
    const temperature = typeof body.temperature === "number" ? body.temperature : 0;
    try {
      const result = await client.chat({
        model: body.model,
        messages: body.messages,
        temperature,
        maxTokens: Math.max(1, Math.min(4096, Math.floor(maxTokens))),
        json: format === "json_object" || format === "json_schema",
        timeoutMs: options.timeoutMs ?? 300_000,
        ...(schema === undefined ? {} : { schema }),
        ...(typeof body.seed === "number" && Number.isInteger(body.seed) ? { seed: body.seed } : {}),
      });
      totals.completions++;
      totals.promptTokens += result.usage.promptTokens;
      totals.completionTokens += result.usage.completionTokens;
      options.log?.(`completion: ${result.usage.promptTokens} prompt + ${result.usage.completionTokens} completion tokens (totals: ${totals.completions} completions, ${totals.promptTokens} + ${totals.completionTokens} tokens)`);
      return send(res, 200, {
        id: `chatcmpl-${randomUUID()}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: result.model,
        choices: [{ index: 0, message: { role: "assistant", content: result.content }, finish_reason: result.finishReasons?.[0] ?? "stop" }],
        usage: { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.promptTokens + result.usage.completionTokens },
      });
    } catch (error) {
      const e = error instanceof ChatError ? error : new ChatError("server_error", String(error), null);
      const status = e.kind === "timeout" ? 504 : e.status ?? 500;
      return fail(res, status >= 400 ? status : 500, e.message, e.kind, "server_error");
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) fail(res, 500, String(error), "server_error", "server_error");
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        totals,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
