// `diff`: what differs between two episodes of one world, from their logs alone (no replay): a fork
// against its parent or a sibling fork, or two runs that should be equal. Over the ticks both logs
// have committed, records are compared tick by tick in log order by what replay depends on (type,
// sender, recipients, payload, and which record of the tick caused them); the state is compared by
// each `tick.committed`'s per-actor parts. The result says where the two first part, which record
// types occur more or less often, and whose state differs from which tick on.
import { canonicalJson } from "../../events/canonical.ts";
import type { LogRecord } from "../../events/record.ts";
import { embeddedBackend, type Backend } from "../../infra/backend.ts";
import type { Where } from "./episodes.ts";
import { headerOf, layoutOf, resolveEpisodeDir, type EpisodeHeader } from "./replay.ts";
import { EpisodeWorldsDiffer } from "./errors.ts";
import { diffValues } from "./diff.ts";
import { recordLine } from "../views/records.ts";
import { plural, shownPath } from "../views/text.ts";

export interface DiffSide {
  readonly episode: string;
  readonly world: string;
  readonly seed: number;
  readonly condition: string;
  /** Set for a fork: its parent episode and the tick it was forked after. */
  readonly forkOf?: { readonly parent: string; readonly atTick: number };
  /** The ticks its log has committed (a fork's start after its fork tick); null: none. */
  readonly ticks: { readonly first: number; readonly last: number } | null;
  readonly records: number;
}

/** A record as shown where two logs part (compared by what replay depends on, its cause by its place in the tick). */
export interface ComparedRecord {
  readonly seq: number;
  readonly type: string;
  readonly from: string;
  readonly to: LogRecord["to"];
  readonly payload: unknown;
}

export interface TypeCount {
  readonly type: string;
  readonly a: number;
  readonly b: number;
}

export interface ActorStateDifference {
  readonly actor: string;
  /** The first compared tick its state differs at. */
  readonly firstTick: number;
  /** Compared ticks its state differs at. */
  readonly ticks: number;
  /** Whether it still differs at the last compared tick. */
  readonly atLastTick: boolean;
}

export interface EpisodeDiff {
  readonly a: DiffSide;
  readonly b: DiffSide;
  /** How the two are related, in words (b forks a after tick 10, both fork x, …). */
  readonly relation: string;
  /** Config fields whose values differ (besides what the conditions change). */
  readonly configDifferences: readonly string[];
  /** The ticks both logs have committed, which are compared; null: none. */
  readonly compared: { readonly first: number; readonly last: number } | null;
  readonly identical: boolean;
  /**
   * Where the logs first part: the tick, the index of the record in it, and the two records; when
   * every record of that tick is the same but the state it commits, `state` names whose differs.
   */
  readonly firstDifference: { readonly tick: number; readonly index: number; readonly a: ComparedRecord | null; readonly b: ComparedRecord | null; readonly state?: readonly string[] } | null;
  /** Record counts by type over the compared ticks (every type either holds). */
  readonly types: readonly TypeCount[];
  /** Compared ticks whose state hashes differ. */
  readonly ticksDiffering: number;
  /** Actors whose state differs at some compared tick, by the first tick it does. */
  readonly actors: readonly ActorStateDifference[];
  /** Actors whose state is equal at every compared tick. */
  readonly actorsEqual: number;
  readonly notes: readonly string[];
}

interface Side {
  readonly header: EpisodeHeader;
  readonly records: readonly LogRecord[];
  /** Records of each committed tick, header excluded, in log order. */
  readonly byTick: ReadonlyMap<number, readonly LogRecord[]>;
}

const HEADERS = new Set(["episode.started", "episode.forked"]);

function sideOf(records: readonly LogRecord[], file: string): Side {
  const header = headerOf(records, file);
  const byTick = new Map<number, LogRecord[]>();
  const committed = new Set<number>();
  for (const r of records) {
    if (HEADERS.has(r.type)) continue;
    let list = byTick.get(r.tick);
    if (list === undefined) byTick.set(r.tick, (list = []));
    list.push(r);
    if (r.type === "tick.committed") committed.add(r.tick);
  }
  // A tick the log ends part-way through (an interrupted run, a run still going) is not compared.
  for (const tick of [...byTick.keys()]) if (!committed.has(tick)) byTick.delete(tick);
  return { header, records, byTick };
}

