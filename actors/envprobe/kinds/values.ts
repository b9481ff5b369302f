// Field values shared by the world kinds: the unknown marker, where a held object is, and the
// inventory field's encoding. Kind-specific names (rooms, nodes, tool inputs) are in the kind's
// own module.

/** Value of a field the agent does not know. Never equal to a world value. */
export const UNKNOWN = "?";
/** Where a held object is. */
export const HELD = "inv";

/** The held items as a field value: sorted and joined by `,`, or `-` for none. */
export const inventoryValue = (held: readonly string[]): string => (held.length === 0 ? "-" : [...held].sort().join(","));
export const parseInventory = (value: string): string[] => (value === "-" || value === UNKNOWN ? [] : value.split(","));
