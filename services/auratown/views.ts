// Human views of an AURATown episode: the end-of-run summary and the `inspect` timeline. Both are
// built from the log's records plus each tick's actor state (live during a run, replayed after).
import type { AgentContext } from "../../actors/auratown/agent.ts";
import type { Belief } from "../../actors/auratown/beliefs.ts";
import type { PrivateState } from "../../actors/auratown/privateState.ts";
import { clockAt, hhmm, type Clock, type ClockConfig } from "../../actors/auratown/town.ts";
import type { LogRecord } from "../../events/record.ts";
import type { ActorHost } from "../distributed/actorHost.ts";
import { namesActor, plural } from "../views/text.ts";

export interface AgentRow {
  readonly id: string;
  readonly name: string;
  readonly location: string | null;
  readonly action: string;
  readonly private: PrivateState;
  readonly beliefs: Readonly<Record<string, Belief>>;
}

export interface TickRow {
  readonly tick: number;
  readonly clock: Clock;
  readonly agents: readonly AgentRow[];
}

/**
 * Reads every agent's state after a tick (the host is the live or replayed one). The beliefs are
 * copied (the actors update them in place) unless `copy` is false: a row read and dropped before
 * the next tick (`inspect` of a large town) need not pay for 60,000 beliefs a tick.
 */
export function collectRow(tick: number, host: ActorHost, copy = true): TickRow {
  const agents: AgentRow[] = [];
  let clock: Clock = { day: 1, hour: 0, minute: 0 };
  for (const id of host.ids) {
    if (!id.startsWith("agent/")) continue;
    const c = host.contextOf(id) as AgentContext;
    if (c.clock !== null) clock = c.clock;
    agents.push({ id, name: c.profile.name, location: c.location, action: c.action, private: c.private, beliefs: copy ? { ...c.beliefs } : c.beliefs });
  }
  return { tick, clock, agents };
}

/** "08:00" on day 1, "d2 08:00" later (multi-day runs). */
const clockText = (clock: Clock): string => (clock.day === 1 ? hhmm(clock) : `d${clock.day} ${hhmm(clock)}`);

/** The clock of a tick: from its row, else (a fork's parent's ticks) from the town's clock config in the log's header. */
const when = (rows: ReadonlyMap<number, TickRow>, tick: number, clock: ClockConfig | undefined): string => {
  const row = rows.get(tick);
  if (row !== undefined) return clockText(row.clock);
  return clock === undefined ? `t${tick}` : clockText(clockAt(tick, clock));
};

interface StaleRun {
  readonly observer: string;
  readonly target: string;
  readonly from: number;
  readonly to: number;
  readonly belief: Belief;
  /** What the target was, as of `to`. */
  readonly truth: string;
}

/** A run being followed: extended in place while the belief stays and stays wrong. */
interface OpenRun {
  readonly observer: string;
  readonly target: string;
  readonly from: number;
  to: number;
  readonly belief: Belief;
  location: string;
  private: PrivateState;
}

/**
 * Runs of consecutive ticks in which a belief differed from its target's true state, followed one
 * tick at a time: `inspect --json` of a large town keeps no tick's rows, only the runs (350,000
 * in a 1,000-agent town's three days, 60,000 open at a time).
 */
export class StaleRunTracker {
  private readonly open = new Map<string, OpenRun>();
  private readonly done: OpenRun[] = [];

  add(row: TickRow): void {
    const { open, done } = this;
    const truth = new Map(row.agents.map((a) => [a.id, a]));
    for (const a of row.agents) {
      for (const [target, belief] of Object.entries(a.beliefs)) {
        const t = truth.get(target);
        if (t === undefined) continue;
        const location = t.location ?? "on the road";
        if (belief.location === location && belief.availability === t.private.availability && belief.emotional_state === t.private.emotional_state) continue;
        const key = `${a.id}→${target}`;
        const current = open.get(key);
        if (current === undefined || current.belief !== belief) {
          if (current !== undefined) done.push(current);
          // Set on a key already there keeps its place in the map (the order ties are listed in).
          open.set(key, { observer: a.name, target: t.name, from: row.tick, to: row.tick, belief, location, private: t.private });
        } else {
          current.to = row.tick;
          current.location = location;
          current.private = t.private;
        }
      }
    }
    // A run not extended by this tick ended with the one before.
    for (const [key, run] of open) {
      if (run.to !== row.tick) {
        done.push(run);
        open.delete(key);
      }
    }
  }

