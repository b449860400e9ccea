// The value the engine sends for inputs not known yet (outputs of resources still to be created).
const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Whether a value, or anything inside it, is not known yet (preview of a dependent resource). */
export function hasUnknown(value: unknown): boolean {
  if (value === unknown) return true;
  if (Array.isArray(value)) return value.some(hasUnknown);
  if (value && typeof value === "object") return Object.values(value).some(hasUnknown);
  return false;
}

/** Whether `value` itself is the engine's not-yet-known value (not looking inside it). */
export const isUnknown = (value: unknown): boolean => value === unknown;
