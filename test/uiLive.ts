// Reading the dashboard's live stream (server-sent events) in tests: each event as it arrives, and
// a wait for the next one of a kind that fails with what it saw instead of hanging.
export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
  /** performance.now() when the event was parsed. */
  readonly at: number;
}

export interface SseStream {
  readonly status: number;
  readonly events: readonly SseEvent[];
  /** The next event of `kind` after the first `skip` of that kind (the already seen), or a failure after `ms`. */
  next(kind: string, skip?: number, ms?: number): Promise<SseEvent>;
  /** Whether the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string): Promise<SseStream> {
  const stop = new AbortController();
  const response = await fetch(url, { signal: stop.signal, headers: { accept: "text/event-stream" } });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let done = false;
  const notify = () => {
    for (const w of waiters) w();
  };
  const ended = (async () => {
    if (response.body === null) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
          }
          events.push({ event, data: data === "" ? null : JSON.parse(data), at: performance.now() });
          notify();
        }
      }
    } catch {
      // Closed by the test.
    } finally {
      done = true;
      notify();
    }
  })();
  return {
    status: response.status,
    events,
    ended,
    close: () => stop.abort(),
    next: (kind, skip = 0, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const look = (): boolean => {
          const found = events.filter((e) => e.event === kind)[skip];
          if (found !== undefined) {
            waiters.delete(look);
            clearTimeout(timer);
            resolve(found);
            return true;
          }
          if (done) {
            waiters.delete(look);
            clearTimeout(timer);
            reject(new Error(`the stream ended without a '${kind}' event; it sent ${JSON.stringify(events.map((e) => e.event))}`));
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`no '${kind}' event within ${ms} ms; the stream sent ${JSON.stringify(events.map((e) => e.event))}`));
        }, ms);
        if (!look()) waiters.add(look);
      }),
  };
}
