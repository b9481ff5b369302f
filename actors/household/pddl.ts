// The goal language of household tasks: EnactToM's PDDL goal fragment (digest §1.2) as
// s-expressions — `(and …)`, `(K agent φ)` and ground literals `(pred arg…)`. Secrets and the
// scripted agents' messages use the same literal syntax, so one parser reads all three.

export type Sexp = string | readonly Sexp[];

/** A ground literal: a predicate and its arguments, e.g. `(is_on_top bowl_1 table_22)`. */
export interface Literal {
  readonly pred: string;
  readonly args: readonly string[];
}

export type Formula = { readonly kind: "and"; readonly parts: readonly Formula[] } | { readonly kind: "K"; readonly agent: string; readonly inner: Formula } | { readonly kind: "lit"; readonly lit: Literal };

/** Predicates a goal may use, with their argument kinds (EnactToM's domain, the subset a symbolic house has). */
export const GOAL_PREDICATES: Readonly<Record<string, readonly ("object" | "furniture" | "room" | "agent" | "entity")[]>> = {
  is_on_top: ["object", "furniture"],
  is_inside: ["object", "furniture"],
  is_open: ["furniture"],
  is_closed: ["furniture"],
  is_in_room: ["entity", "room"],
  agent_in_room: ["agent", "room"],
  is_held_by: ["object", "agent"],
};

export class ParseError extends Error {}

/** Parses one s-expression; throws ParseError with the offset of the problem. */
export function parseSexp(text: string): Sexp {
  const tokens = [...text.matchAll(/\(|\)|[^\s()]+/g)].map((m) => ({ t: m[0], at: m.index }));
  let i = 0;
  const read = (): Sexp => {
    const tok = tokens[i++];
    if (tok === undefined) throw new ParseError("unexpected end of expression");
    if (tok.t === ")") throw new ParseError(`unexpected ')' at character ${tok.at}`);
    if (tok.t !== "(") return tok.t;
    const list: Sexp[] = [];
    while (tokens[i]?.t !== ")") {
      if (i >= tokens.length) throw new ParseError("missing ')'");
      list.push(read());
    }
    i++;
    return list;
  };
  const out = read();
  if (i < tokens.length) throw new ParseError(`unexpected text after the expression at character ${tokens[i]!.at}`);
  return out;
}

/** A formula from an s-expression; throws ParseError naming what is malformed. */
export function formulaOf(s: Sexp): Formula {
  if (typeof s === "string" || s.length === 0) throw new ParseError(`expected a parenthesised formula, got ${show(s)}`);
  const [head, ...rest] = s;
  if (head === "and") return { kind: "and", parts: rest.map(formulaOf) };
  if (head === "K") {
    if (rest.length !== 2 || typeof rest[0] !== "string") throw new ParseError(`(K agent φ) takes an agent and one formula, got ${show(s)}`);
    return { kind: "K", agent: rest[0], inner: formulaOf(rest[1]!) };
  }
  if (typeof head !== "string" || rest.some((a) => typeof a !== "string")) throw new ParseError(`expected (predicate arg…), got ${show(s)}`);
  return { kind: "lit", lit: { pred: head, args: rest as string[] } };
}

export const parseFormula = (text: string): Formula => formulaOf(parseSexp(text));

export function show(s: Sexp | Formula | Literal): string {
  if (typeof s === "string") return s;
  if (Array.isArray(s)) return `(${(s as readonly Sexp[]).map(show).join(" ")})`;
  const f = s as Formula | Literal;
  if ("pred" in f) return `(${[f.pred, ...f.args].join(" ")})`;
  if (f.kind === "lit") return show(f.lit);
  if (f.kind === "K") return `(K ${f.agent} ${show(f.inner)})`;
  return `(and ${f.parts.map(show).join(" ")})`;
}

/** The top-level conjuncts of a formula (an `and` flattened). */
export const conjuncts = (f: Formula): Formula[] => (f.kind === "and" ? f.parts.flatMap(conjuncts) : [f]);

/** The functional projection (digest §2.1): the physical conjuncts, every K conjunct deleted. */
export const functionalConjuncts = (f: Formula): Literal[] => conjuncts(f).flatMap((c) => (c.kind === "lit" ? [c.lit] : []));

/** Every K node of a formula, outermost first, in reading order. */
export function kNodes(f: Formula): (Formula & { kind: "K" })[] {
  if (f.kind === "K") return [f, ...kNodes(f.inner)];
  if (f.kind === "and") return f.parts.flatMap(kNodes);
  return [];
}

/** The literal at the bottom of a K chain (a K over an `and` has several). */
export const leavesOf = (f: Formula): Literal[] => (f.kind === "lit" ? [f.lit] : f.kind === "K" ? leavesOf(f.inner) : f.parts.flatMap(leavesOf));

/** The number of nested K operators of a K node (`K a φ` is 1, `K a (K b φ)` is 2). */
export const kDepth = (f: Formula): number => (f.kind === "K" ? 1 + kDepth(f.inner) : f.kind === "and" ? Math.max(0, ...f.parts.map(kDepth)) : 0);

/** Every literal written in a text, e.g. in a message: `(is_open fridge_2)`; unparsable parts are skipped. */
export function literalsIn(text: string): Sexp[] {
  const out: Sexp[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") {
      if (depth === 0) start = i;
      depth++;
    } else if (text[i] === ")" && depth > 0) {
      depth--;
      if (depth === 0) {
        try {
          out.push(parseSexp(text.slice(start, i + 1)));
        } catch {
          // not a statement: skipped
        }
      }
    }
  }
  return out;
}

export const literalKey = (l: Literal): string => show(l);

const PLACES = new Set(["is_on_top", "is_inside", "is_held_by"]);

/**
 * Whether two literals can never hold in the same state, by the house's own structure: a piece is
 * open or closed, an object is in one place (on, inside or held), an agent is in one room. Sound,
 * not complete: a goal the check passes may still be unreachable (`is_in_room` against a place is
 * left to the searches). The verifier's subgoal-tension check and the scripted agents' rule for
 * dilemmas both use it.
 */
export function mutuallyExclusive(a: Literal, b: Literal): boolean {
  const [x, y] = a.args;
  const [u, v] = b.args;
  if (x !== u) return false;
  if ((a.pred === "is_open" && b.pred === "is_closed") || (a.pred === "is_closed" && b.pred === "is_open")) return true;
  if (PLACES.has(a.pred) && PLACES.has(b.pred)) return a.pred !== b.pred || y !== v;
  return a.pred === "agent_in_room" && b.pred === "agent_in_room" && y !== v;
}
