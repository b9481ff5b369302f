// The EnvProbe worlds' data model (paper §4, reference/envprobe.md §2.3–2.5): a world's state is
// one array of field values (plus done/success flags), so beliefs and the world are compared field
// by field (paper Eq. 1) and copied cheaply. Also the one interface every world kind implements
// (`WorldKind`); the kinds themselves are the modules beside this file, listed in `index.ts`.
import type { Draws } from "../../rng.ts";

export const KINDS = ["objectstate", "tooldag", "graphnav"] as const;
export type Kind = (typeof KINDS)[number];
export type Cardinality = "low" | "medium" | "high";
export type FieldType = "procedural" | "spatial";

export interface Field {
  readonly name: string;
  readonly type: FieldType;
  /** Task criticality weight w_i (paper §3.3); c_i = w_i / max w. */
  readonly weight: number;
  /** The probe that reads this field. */
  readonly probe: string;
}

/** What the agent is told (task text and map) and what everyone can see: no hidden state. */
export interface Layout {
  readonly kind: Kind;
  readonly fields: readonly Field[];
  readonly goal: string;
  /** objectstate: room count; graphnav: node count; tooldag: tool count. */
  readonly size: number;
  /** objectstate: keys, boxes, targets (in that order); graphnav: keys. */
  readonly objects: readonly string[];
  /** graphnav: edges as [a, b] node indices, with ids `n_a__n_b` (string-sorted ends). */
  readonly edges: readonly (readonly [number, number])[];
}

/** The world's hidden structure: which key opens which door or edge; each tool's inputs. */
export interface Hidden {
  /** objectstate: per door (index k-1 for door_k); graphnav: per edge. null: no lock. */
  readonly lockKey: readonly (string | null)[];
  /** tooldag: the variable indices each tool needs. */
  readonly deps: readonly (readonly number[])[];
}

export interface WorldSpec {
  readonly layout: Layout;
  readonly hidden: Hidden;
  readonly initial: readonly string[];
}

export interface Sizes {
  readonly cardinality: Cardinality;
  readonly density: Cardinality;
}

/** A task action or probe as text parsed by the release's grammar (`grammar.ts`). */
export interface Parsed {
  readonly verb: string;
  readonly args: readonly string[];
}

/** What a task action did. */
export interface Outcome {
  readonly valid: boolean;
  readonly reason: string;
}

/** A probe's answer: (field, value) pairs written back into beliefs, plus extras. */
export interface Answer {
  readonly valid: boolean;
  readonly reason: string;
  readonly pairs: [number, string][];
  readonly extra: Record<string, string>;
}

export type Noise = "clean" | "partial";

export interface Observation {
  /** Field values the observation shows directly. */
  readonly pairs: [number, string][];
  /** Visible ids: objects in view (objectstate), available variables and completed tools (tooldag), neighbours (graphnav). */
  readonly seen: string[];
}

/**
 * What may change under exogenous mutation: the paper's (object locations and lock states; edges
 * and keys) or the release's (loose keys only in objectstate; variables in tooldag; keyed edges
 * and loose keys in graphnav).
 */
export type MutationTargets = "paper" | "release";

/**
 * One world kind: everything that differs between ObjectState, ToolDAG and GraphNav. The
 * kind-independent part of each operation (parsing the text, the observation's noise draw, the
 * mutation's change log) is in `operations.ts`, which calls these through the registry.
 *
 * Draws: a kind consumes a fixed number of draws per call whatever the values are, so a stream
 * never shifts with what a policy does (common random numbers, DESIGN §4).
 */
export interface WorldKind<K extends Kind = Kind> {
  readonly kind: K;
  /** The layout, hidden structure and initial values a seed's draws give, at these sizes. */
  generate(sizes: Sizes, draws: Draws): WorldSpec;
  /** Applies a task action to `values` in place. */
  act(spec: WorldSpec, values: string[], p: Parsed): Outcome;
  /** Whether the goal is reached. */
  isSuccess(layout: Layout, values: readonly string[]): boolean;
  /** Reads fields for a probe (read-only). */
  probe(spec: WorldSpec, values: readonly string[], p: Parsed): Answer;
  /** What the agent sees after a step; `dropLast`: partial noise hides the last item in view. */
  observe(spec: WorldSpec, values: readonly string[], dropLast: boolean): Observation;
  /** One step of exogenous mutation at `rate`, writing through `set` (which logs the changes). */
  mutate(spec: WorldSpec, values: readonly string[], rate: number, targets: MutationTargets, draws: Draws, set: (field: number, value: string) => void): void;
  /** Shortest plan on the static world (no mutation): K, or null when the seed is unsolvable. */
  shortestPlan(spec: WorldSpec): number | null;
}
