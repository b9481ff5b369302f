// Agreement of the deterministic query analyser with a benchmark's labels, per tokenizer: does it
// find the person the query is about (agent_subject; none for group queries), read a second-order
// query as the believer's belief about the target, and cover the implicit fields? No episode is
// run; this is the development split's quick check behind the tokenizer choice (docs/aura.md).
//   node bench/intent-analyser.ts <queries.json>… [--tokenizer wink|compromise] [--show]
import { analyseQuery, type PerceivedScene } from "../actors/aura/intent.ts";
import { focusLocationOf, sceneTimeOf } from "../actors/aura/scene.ts";
import type { TokenizerName } from "../actors/aura/language/tokens.ts";
import { loadImplicitBenchmark } from "../services/aura/benchmarks/implicit.ts";

const args = process.argv.slice(2);
const tokenizers: TokenizerName[] = args.includes("--tokenizer") ? [args[args.indexOf("--tokenizer") + 1] as TokenizerName] : ["wink", "compromise"];
const files = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--tokenizer");
const show = args.includes("--show");
const FIELD: Record<string, string> = { mood: "emotional_state", secrets: "unspoken_goal" };

for (const file of files) {
  const bench = loadImplicitBenchmark(file);
  for (const tokenizer of tokenizers) {
    let subject = 0, second = 0, fields = 0, fieldsOf = 0, unsafe = 0;
    const misses: string[] = [];
    for (const q of bench.queries) {
      const s = bench.scenes[q.scene]!;
      const scene: PerceivedScene = { summary: s.summary, time: sceneTimeOf(s), focus: focusLocationOf(s), public: s.public_state };
      const a = analyseQuery(q.text, scene, { tokenizer });
      const so = q.subcategory === "second_order";
      const okSubject = so ? a.secondOrder?.believer === q.subject && a.secondOrder?.target === q.target : q.subject === null ? a.scope.kind === "location" || a.scope.kind === "all" || (a.scope.kind === "person" && a.scope.agents.length > 1) : a.scope.kind !== "none" && a.scope.agents.includes(q.subject);
      const okSecond = so === (a.secondOrder !== null);
      const wanted = q.implicitRequires.filter((r) => !r.startsWith("beliefs_about_others")).map((r) => FIELD[r] ?? r);
      const got = wanted.filter((f) => (a.hidden as readonly string[]).includes(f)).length;
      subject += okSubject ? 1 : 0;
      second += okSecond ? 1 : 0;
      fields += got;
      fieldsOf += wanted.length;
      if (so && a.secondOrder === null && a.hidden.length > 0 && q.target !== null && a.scope.kind === "person" && a.scope.agents.includes(q.target)) unsafe++;
      if (!okSubject || !okSecond || got < wanted.length) misses.push(`  ${q.id} [${q.subcategory}] ${q.text}\n      scope=${JSON.stringify(a.scope)} second=${JSON.stringify(a.secondOrder)} hidden=${a.hidden.join(",")} (wanted ${wanted.join(",")})`);
    }
    const n = bench.queries.length;
    console.log(`${file} [${tokenizer}] ${n} queries: subject ${(subject / n).toFixed(3)} · second-order ${(second / n).toFixed(3)} · implicit fields ${(fields / Math.max(1, fieldsOf)).toFixed(3)} · target's state read on a belief query ${unsafe}`);
    if (show) console.log(misses.join("\n"));
  }
}
