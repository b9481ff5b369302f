// The hand-written example tasks (data/household/), by id: a config names one as `{"task": "<id>"}`.
// Imported as modules, so resolving a config reads no file.
import laundryDay from "../../data/household/laundry-day.json" with { type: "json" };
import pantrySwitch from "../../data/household/pantry-switch.json" with { type: "json" };
import teaForTwo from "../../data/household/tea-for-two.json" with { type: "json" };

export const EXAMPLE_TASKS: Readonly<Record<string, unknown>> = {
  "tea-for-two": teaForTwo,
  "pantry-switch": pantrySwitch,
  "laundry-day": laundryDay,
};

export const DEFAULT_TASK = "tea-for-two";
