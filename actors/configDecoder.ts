// Decoding a world's config (merged over its defaults) with a message that says what to fix: a
// misspelt field is reported with the fields its object has (Effect only names the unknown key).
import { Schema } from "effect";
import { InputRejected } from "../events/inputRejected.ts";

interface AstNode {
  readonly _tag: string;
  readonly types?: readonly AstNode[];
  readonly elements?: readonly AstNode[];
  readonly rest?: readonly AstNode[];
  readonly propertySignatures?: ReadonlyArray<{ readonly name: PropertyKey; readonly type: AstNode }>;
}

/**
 * What a path can step into at `node`: itself, or for a union (NullOr(Struct), a union of structs)
 * the object or array member that shares the most fields with the value given there.
 */
function container(node: AstNode, value: unknown): AstNode {
  if (node._tag !== "Union") return node;
  const keys = value !== null && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
  const shared = (t: AstNode) => (t.propertySignatures ?? []).filter((p) => keys.includes(String(p.name))).length;
  const members = (node.types ?? []).filter((t) => (Array.isArray(value) ? t._tag === "Arrays" : t._tag === "Objects"));
  return members.reduce<AstNode | null>((best, t) => (best === null || shared(t) > shared(best) ? t : best), null) ?? node;
}

/** The field names of the object at `path` below `ast` (`value` the config given), or null when the path does not lead to one. */
function fieldsAt(ast: AstNode, path: ReadonlyArray<string | number>, value: unknown): string[] | null {
  let node: AstNode | undefined = ast;
  for (const step of path) {
    node = container(node, value);
    node = typeof step === "number" ? (node._tag === "Arrays" ? (node.elements?.[step] ?? node.rest?.[0]) : undefined) : node.propertySignatures?.find((p) => p.name === step)?.type;
    value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[step] : undefined;
    if (node === undefined) return null;
  }
  node = container(node, value);
  return node._tag === "Objects" ? (node.propertySignatures ?? []).map((p) => String(p.name)) : null;
}

/** `Expected no excess property at ["clock"]["startHuor"]` → the known fields of `clock`. */
function excessHint(ast: AstNode, message: string, value: unknown): string {
  const at = /Expected no excess property at ((?:\[(?:"(?:[^"\\]|\\.)*"|\d+)\])+)/.exec(message);
  if (at === null) return "";
  const path = [...at[1]!.matchAll(/\[("(?:[^"\\]|\\.)*"|\d+)\]/g)].map((m) => JSON.parse(m[1]!) as string | number);
  const fields = fieldsAt(ast, path.slice(0, -1), value);
  if (fields === null || fields.length === 0) return "";
  const where = path.length === 1 ? "the config" : `config${at[1]!.slice(0, at[1]!.lastIndexOf("["))}`;
  return ` (${where} has the fields: ${[...fields].sort().join(", ")})`;
}

/** Checks a value against a schema that rejects unknown fields: null when it holds, else one line (a misspelt field with the known ones). */
export function schemaProblem<S extends Schema.Top>(schema: S): (value: unknown) => string | null {
  const decode = Schema.decodeUnknownSync(schema as unknown as Schema.Codec<S["Type"], unknown>, { onExcessProperty: "error" });
  return (value) => {
    try {
      decode(value);
      return null;
    } catch (error) {
      const message = String((error as Error).message).replace(/\s+/g, " ").trim();
      return `${message}${excessHint(schema.ast as unknown as AstNode, message, value)}`;
    }
  };
}

/** A decoder for a world's merged config that rejects unknown fields and names the known ones. */
export function configDecoder<S extends Schema.Top>(world: string, schema: S): (merged: unknown) => S["Type"] {
  const decode = Schema.decodeUnknownSync(schema as unknown as Schema.Codec<S["Type"], unknown>, { onExcessProperty: "error" });
  const problem = schemaProblem(schema);
  return (merged) => {
    try {
      return decode(merged);
    } catch {
      throw new InputRejected("config", `invalid ${world} config: ${problem(merged)}`);
    }
  };
}
