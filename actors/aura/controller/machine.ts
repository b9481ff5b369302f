// The AURA controller (paper §3, Algorithm 1) as an XState statechart: each `user.query` goes
// idle → inferring → planning → probing → answering → idle. A stage that asks the LLM gateway waits
// in its `awaitingModel` substate for the logged `llm.completed` / `llm.failed`; probing waits in
// `awaitingProbe` for the answer or refusal of its one probe in flight. The `deciding` substates are
// transient: their guarded eventless transitions choose the stage's backend (or the next call) and
// move on in the same step. What each action and guard does is in stages.ts. Everything the
// controller knows arrives as records, and its tie-breaks come from its own named RNG stream.
//
// Between ticks the controller is idle (a tick pumps each query to its answer), so the state value
// in the tick state hash is "idle", as it was when the stages were kept in the context.
import { and, enqueueActions, setup } from "xstate";
import type { Emitted } from "../../actor.ts";
import { initialController, type ControllerContext, type ControllerEvent, type ControllerInput } from "./context.ts";
import {
  answerByLlm, answersProbe, answersRequest, askAnswer, askIntent, askPlan, askStep, budgetSpent, fixPlan, giveAnswer, hasNextCall, inferIntent, intentByLlm,
  noteRefusal, planByLlm, plannerCalls, plannerFallsBack, plannerMove, plannerStops, probeNext, readAnswer, sense, stepsByLlm, takeAnswer, takeIntent, takePlan,
} from "./stages.ts";

export { initialController, type ControllerContext, type ControllerInput } from "./context.ts";

type Step = (context: ControllerContext) => readonly Emitted[];

/** A named action: runs a stage step and emits the records it returns, in order. */
const step = (run: Step) =>
  enqueueActions<ControllerContext, ControllerEvent, undefined, ControllerEvent, never, never, never, never, Emitted>(({ context, enqueue }) => {
    for (const e of run(context)) enqueue.emit(e);
  });

type Type = ControllerEvent["type"];
type RecordOfType<T extends Type> = Extract<ControllerEvent, { readonly type: T }>;

const isOneOf = <T extends Type>(event: ControllerEvent, types: readonly T[]): event is RecordOfType<T> => types.some((t) => t === event.type);

/** A named action taking the records of `types` only (typed from the event catalogue; any other is a wiring error). */
const taking = <T extends Type>(types: readonly T[], run: (context: ControllerContext, event: NoInfer<RecordOfType<T>>) => readonly Emitted[]) =>
  enqueueActions<ControllerContext, ControllerEvent, undefined, ControllerEvent, never, never, never, never, Emitted>(({ context, event, enqueue }) => {
    if (!isOneOf(event, types)) throw new Error(`the AURA controller's action for ${types.join(", ")} was given a ${event.type}`);
    for (const e of run(context, event)) enqueue.emit(e);
  });

const MODEL: ReadonlyArray<"llm.completed" | "llm.failed"> = ["llm.completed", "llm.failed"];

