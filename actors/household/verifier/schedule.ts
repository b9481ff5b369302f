// Packing a sequential plan into parallel turns (digest §8.6 step 7, like the release's
// `schedule_runtime_ops`): a step goes in the turn after its agent's previous step and after the
// last step that touched any of its resources — the object it moves, the furniture it takes from,
// puts into or operates, and every piece a mechanic moves with it. Agents with nothing to do in a
// turn wait.
import type { CompiledTask } from "../task.ts";
import type { Step } from "./physical.ts";

export type Turn = readonly { readonly agent: string; readonly action: string }[];

export function scheduleTurns(c: CompiledTask, plan: readonly Step[]): Turn[] {
  const { scene } = c.task;
  const m = c.mechanics;
  const at = new Map<string, string>(Object.entries(scene.objects).map(([o, spec]) => [o, (spec.on ?? spec.inside)!]));
  const last = new Map<string, number>();
  const byTurn: Map<string, string>[] = [];
  for (const step of plan) {
    const a = step.action;
    let resources: string[] = [];
    if (a.kind === "open" || a.kind === "close") resources = [a.target, ...m.remote.filter((r) => r.trigger === a.target).map((r) => r.target), ...m.mirror.flatMap((mi) => (mi.a === a.target ? [mi.b] : mi.b === a.target ? [mi.a] : []))];
    else if (a.kind === "pick") resources = [a.target, at.get(a.target) ?? a.target];
    else if (a.kind === "place") {
      resources = [a.target, a.furniture];
      at.set(a.target, a.furniture);
    }
    const turn = 1 + Math.max(last.get(`agent ${step.agent}`) ?? 0, ...resources.map((r) => last.get(r) ?? 0));
    last.set(`agent ${step.agent}`, turn);
    for (const r of resources) last.set(r, turn);
    while (byTurn.length < turn) byTurn.push(new Map());
    byTurn[turn - 1]!.set(step.agent, step.text);
  }
  return byTurn.map((t) => c.agentIds.map((agent) => ({ agent, action: t.get(agent) ?? "Wait[]" })));
}