function summary(side: Side): DiffSide {
  const h = side.header;
  const ticks = [...side.byTick.keys()];
  return {
    episode: h.episode,
    world: h.world.name,
    seed: h.seed,
    condition: h.condition,
    ...(h.kind === "forked" ? { forkOf: { parent: String(h.payload.parent), atTick: Number(h.payload.atTick) } } : {}),
    ticks: ticks.length === 0 ? null : { first: Math.min(...ticks), last: Math.max(...ticks) },
    records: side.records.length,
  };
}

function relationOf(a: DiffSide, b: DiffSide): string {
  if (a.episode === b.episode) return "the same episode id (two copies of one episode, or the same run made twice)";
  if (b.forkOf?.parent === a.episode) return `b forks a after tick ${b.forkOf.atTick}`;
  if (a.forkOf?.parent === b.episode) return `a forks b after tick ${a.forkOf.atTick}`;
  if (a.forkOf !== undefined && a.forkOf.parent === b.forkOf?.parent) {
    return a.forkOf.atTick === b.forkOf.atTick ? `both fork ${a.forkOf.parent} after tick ${a.forkOf.atTick}` : `both fork ${a.forkOf.parent} (a after tick ${a.forkOf.atTick}, b after tick ${b.forkOf.atTick})`;
  }
  return a.seed === b.seed ? "separate runs of the same seed" : "separate runs";
}

/** What replay depends on, the cause named by its place in the tick (seqs shift once the logs part). */
function comparable(r: LogRecord, firstSeq: number): string {
  return canonicalJson({ cause: r.cause === null ? null : r.cause - firstSeq, from: r.from, payload: r.payload, to: r.to, type: r.type, v: r.v });
}

type Committed = { readonly stateHash: string; readonly parts: Readonly<Record<string, string>> };

/** Actors whose part of two `tick.committed` payloads differs, in id order. */
const differingParts = (a: unknown, b: unknown): string[] => {
  const pa = (a as Committed).parts;
  const pb = (b as Committed).parts;
  return [...new Set([...Object.keys(pa), ...Object.keys(pb)])].filter((id) => pa[id] !== pb[id]).sort();
};

const shown = (r: LogRecord | undefined): ComparedRecord | null => (r === undefined ? null : { seq: r.seq, type: r.type, from: r.from, to: r.to, payload: r.payload });

