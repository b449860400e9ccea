import { inputFailure, type Failure } from "../core/failure";
import { shown } from "../core/text";
import { isUnknown } from "../core/unknowns";

// The shape of a resource's inputs, checked first at `check`: every value's type, list or object
// form and length, before any other code reads it. Values reach `check` from stack config, Pulumi
// YAML, JSON files and other resources' outputs, where TypeScript's types protect nothing; a value
// of the wrong shape gets a failure naming its property path (`ranges[1].rangeStart`), what was
// expected, and a bounded rendering of what was given, instead of a TypeError from deeper code.

/** What an input may be. */
export type Shape =
  | { kind: "string"; what: string; max: number }
  | { kind: "boolean" }
  | { kind: "integer"; what: string }
  | { kind: "list"; what: string; of: Shape; max: number }
  | { kind: "map"; what: string; of: Shape }
  | {
      kind: "object";
      what: string;
      fields: Record<string, Shape>;
      required: readonly string[];
      open: boolean;
    };

/**
 * A string of at most `max` characters (default 253, a DNS name's limit).
 * @param what - what it is, for messages, e.g. `an IPv4 or IPv6 address`.
 */
export const text = (what: string, max = 253): Shape => ({ kind: "string", what, max });

/** A whole number (what it is, for messages: e.g. `a prefix length such as 24`). */
export const integer = (what: string): Shape => ({ kind: "integer", what });

/** `true` or `false`. */
export const flag: Shape = { kind: "boolean" };

/** A list of at most `max` items (default 10,000) of `of`. */
export const listOf = (what: string, of: Shape, max = 10_000): Shape => ({ kind: "list", what, of, max });

/** An object whose every value is `of` (labels, tags, statics). */
export const mapOf = (what: string, of: Shape): Shape => ({ kind: "map", what, of });

/**
 * An object with `fields` (each optional unless named in `required`). `open`: other fields are
 * allowed (and left to the code that reads them); otherwise each is refused, naming the fields.
 */
export const record = (
  what: string,
  fields: Record<string, Shape>,
  options: { required?: readonly string[]; open?: boolean } = {},
): Shape => ({ kind: "object", what, fields, required: options.required ?? [], open: options.open ?? false });

const typeName = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Joins a property path: `ranges` + 1 → `ranges[1]`, `ledger` + `name` → `ledger.name`. */
const join = (at: string, key: string | number): string =>
  typeof key === "number" ? `${at}[${key}]` : at === "" ? key : `${at}.${key}`;

/** At most this many failures per resource: the first ones say what to fix. */
const maxFailures = 20;

/**
 * The failures of `value` against `shape`, each under its property path below `at`. An optional
 * field may be undefined (Pulumi drops it) or null (an output that resolved to nothing).
 */
export function shapeFailures(value: unknown, shape: Shape, at = ""): Failure[] {
  const failures: Failure[] = [];
  visit(value, shape, at, failures);
  return failures.slice(0, maxFailures);
}

function visit(value: unknown, shape: Shape, at: string, out: Failure[]): void {
  // Not known yet (preview of a value another resource makes): checked when it is known.
  if (out.length >= maxFailures || isUnknown(value)) return;
  const fail = (expected: string) =>
    out.push(inputFailure(at || "inputs", `must be ${expected}; got ${shown(value)}`));
  switch (shape.kind) {
    case "boolean":
      if (typeof value !== "boolean") fail("true or false");
      return;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) fail(`${shape.what} (a whole number)`);
      return;
    case "string":
      if (typeof value !== "string") return void fail(`${shape.what} (a string), not ${typeName(value)}`);
      if (value.length > shape.max)
        fail(`${shape.what} of at most ${shape.max} characters (got ${value.length})`);
      return;
    case "list":
      if (!Array.isArray(value)) return void fail(`${shape.what} (a list), not ${typeName(value)}`);
      if (value.length > shape.max)
        return void fail(`${shape.what} of at most ${shape.max} items (got ${value.length})`);
      value.forEach((item, i) => visit(item, shape.of, join(at, i), out));
      return;
    case "map":
      if (!isPlainObject(value))
        return void fail(`${shape.what} (an object of names to values), not ${typeName(value)}`);
      for (const [k, v] of Object.entries(value)) visit(v, shape.of, join(at, k), out);
      return;
    case "object": {
      if (!isPlainObject(value)) return void fail(`${shape.what} (an object), not ${typeName(value)}`);
      for (const key of shape.required) {
        if (value[key] === undefined || value[key] === null) {
          out.push(inputFailure(join(at, key), `is required: give ${describe(shape.fields[key]!)}`));
        }
      }
      for (const [key, v] of Object.entries(value)) {
        const field = shape.fields[key];
        if (field) {
          if (v !== undefined && v !== null) visit(v, field, join(at, key), out);
        } else if (!shape.open) {
          out.push(
            inputFailure(
              join(at, shown(key).slice(1, -1) || '""'),
              `is not a setting of ${shape.what}; it takes ${Object.keys(shape.fields).join(", ")}`,
            ),
          );
        }
      }
      return;
    }
  }
}

/** What a shape expects, for a `required` message. */
const describe = (shape: Shape): string => (shape.kind === "boolean" ? "true or false" : shape.what);