  /** Every run, the longest first (the runs still open end at the last tick added). */
  finish(): StaleRun[] {
    // One push per run: a large town has more open runs than a spread's arguments may number.
    for (const run of this.open.values()) this.done.push(run);
    this.open.clear();
    return this.done
      .sort((x, y) => y.to - y.from - (x.to - x.from) || x.from - y.from)
      .map((r) => ({
        observer: r.observer,
        target: r.target,
        from: r.from,
        to: r.to,
        belief: r.belief,
        get truth() {
          return `${r.location}, ${r.private.availability}, ${r.private.emotional_state}`;
        },
      }));
  }
}

export function staleRuns(rows: readonly TickRow[]): StaleRun[] {
  const tracker = new StaleRunTracker();
  for (const row of rows) tracker.add(row);
  return tracker.finish();
}

export interface Summary {
  readonly itineraries: Record<string, { at: string; place: string }[]>;
  readonly ruleTicks: Record<string, number>;
  readonly rulesByAgent: Record<string, Record<string, number>>;
  readonly conversations: { at: string; a: string; b: string; location: string; opening: string }[];
  readonly incidents: { at: string; description: string; stressful: boolean }[];
  readonly reflections: number;
  readonly staleBeliefs: { observer: string; target: string; from: string; to: string; ticks: number; believed: string; actually: string }[];
  readonly staleBeliefTicks: number;
}

/** Whether an agent is the one `--agent` names: its id (`lin-wei`, `agent/lin-wei`) or its name. */
export const isAgent = (agent: { readonly id: string; readonly name: string }, wanted: string): boolean =>
  namesActor(agent.id, wanted) || agent.name.toLowerCase() === wanted.trim().toLowerCase();

/** The names of the agents `--agent` names in a tick's row (every row has every agent). */
export const agentNames = (row: TickRow, wanted: string): Set<string> => new Set(row.agents.filter((a) => isAgent(a, wanted)).map((a) => a.name));

/** A tick's row with only the named agents (`inspect --agent … --json`). */
export const rowOf = (row: TickRow, names: ReadonlySet<string>): TickRow => ({ ...row, agents: row.agents.filter((a) => names.has(a.name)) });

/**
 * The summary built one tick at a time: `add` each tick's row (and its records), `addRecords` the
 * records no row covers (a fork's header, an interrupted run's last tick), in log order. It keeps
 * no row: `inspect --json` of a 1,000-agent town over three days held 2.6 GB of rows for it.
 */
export class TownSummary {
  private readonly clocks = new Map<number, Clock>();
  private readonly itineraries: Summary["itineraries"] = {};
  private readonly ruleTicks: Record<string, number> = {};
  private readonly rulesByAgent: Record<string, Record<string, number>> = {};
  private readonly conversations: { tick: number; a: string; b: string; location: string; opening: string }[] = [];
  private readonly incidents: { tick: number; description: string; stressful: boolean }[] = [];
  private reflections = 0;
  private readonly stale = new StaleRunTracker();

  add(row: TickRow, records: readonly LogRecord[] = []): void {
    this.clocks.set(row.tick, row.clock);
    for (const a of row.agents) {
      const trail = (this.itineraries[a.name] ??= []);
      const place = a.location ?? "on the road";
      if (place !== "on the road" && trail.at(-1)?.place !== place) trail.push({ at: clockText(row.clock), place });
      this.ruleTicks[a.private.rule] = (this.ruleTicks[a.private.rule] ?? 0) + 1;
      const mine = (this.rulesByAgent[a.name] ??= {});
      mine[a.private.rule] = (mine[a.private.rule] ?? 0) + 1;
    }
    this.stale.add(row);
    this.addRecords(records);
  }