/** Compares two episodes' logs (each whole, as read); `aFile`/`bFile` name them in errors. */
export function compareLogs(aRecords: readonly LogRecord[], bRecords: readonly LogRecord[], aFile: string, bFile: string): EpisodeDiff {
  const a = sideOf(aRecords, aFile);
  const b = sideOf(bRecords, bFile);
  if (a.header.world.name !== b.header.world.name) {
    throw new EpisodeWorldsDiffer({ a: aFile, b: bFile, worldA: a.header.world.name, worldB: b.header.world.name });
  }
  const sa = summary(a);
  const sb = summary(b);
  const notes: string[] = [];
  if (sa.seed !== sb.seed) notes.push(`the seeds differ (${sa.seed} and ${sb.seed}): every exogenous draw may differ, not only what the conditions change`);
  // The config each condition starts from; what a condition changes shows in the records.
  const configDifferences = diffValues(a.header.baseConfig, b.header.baseConfig, 20, "config");
  if (configDifferences.length > 0) notes.push(`the configs differ (${configDifferences.length === 1 ? "one field" : `${configDifferences.length} fields`}): ${configDifferences.slice(0, 3).join("; ")}${configDifferences.length > 3 ? "; …" : ""}`);
  const common = [...a.byTick.keys()].filter((t) => b.byTick.has(t)).sort((x, y) => x - y);
  const compared = common.length === 0 ? null : { first: common[0]!, last: common.at(-1)! };
  const counts = new Map<string, { a: number; b: number }>();
  const count = (type: string, side: "a" | "b") => {
    let c = counts.get(type);
    if (c === undefined) counts.set(type, (c = { a: 0, b: 0 }));
    c[side]++;
  };
  let firstDifference: EpisodeDiff["firstDifference"] = null;
  let ticksDiffering = 0;
  const actors = new Map<string, { firstTick: number; ticks: number; last: number }>();
  const allActors = new Set<string>();
  for (const tick of common) {
    const ra = a.byTick.get(tick)!;
    const rb = b.byTick.get(tick)!;
    for (const r of ra) count(r.type, "a");
    for (const r of rb) count(r.type, "b");
    if (firstDifference === null) {
      const n = Math.max(ra.length, rb.length);
      for (let i = 0; i < n; i++) {
        const x = ra[i];
        const y = rb[i];
        if (x !== undefined && y !== undefined && comparable(x, ra[0]!.seq) === comparable(y, rb[0]!.seq)) continue;
        const commits = x?.type === "tick.committed" && y?.type === "tick.committed";
        firstDifference = { tick, index: i, a: shown(x), b: shown(y), ...(commits ? { state: differingParts(x.payload, y.payload) } : {}) };
        break;
      }
    }
    const ca = ra.at(-1)!.payload as Committed;
    const cb = rb.at(-1)!.payload as Committed;
    if (ca.stateHash !== cb.stateHash) ticksDiffering++;
    for (const id of Object.keys(ca.parts)) allActors.add(id);
    for (const id of Object.keys(cb.parts)) allActors.add(id);
    for (const id of differingParts(ca, cb)) {
      const seen = actors.get(id);
      if (seen === undefined) actors.set(id, { firstTick: tick, ticks: 1, last: tick });
      else {
        seen.ticks++;
        seen.last = tick;
      }
    }
  }
  if (compared === null) {
    const held = (s: DiffSide) => (s.ticks === null ? "no committed tick" : `ticks ${s.ticks.first}–${s.ticks.last}`);
    notes.push(`the logs hold no committed tick in common (a: ${held(sa)}, b: ${held(sb)}): nothing to compare`);
  }
  const types = [...counts.entries()].map(([type, c]) => ({ type, a: c.a, b: c.b })).sort((x, y) => (x.type < y.type ? -1 : 1));
  return {
    a: sa,
    b: sb,
    relation: relationOf(sa, sb),
    configDifferences,
    compared,
    identical: compared !== null && firstDifference === null && ticksDiffering === 0,
    firstDifference,
    types,
    ticksDiffering,
    actors: [...actors.entries()].map(([actor, s]) => ({ actor, firstTick: s.firstTick, ticks: s.ticks, atLastTick: s.last === compared?.last })).sort((x, y) => x.firstTick - y.firstTick || (x.actor < y.actor ? -1 : 1)),
    actorsEqual: allActors.size - actors.size,
    notes,
  };
}

/** One tick's state hashes on each side (null: that side has not committed the tick). */
export interface TickAgreement {
  readonly tick: number;
  readonly a: string | null;
  readonly b: string | null;
  /** Both committed the tick with the same state hash. */
  readonly agree: boolean;
}

/**
 * Each tick either log has committed, in order, with both sides' state hashes (the `tick.committed`
 * records `compareLogs` compares): where two episodes agree and where they part, tick by tick.
 */
export function stateAgreement(aRecords: readonly LogRecord[], bRecords: readonly LogRecord[], aFile: string, bFile: string): TickAgreement[] {
  const hashes = (side: Side) => new Map([...side.byTick].map(([tick, records]) => [tick, (records.at(-1)!.payload as Committed).stateHash]));
  const a = hashes(sideOf(aRecords, aFile));
  const b = hashes(sideOf(bRecords, bFile));
  const ticks = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  return ticks.map((tick) => {
    const ha = a.get(tick) ?? null;
    const hb = b.get(tick) ?? null;
    return { tick, a: ha, b: hb, agree: ha !== null && ha === hb };
  });
}

/**
 * Reads both logs from `backend` (default: the embedded one, where `a` and `b` are episode
 * directories; `where` locates episodes in other stores) and compares them.
 */
