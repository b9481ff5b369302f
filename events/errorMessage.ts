// An error's text, whatever was thrown: a caught value is `unknown`, and casting it to Error read
// `undefined` from a thrown string or object.

/** An error's message, or the thrown value as text when it is not an Error. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