  addRecords(records: readonly LogRecord[]): void {
    for (const r of records) {
      if (r.type === "conversation.held") {
        const p = r.payload as { names: [string, string]; location: string; lines: { text: string }[] };
        this.conversations.push({ tick: r.tick, a: p.names[0], b: p.names[1], location: p.location, opening: p.lines[0]?.text ?? "" });
      } else if (r.type === "world.incident") this.incidents.push({ tick: r.tick, description: (r.payload as { description: string }).description, stressful: (r.payload as { stressful: boolean }).stressful });
      else if (r.type === "agent.reflected") this.reflections++;
    }
  }

  /**
   * The summary, its stale beliefs made one at a time as they are read (`names`: only what concerns
   * those agents, for `--agent`). `header` is the log's first record: the clock of ticks no row
   * covers (a fork's parent's) comes from its config. Call once.
   */
  finish(header: LogRecord | undefined, names?: ReadonlySet<string>): LazySummary {
    const clock = (header?.payload as { config?: { clock?: ClockConfig } } | undefined)?.config?.clock;
    const at = (tick: number): string => {
      const c = this.clocks.get(tick);
      return c !== undefined ? clockText(c) : clock === undefined ? `t${tick}` : clockText(clockAt(tick, clock));
    };
    const mine = names === undefined ? () => true : (name: string) => names.has(name);
    const keep = <T>(record: Record<string, T>): Record<string, T> => (names === undefined ? record : Object.fromEntries(Object.entries(record).filter(([name]) => mine(name))));
    const rulesByAgent = keep(this.rulesByAgent);
    let ruleTicks = this.ruleTicks;
    if (names !== undefined) {
      ruleTicks = {};
      for (const rules of Object.values(rulesByAgent)) for (const [rule, n] of Object.entries(rules)) ruleTicks[rule] = (ruleTicks[rule] ?? 0) + n;
    }
    const runs = this.stale.finish().filter((s) => mine(s.observer) || mine(s.target));
    return {
      itineraries: keep(this.itineraries),
      ruleTicks,
      rulesByAgent,
      conversations: this.conversations.filter((c) => mine(c.a) || mine(c.b)).map(({ tick, ...c }) => ({ at: at(tick), ...c })),
      incidents: this.incidents.map(({ tick, ...i }) => ({ at: at(tick), ...i })),
      reflections: this.reflections,
      staleBeliefs: {
        length: runs.length,
        *[Symbol.iterator]() {
          for (const s of runs) {
            yield {
              observer: s.observer,
              target: s.target,
              from: at(s.from),
              to: at(s.to),
              ticks: s.to - s.from + 1,
              believed: `${s.belief.location}, ${s.belief.availability}, ${s.belief.emotional_state} (held since ${at(s.belief.since)})`,
              actually: s.truth,
            };
          }
        },
      },
      staleBeliefTicks: runs.reduce((n, s) => n + s.to - s.from + 1, 0),
    };
  }
}

type StaleBelief = Summary["staleBeliefs"][number];

/** A summary whose stale beliefs (a large town has hundreds of thousands) are made as they are read. */
export type LazySummary = Omit<Summary, "staleBeliefs"> & { readonly staleBeliefs: Iterable<StaleBelief> & { readonly length: number } };

export function summarize(records: readonly LogRecord[], rows: readonly TickRow[]): Summary {
  const summary = new TownSummary();
  for (const row of rows) summary.add(row);
  summary.addRecords(records);
  const lazy = summary.finish(records[0]);
  return { ...lazy, staleBeliefs: [...lazy.staleBeliefs] };
}