export const diffEpisodes = async (a: string, b: string, backend: Backend = embeddedBackend, where?: (episode: string) => Where): Promise<EpisodeDiff> => {
  const read = async (path: string) => {
    const location = where === undefined ? layoutOf(resolveEpisodeDir(path)).log : where(path).log;
    const scan = await backend.eventStores.scan(location);
    return { records: scan.records, file: where === undefined ? shownPath(location) : location, torn: scan.torn };
  };
  const left = await read(a);
  const right = await read(b);
  const diff = compareLogs(left.records, right.records, left.file, right.file);
  // A torn final record (a crash mid-write) is left out, as replay leaves it: said, not refused.
  const torn = ([["a", left], ["b", right]] as const).flatMap(([side, read]) => (read.torn === null ? [] : [`${side}'s log ends in a torn record (${read.torn.message}); compared as far as it is whole`]));
  return torn.length === 0 ? diff : { ...diff, notes: [...diff.notes, ...torn] };
};

const recordText = (r: ComparedRecord | null, side: string, other: string): string => (r === null ? `  ${side}  (no record: ${other}'s tick goes on past ${side}'s)` : `  ${side}${recordLine(r)}`);

function sideLine(label: string, s: DiffSide): string {
  const fork = s.forkOf === undefined ? "" : `, fork of ${s.forkOf.parent} after tick ${s.forkOf.atTick}`;
  const ticks = s.ticks === null ? "no committed tick" : `ticks ${s.ticks.first}–${s.ticks.last}`;
  return `${label}  ${s.episode}: ${s.world}, seed ${s.seed}, condition ${s.condition}${fork}; ${ticks}, ${plural(s.records, "record", "records")}`;
}

/** The comparison as people read it. */
export function diffText(d: EpisodeDiff): string {
  const notes = d.notes.map((n) => `note: ${n}`);
  return [sideLine("a", d.a), sideLine("b", d.b), `   ${d.relation}`, ...comparisonLines(d), ...notes].join("\n");
}

function comparisonLines(d: EpisodeDiff): string[] {
  const out: string[] = [];
  if (d.compared === null) return out;
  const range = d.compared.first === d.compared.last ? `tick ${d.compared.first}` : `ticks ${d.compared.first}–${d.compared.last}`;
  const recordsCompared = d.types.reduce((n, t) => n + t.a, 0);
  if (d.identical) {
    out.push(`IDENTICAL over ${range} (the ticks both hold): the same ${plural(recordsCompared, "record", "records")} (type, sender, recipients, payload, cause) and the same state at every tick`);
    return out;
  }
  out.push(`DIFFERENT over ${range} (the ticks both hold)`);
  if (d.firstDifference !== null) {
    const f = d.firstDifference;
    if (f.state !== undefined) {
      const some = f.state.slice(0, 8);
      out.push(`first difference: tick ${f.tick}, the state it commits (its other records are the same): ${some.join(", ")}${f.state.length > some.length ? ` and ${f.state.length - some.length} more` : ""}`);
    } else out.push(`first differing record: tick ${f.tick}, record ${f.index + 1} of the tick`, recordText(f.a, "a", "b"), recordText(f.b, "b", "a"));
  }
  const changed = d.types.filter((t) => t.a !== t.b);
  if (changed.length > 0) {
    const width = Math.max(...changed.map((t) => t.type.length));
    out.push(`records by type over ${range}, a → b (${plural(d.types.length - changed.length, "type", "types")} with equal counts not shown):`);
    for (const t of changed) out.push(`  ${t.type.padEnd(width)}  ${t.a} → ${t.b} (${t.b > t.a ? "+" : "−"}${Math.abs(t.b - t.a)})`);
  } else out.push(`records by type over ${range}: the same count of each type on both sides`);
  const ticks = d.compared.last - d.compared.first + 1;
  out.push(`state: differs at ${d.ticksDiffering} of ${plural(ticks, "tick", "ticks")}; ${plural(d.actors.length, "actor differs", "actors differ")}, ${d.actorsEqual} equal throughout`);
  const shownActors = d.actors.slice(0, 20);
  if (shownActors.length > 0) {
    const width = Math.max(...shownActors.map((x) => x.actor.length));
    for (const x of shownActors) out.push(`  ${x.actor.padEnd(width)}  from tick ${x.firstTick}, at ${plural(x.ticks, "tick", "ticks")}${x.atLastTick ? "" : `; equal again by tick ${d.compared.last}`}`);
    if (d.actors.length > shownActors.length) out.push(`  … and ${d.actors.length - shownActors.length} more (--json lists them all)`);
  }
  return out;
}
