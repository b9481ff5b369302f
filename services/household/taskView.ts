// `tasks show`: a household task as a reader sees it — rooms with their furniture and objects,
// agents with their bans, budgets and contacts, the mechanics, each agent's secrets (as sentences),
// the goal with its K nodes (and their probe ids), private objectives and the turn limit.
import { render } from "../../actors/household/knowledge.ts";
import { compileTask, type HouseholdTask } from "../../actors/household/task.ts";

export function taskView(task: HouseholdTask, file: string | null): string {
  const c = compileTask(task);
  const m = c.mechanics;
  const lines: string[] = [];
  lines.push(`${task.task_id}: ${task.title}${file === null ? "" : ` (${file})`}`);
  lines.push(`  ${task.category}, ${task.split ?? "standard"} split, K-depth ${c.depth}${task.tom_level === undefined ? "" : ` (tom_level ${task.tom_level})`}, max_turns ${task.max_turns ?? "default"}`);
  lines.push(`  public task: ${task.task}`);
  lines.push("", "Rooms:");
  for (const room of task.scene.rooms) {
    const barred = Object.entries(m.restricted).filter(([, rooms]) => rooms.includes(room)).map(([a]) => a);
    lines.push(`  ${room}${barred.length === 0 ? "" : ` (barred to ${barred.join(", ")})`}`);
    for (const [id, f] of Object.entries(task.scene.furniture)) {
      if (f.room !== room) continue;
      const objects = Object.entries(task.scene.objects).filter(([, o]) => o.on === id || o.inside === id).map(([o, spec]) => `${o} ${spec.on === id ? "on" : "inside"}`);
      const state = f.articulated ? ` [${f.open === true ? "open" : "closed"}]` : "";
      lines.push(`    ${id} (${f.kind}${f.articulated ? ", container" : ", surface"})${state}${objects.length === 0 ? "" : `: ${objects.join(", ")}`}`);
    }
  }
  lines.push("", "Agents:");
  for (const [agent, spec] of Object.entries(task.agents)) {
    const parts = [`starts in ${spec.room}`];
    if ((m.restricted[agent] ?? []).length > 0) parts.push(`barred from ${m.restricted[agent]!.join(", ")}`);
    if (m.msgLimit[agent] !== undefined) parts.push(`${m.msgLimit[agent]} message(s)`);
    if (m.allowedTargets[agent] !== undefined) parts.push(`may message ${m.allowedTargets[agent]!.join(", ") || "nobody"}`);
    if (m.actions[agent] !== undefined) parts.push(`actions ${m.actions[agent]!.join(", ")}`);
    lines.push(`  ${agent}: ${parts.join("; ")}`);
  }
  const mechanics = [
    ...m.inverse.map((f) => `inverse: ${f} (Open closes it, Close opens it)`),
    ...m.remote.map((r) => `remote control: ${r.trigger} sets ${r.target}${r.targetState === "is_closed" ? " the opposite way" : ""}`),
    ...m.mirror.map((r) => `mirroring: ${r.a} and ${r.b}${r.state === "is_closed" ? " (opposite)" : ""}`),
  ];
  if (mechanics.length > 0) lines.push("", "Mechanics:", ...mechanics.map((x) => `  ${x}`));
  lines.push("", "Secrets:");
  for (const [agent, secrets] of Object.entries(task.agent_secrets)) {
    lines.push(`  ${agent}:`);
    for (const s of secrets) lines.push(`    - ${render(s, agent)}    ${s.startsWith("(") ? s : ""}`.trimEnd());
  }
  lines.push("", "Goal:", `  ${task.goal}`);
  for (const l of c.functional) lines.push(`  functional: ${render(`(${l.pred} ${l.args.join(" ")})`, "")}`);
  for (const k of c.kNodes) lines.push(`  ${k.id}: ${k.agent} knows${k.subjects.length > 0 ? ` that ${k.subjects.join(" knows that ")} knows` : ""} ${k.fact} (depth ${k.depth}${k.trivial ? ", trivial" : ""})`);
  for (const [agent, g] of Object.entries(task.goal_owners ?? {})) lines.push(`  ${agent}'s private objective: ${g}`);
  if (task.golden_trajectory !== undefined) lines.push("", `Golden trajectory: ${task.golden_trajectory.turns.length} turn(s), hash ${task.golden_trajectory.trajectory_hash.slice(0, 12)}`);
  return lines.join("\n");
}
