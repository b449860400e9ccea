/** A `check` failure: the property path and what to do about it. */
export interface Failure {
  property: string;
  reason: string;
}

/** The text of a thrown value, for check failures and error messages. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));
