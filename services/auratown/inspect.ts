// `inspect` of an AURATown episode, written tick by tick as the replay makes each tick: a tick's
// row (every agent's place, action, private state and beliefs) is drawn, or folded into the
// summary, and dropped. Holding every row to draw them at the end took 2.6 GB for `inspect --json`
// of a 1,000-agent town over three days (1.7 GB for `--all`); the output is the same bytes.
import type { LogRecord } from "../../events/record.ts";
import type { ActorHost } from "../distributed/actorHost.ts";
import type { EpisodeHeader } from "../kernel/replay.ts";
import type { InspectFlags, WorldInspection } from "../kernel/worldModule.ts";
import { agentNames, collectRow, DETAILED_TOWN_ACTORS, rowOf, TownSummary, TownTimeline, type TimelineFilter } from "./views.ts";
import { chunkedWriter, namesActor, prettyJsonPieces } from "../views/text.ts";

/**
 * `write` gets the output in chunks of about 1 MB; `beforeOutput` is called once, before the first
 * (a progress bar on the same terminal stops there). Nothing is written before a tick within
 * --from/--to, so a range the log does not hold, refused after the replay, leaves no output.
 */
export function townInspection(flags: InspectFlags, write: (chunk: string) => void, beforeOutput: () => void = () => {}): WorldInspection {
  const filter: TimelineFilter = { ...(flags.from === undefined ? {} : { from: flags.from }), ...(flags.to === undefined ? {} : { to: flags.to }), ...(flags.agent === undefined ? {} : { agent: flags.agent }) };
  const json = flags.json === true;
  const summary = json ? new TownSummary() : null;
  let header: EpisodeHeader | null = null;
  let timeline: TownTimeline | null = null;
  let digest = false;
  let agents = 0;
  // --agent with --json: the agents it names (the first row shown says which).
  let names: Set<string> | null = null;
  // An --agent no actor answers to is refused after the replay, as before: nothing is written for it.
  let refused = false;
  let begun = false;
  let ticksShown = 0;
  let replayed = 0;

  const { push, flush } = chunkedWriter(write);
  const pushAll = (pieces: Iterable<string>): void => {
    for (const piece of pieces) push(piece);
  };

  const begin = (): void => {
    if (begun) return;
    begun = true;
    beforeOutput();
    const h = header!;
    if (json) push(`{\n  "episode": ${JSON.stringify(h.episode)},\n  "ticks": `);
    else {
      push(`${h.episode} · ${h.world.name} · seed ${h.seed} · condition ${h.condition}\n`);
      if (digest) push(`(${agents} agents: each tick is summarised for towns of more than ${DETAILED_TOWN_ACTORS} actors; --agent <id or name> shows one agent's events, state and beliefs, --all every agent's)\n`);
    }
  };

  const onHeader = (h: EpisodeHeader, host: ActorHost): void => {
    header = h;
    const agent = flags.agent;
    refused = agent !== undefined && !host.ids.some((id) => namesActor(id, agent));
    // A large town's ticks are summarised unless one agent (--agent) or every one (--all) is asked for.
    digest = agent === undefined && flags.all !== true && host.ids.length > DETAILED_TOWN_ACTORS;
    agents = host.ids.filter((id) => id.startsWith("agent/")).length;
    timeline = new TownTimeline(filter, { digest });
  };

  const onTick = (tick: number, host: ActorHost, records: readonly LogRecord[]): void => {
    if (timeline === null || refused) return;
    const shown = timeline.shows(tick);
    // The JSON's summary covers every tick; the text timeline needs only those it shows.
    if (!shown && summary === null) return;
    // Read and dropped before the next tick: the beliefs need no copy.
    const row = collectRow(tick, host, false);
    replayed += records.length;
    summary?.add(row, records);
    if (!shown) return;
    begin();
    if (json) {
      const wanted = flags.agent;
      if (wanted !== undefined) names ??= agentNames(row, wanted);
      push(ticksShown === 0 ? "[\n    " : ",\n    ");
      pushAll(prettyJsonPieces(names === null ? row : rowOf(row, names), 2, 2));
    } else {
      if (ticksShown > 0) push("\n");
      push(timeline.tick(row, records)!);
    }
    ticksShown++;
  };

  return {
    flush,
    options: { onHeader, onTick },
    active: () => timeline !== null,
    finish(result) {
      begin();
      if (summary !== null) {
        // Records no tick replayed: an interrupted run's last, part-written tick.
        summary.addRecords(result.records.slice(1 + replayed));
        push(ticksShown === 0 ? "[]" : "\n  ]");
        push(",\n  \"summary\": ");
        // With --agent, the ticks and the summary are that agent's (the summary covers the whole episode).
        pushAll(prettyJsonPieces(summary.finish(result.records[0], flags.agent === undefined ? undefined : (names ?? new Set())), 1, 2));
        push("\n}\n");
      } else push("\n");
      flush();
    },
  };
}