const RULES = ["sleep", "workplace_loaded", "deep_focus", "workplace_empty", "relaxed", "recent_stress", "default"];

export function renderSummary(s: Summary, top = 8, maxAgents = 10): string {
  const out: string[] = [];
  const more = (n: number) => (n > maxAgents ? [`  … and ${n - maxAgents} more (see \`inspect --agent <id>\`)`] : []);
  out.push("Where everyone went");
  const trails = Object.entries(s.itineraries);
  for (const [name, trail] of trails.slice(0, maxAgents)) {
    out.push(`  ${name.padEnd(10)} ${trail.map((t) => `${t.at} ${t.place}`).join(" → ")}`);
  }
  out.push(...more(trails.length));
  out.push("", "Private-state rules (agent-ticks under each rule)");
  out.push(`  ${RULES.map((r) => `${r} ${s.ruleTicks[r] ?? 0}`).join(" · ")}`);
  const never = RULES.filter((r) => (s.ruleTicks[r] ?? 0) === 0);
  if (never.length > 0) out.push(`  never fired: ${never.join(", ")}`);
  const byAgent = Object.entries(s.rulesByAgent);
  for (const [name, rules] of byAgent.slice(0, maxAgents)) {
    out.push(`  ${name.padEnd(10)} ${RULES.filter((r) => rules[r]).map((r) => `${r}×${rules[r]}`).join(", ")}`);
  }
  out.push(...more(byAgent.length));
  out.push("", `Conversations (${s.conversations.length}${s.conversations.length > 4 * maxAgents ? `, first ${4 * maxAgents} shown` : ""})`);
  for (const c of s.conversations.slice(0, 4 * maxAgents)) out.push(`  ${c.at} ${c.a} & ${c.b} at ${c.location}: "${c.opening}"`);
  if (s.incidents.length > 0) {
    out.push("", `Town incidents (${s.incidents.length})`);
    for (const i of s.incidents) out.push(`  ${i.at} ${i.description}${i.stressful ? "  [stressful]" : ""}`);
  }
  out.push("", `Stale beliefs: ${s.staleBeliefs.length} runs, ${s.staleBeliefTicks} belief-ticks where a belief differed from the truth${s.staleBeliefs.length > top ? `; the ${top} longest:` : ""}`);
  for (const b of s.staleBeliefs.slice(0, top)) {
    out.push(`  ${b.observer} about ${b.target}, ${b.from}–${b.to} (${plural(b.ticks, "tick", "ticks")}): believed ${b.believed}; actually ${b.actually}`);
  }
  out.push("", `Reflections: ${s.reflections}`);
  return out.join("\n");
}

/** A summary from records alone, for towns too large to keep every agent's state per tick. */
export function renderRecordSummary(records: readonly LogRecord[], actors: number): string {
  const count = (type: string) => records.filter((r) => r.type === type).length;
  const changes: Record<string, number> = {};
  for (const r of records) if (r.type === "private_state.changed") {
    const rule = (r.payload as { rule: string }).rule;
    changes[rule] = (changes[rule] ?? 0) + 1;
  }
  return [
    `Town of ${actors - 1} agents: ${count("conversation.held")} conversations, ${count("world.incident")} incidents, ${count("agent.reflected")} reflections, ${count("agent.decided")} decisions`,
    `Private-state changes by the rule that fired: ${RULES.map((rule) => `${rule} ${changes[rule] ?? 0}`).join(" · ")}`,
    "(Itineraries and stale beliefs are summarised for towns of up to 64 actors; see `inspect --agent <id>`.)",
  ].join("\n");
}

/** The `inspect` timeline: each tick's events, then every agent's place, action, private state and beliefs. */
export function renderTimeline(records: readonly LogRecord[], rows: readonly TickRow[], filter: TimelineFilter = {}): string {
  return [...timelinePieces(records, rows, filter)].join("\n");
}

/** Towns larger than this (in actors, the town itself included) get a digest per tick from `inspect`, as `run` summarises them. */
export const DETAILED_TOWN_ACTORS = 64;

