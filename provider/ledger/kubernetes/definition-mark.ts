// What a hold records of the shared pool definition it was planned under: a short digest of the
// canonical definition text, so that a claim is made of it only under that same definition.
import { createHash } from "node:crypto";

/** The mark of a pool's canonical definition text (16 hex digits of its SHA-256). */
export const definitionMark = (definition: string): string =>
  createHash("sha256").update(definition).digest("hex").slice(0, 16);