export const controllerMachine = setup({
  types: {
    context: {} as ControllerContext,
    input: {} as ControllerInput,
    events: {} as ControllerEvent,
    emitted: {} as Emitted,
  },
  guards: {
    intentByLlm: ({ context }) => intentByLlm(context),
    planByLlm: ({ context }) => planByLlm(context),
    stepsByLlm: ({ context }) => stepsByLlm(context),
    budgetSpent: ({ context }) => budgetSpent(context),
    hasNextCall: ({ context }) => hasNextCall(context),
    answerByLlm: ({ context }) => answerByLlm(context),
    answersRequest: ({ context, event }) => (event.type === "llm.completed" || event.type === "llm.failed") && answersRequest(context, event),
    answersProbe: ({ context, event }) => (event.type === "probe.answered" || event.type === "probe.denied") && answersProbe(context, event),
    plannerUnusable: ({ context, event }) => (event.type === "llm.completed" || event.type === "llm.failed") && plannerMove(context, event).kind === "unusable",
    plannerStops: ({ context, event }) => (event.type === "llm.completed" || event.type === "llm.failed") && plannerMove(context, event).kind === "stop",
  },
  actions: {
    sense: taking(["user.query"], sense),
    inferIntent: step(inferIntent),
    askIntent: step(askIntent),
    takeIntent: taking(MODEL, takeIntent),
    fixPlan: step(fixPlan),
    askPlan: step(askPlan),
    takePlan: taking(MODEL, takePlan),
    askStep: step(askStep),
    plannerFallsBack: taking(MODEL, plannerFallsBack),
    plannerStops: step(plannerStops),
    plannerCalls: taking(MODEL, plannerCalls),
    probeNext: step(probeNext),
    readAnswer: taking(["probe.answered"], readAnswer),
    noteRefusal: taking(["probe.denied"], noteRefusal),
    askAnswer: step(askAnswer),
    takeAnswer: taking(MODEL, takeAnswer),
    giveAnswer: step(giveAnswer),
  },
}).createMachine({
  id: "aura-controller",
  context: ({ input }) => initialController(input),
  initial: "idle",
  states: {
    idle: {
      on: { "user.query": { target: "inferring", actions: "sense" } },
    },
    // The IntentInferrer: a frame and its budget B(g) ≤ maxSteps, for the conditions that infer one.
    inferring: {
      initial: "deciding",
      states: {
        deciding: {
          always: [
            { guard: "intentByLlm", target: "awaitingModel", actions: "askIntent" },
            { target: "#aura-controller.planning", actions: "inferIntent" },
          ],
        },
        awaitingModel: {
          on: {
            "llm.completed": { guard: "answersRequest", target: "#aura-controller.planning", actions: "takeIntent" },
            "llm.failed": { guard: "answersRequest", target: "#aura-controller.planning", actions: "takeIntent" },
          },
        },
      },
    },
    // Plan-once strategies fix their calls (Plan-and-Solve may ask the LLM planner); the others pass through.
    planning: {
      initial: "deciding",
      states: {
        deciding: {
          always: [
            { guard: "planByLlm", target: "awaitingModel", actions: "askPlan" },
            { target: "#aura-controller.probing", actions: "fixPlan" },
          ],
        },
        awaitingModel: {
          on: {
            "llm.completed": { guard: "answersRequest", target: "#aura-controller.probing", actions: "takePlan" },
            "llm.failed": { guard: "answersRequest", target: "#aura-controller.probing", actions: "takePlan" },
          },
        },
      },
    },
    // Explore: one probe at a time until the budget is spent or nothing the need requires is missing
    // (the LLM planner of a ReAct-style strategy chooses each step until it stops or falls back).
    probing: {
      initial: "deciding",
      states: {
        deciding: {
          always: [
            { guard: and(["stepsByLlm", "budgetSpent"]), target: "#aura-controller.answering" },
            { guard: "stepsByLlm", target: "awaitingModel", actions: "askStep" },
            { guard: "hasNextCall", target: "awaitingProbe", actions: "probeNext" },
            { target: "#aura-controller.answering" },
          ],
        },
        awaitingModel: {
          on: {
            "llm.completed": [
              { guard: and(["answersRequest", "plannerUnusable"]), target: "deciding", actions: "plannerFallsBack" },
              { guard: and(["answersRequest", "plannerStops"]), target: "#aura-controller.answering", actions: "plannerStops" },
              { guard: "answersRequest", target: "awaitingProbe", actions: "plannerCalls" },
            ],
            "llm.failed": { guard: "answersRequest", target: "deciding", actions: "plannerFallsBack" },
          },
        },
        awaitingProbe: {
          on: {
            "probe.answered": { guard: "answersProbe", target: "deciding", actions: "readAnswer" },
            "probe.denied": { guard: "answersProbe", target: "deciding", actions: "noteRefusal" },
          },
        },
      },
    },
    // Reason and Interact: the facts, the text (an LLM answer backend may write it) and `answer.given`.
    answering: {
      initial: "deciding",
      states: {
        deciding: {
          always: [
            { guard: "answerByLlm", target: "awaitingModel", actions: "askAnswer" },
            { target: "#aura-controller.idle", actions: "giveAnswer" },
          ],
        },
        awaitingModel: {
          on: {
            "llm.completed": { guard: "answersRequest", target: "#aura-controller.idle", actions: ["takeAnswer", "giveAnswer"] },
            "llm.failed": { guard: "answersRequest", target: "#aura-controller.idle", actions: ["takeAnswer", "giveAnswer"] },
          },
        },
      },
    },
  },
});