/**
 * The `inspect` timeline one tick at a time (each piece a tick's lines; join them with newlines).
 * With `digest` (a large town, no --agent) a tick is summarised: its incidents, how many agents
 * decided, arrived, talked, changed private state (by rule) and reflected, the busiest places, and
 * how many beliefs were stale. A 1,000-agent town's full timeline is 75 MB a day.
 */
export function* timelinePieces(records: readonly LogRecord[], rows: readonly TickRow[], filter: TimelineFilter = {}, options: { readonly digest?: boolean } = {}): Generator<string> {
  const byTick = new Map<number, LogRecord[]>();
  for (const r of records) {
    let list = byTick.get(r.tick);
    if (list === undefined) byTick.set(r.tick, (list = []));
    list.push(r);
  }
  const timeline = new TownTimeline(filter, options);
  for (const row of rows) {
    const piece = timeline.tick(row, byTick.get(row.tick) ?? []);
    if (piece !== null) yield piece;
  }
}

export interface TimelineFilter {
  readonly from?: number;
  readonly to?: number;
  readonly agent?: string;
}

/** The timeline's text of each tick as the tick comes (`inspect` draws a replay's ticks as they are replayed, keeping none). */
export class TownTimeline {
  private readonly filter: TimelineFilter;
  private readonly digest: boolean;
  private names: Map<string, string> | null = null;

  constructor(filter: TimelineFilter = {}, options: { readonly digest?: boolean } = {}) {
    this.filter = filter;
    this.digest = options.digest === true && filter.agent === undefined;
  }

  /** Whether the timeline shows this tick (within --from and --to). */
  shows(tick: number): boolean {
    return (this.filter.from === undefined || tick >= this.filter.from) && (this.filter.to === undefined || tick <= this.filter.to);
  }

  /** A tick's lines from its row and its records, or null for a tick outside --from/--to. */
  tick(row: TickRow, records: readonly LogRecord[]): string | null {
    if (!this.shows(row.tick)) return null;
    const { filter } = this;
    // Every row holds every agent, and a name never changes: the first row names them all.
    const names = (this.names ??= new Map(row.agents.map((a) => [a.id, a.name])));
    const nameOf = (id: string) => names.get(id) ?? id;
    const wanted = (id: string) => filter.agent === undefined || isAgent({ id, name: nameOf(id) }, filter.agent);
    const out: string[] = [`── tick ${row.tick} · Day ${row.clock.day} ${hhmm(row.clock)} ${"─".repeat(40)}`];
    if (this.digest) {
      out.push(...tickDigest(records.filter((r) => r.tick === row.tick), row));
      return out.join("\n");
    }
    for (const r of records) {
      if (r.tick !== row.tick) continue;
      const p = r.payload as Record<string, any>;
      switch (r.type) {
        case "world.incident":
          out.push(`  [${r.seq}] incident: ${p.description}`);
          break;
        case "agent.decided":
          if (wanted(r.from)) out.push(`  [${r.seq}] ${nameOf(r.from)} decides to ${p.action} (→ ${p.destination})`);
          break;
        case "location.occupancy":
          for (const o of p.occupants as { agent: string; arrived: boolean }[]) if (o.arrived && wanted(o.agent)) out.push(`  [${r.seq}] ${nameOf(o.agent)} arrives at ${p.location}`);
          break;
        case "conversation.held":
          if (wanted(p.participants[0]) || wanted(p.participants[1])) {
            out.push(`  [${r.seq}] ${p.names[0]} and ${p.names[1]} talk at ${p.location}:`);
            for (const line of p.lines as { speaker: string; text: string }[]) out.push(`        ${nameOf(line.speaker)}: ${line.text}`);
          }
          break;
        case "private_state.changed":
          if (wanted(r.from)) out.push(`  [${r.seq}] ${nameOf(r.from)} private state → ${p.availability}, ${p.emotional_state}${p.unspoken_goal ? `, goal "${p.unspoken_goal}"` : ""} (rule ${p.rule})`);
          break;
        case "agent.reflected":
          if (wanted(r.from)) out.push(`  [${r.seq}] ${nameOf(r.from)} reflects: ${(p.insights as string[]).join(" / ")}`);
          break;
      }
    }
    const truth = new Map(row.agents.map((a) => [a.id, a]));
    for (const a of row.agents) {
      if (!wanted(a.id)) continue;
      out.push(`    ${a.name.padEnd(10)} @ ${(a.location ?? "on the road").padEnd(22)} ${a.action.padEnd(38)} ${a.private.availability}/${a.private.emotional_state} [${a.private.rule}]`);
      const beliefs = Object.entries(a.beliefs).map(([id, b]) => {
        const t = truth.get(id);
        const stale = t !== undefined && isStale(b, t);
        return `${nameOf(id)}: ${b.location}/${b.availability}/${b.emotional_state}${stale ? " (STALE)" : ""}`;
      });
      if (beliefs.length > 0) out.push(`      believes ${beliefs.join("; ")}`);
    }
    return out.join("\n");
  }
}

