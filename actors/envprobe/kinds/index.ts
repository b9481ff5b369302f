// The registry of EnvProbe world kinds: kind name → the module implementing `WorldKind`.
// Everything that dispatches on a world's kind looks it up here (see `operations.ts`).
import { graphNav } from "./graphnav.ts";
import { objectState } from "./objectstate.ts";
import { toolDag } from "./tooldag.ts";
import { KINDS, type Kind, type WorldKind } from "./types.ts";

export { KINDS, type Kind };

/** Keyed by name; the type checks that each module's `kind` is its key. */
const WORLD_KINDS: { readonly [K in Kind]: WorldKind<K> } = { objectstate: objectState, tooldag: toolDag, graphnav: graphNav };

export const worldKind = (kind: Kind): WorldKind => WORLD_KINDS[kind];
