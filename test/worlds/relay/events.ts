// The relay world's one record type: a counter tells the tally what it counted this tick.
import { Schema } from "effect";
import type { KernelEntries } from "../../../events/catalogue.ts";

export const RelayCounted = Schema.Struct({ counter: Schema.Int, value: Schema.Int });

export const relayEvents = {
  "relay.counted": { version: 1, payload: RelayCounted },
} as const;

export type RelayEntries = KernelEntries & typeof relayEvents;
