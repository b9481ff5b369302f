// What the analyser tests share: a small harbour scene of their own (no benchmark scene) and who a
// query is about in a scene (no one: an empty list).
import { analyseQuery, type PerceivedScene } from "../actors/aura/intent.ts";
import type { TokenizerName } from "../actors/aura/language/tokens.ts";

export const harbour: PerceivedScene = {
  summary: "Harbour village, 07:40. Present: Ingrid Berg (baker, kneading dough), Tomasz Nowak (novelist, at a window table, typing), Ana Silva (fisherman, mending nets on the quay). Rui Costa (retired schoolteacher) is at the chapel.",
  time: "07:40",
  focus: "Berg Bakery",
  public: {
    "Ingrid Berg": { location: "Berg Bakery", action: "kneading dough" },
    "Tomasz Nowak": { location: "Berg Bakery", action: "typing on a laptop" },
    "Ana Silva": { location: "Fish Quay", action: "mending nets" },
    "Rui Costa": { location: "Chapel", action: "sweeping the steps" },
  },
};

export function peopleIn(scene: PerceivedScene, query: string, tokenizer?: TokenizerName): string[] {
  const a = analyseQuery(query, scene, tokenizer === undefined ? {} : { tokenizer });
  return a.scope.kind === "none" ? [] : [...a.scope.agents];
}