const isStale = (b: Belief, t: AgentRow): boolean => b.location !== (t.location ?? "on the road") || b.availability !== t.private.availability || b.emotional_state !== t.private.emotional_state;

/** A tick of a large town in a few lines (`inspect` without --agent): counts, not one line per agent. */
function tickDigest(records: readonly LogRecord[], row: TickRow): string[] {
  const out: string[] = [];
  let decided = 0;
  let arrived = 0;
  let talks = 0;
  let reflected = 0;
  const rules = new Map<string, number>();
  for (const r of records) {
    const p = r.payload as Record<string, any>;
    if (r.type === "world.incident") out.push(`  [${r.seq}] incident: ${p.description}`);
    else if (r.type === "agent.decided") decided++;
    else if (r.type === "location.occupancy") arrived += (p.occupants as { arrived: boolean }[]).filter((o) => o.arrived).length;
    else if (r.type === "conversation.held") talks++;
    else if (r.type === "agent.reflected") reflected++;
    else if (r.type === "private_state.changed") rules.set(p.rule as string, (rules.get(p.rule as string) ?? 0) + 1);
  }
  const changed = [...rules.values()].reduce((n, k) => n + k, 0);
  out.push(
    `  ${row.agents.length} agents: ${plural(decided, "decision", "decisions")}, ${plural(arrived, "arrival", "arrivals")}, ${plural(talks, "conversation", "conversations")}, ` +
      `${plural(changed, "private-state change", "private-state changes")}${changed === 0 ? "" : ` (${[...rules].sort(([a], [b]) => RULES.indexOf(a) - RULES.indexOf(b)).map(([rule, n]) => `${rule} ${n}`).join(" · ")})`}, ${plural(reflected, "reflection", "reflections")}`,
  );
  const places = new Map<string, number>();
  for (const a of row.agents) places.set(a.location ?? "on the road", (places.get(a.location ?? "on the road") ?? 0) + 1);
  const busiest = [...places].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  out.push(`  where: ${busiest.slice(0, 5).map(([place, n]) => `${place} ${n}`).join(" · ")}${busiest.length > 5 ? ` · ${plural(busiest.length - 5, "more place", "more places")}` : ""}`);
  const truth = new Map(row.agents.map((a) => [a.id, a]));
  let beliefs = 0;
  let stale = 0;
  for (const a of row.agents) {
    for (const [id, b] of Object.entries(a.beliefs)) {
      const t = truth.get(id);
      if (t === undefined) continue;
      beliefs++;
      if (isStale(b, t)) stale++;
    }
  }
  out.push(`  beliefs about others: ${stale} of ${beliefs} stale${beliefs === 0 ? "" : ` (${((100 * stale) / beliefs).toFixed(0)}%)`}`);
  return out;
}
