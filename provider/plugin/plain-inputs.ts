import * as pulumi from "@pulumi/pulumi";
import { codedMessage, IpamError } from "../core/ipam-error";
import { hasUnknown, isUnknown } from "../core/unknowns";
import type { Props } from "../resources/provider-props";

// The inputs the TypeScript API takes only as plain values (no `pulumi.Input` around them) are
// `plain` in the plugin's schema (scripts/plugin-schema.mjs), so the SDKs type them as plain values.
// Nothing stops a program giving an output anyway (Python does not check types; YAML passes
// outputs to anything): here the plugin refuses, naming the input, what its code cannot use.

/** A property of the plugin's schema, as far as being plain goes. */
export interface PlainSpec {
  plain?: boolean;
  $ref?: string;
  items?: PlainSpec;
  additionalProperties?: PlainSpec;
}

/** The plain inputs of each resource of a package schema (JSON text), by type token. */
export function plainInputs(schema: string): Map<string, Record<string, PlainSpec>> {
  const parsed = JSON.parse(schema) as {
    resources?: Record<string, { inputProperties?: Record<string, PlainSpec> }>;
  };
  const out = new Map<string, Record<string, PlainSpec>>();
  for (const [token, r] of Object.entries(parsed.resources ?? {})) {
    const plain = Object.entries(r.inputProperties ?? {}).filter(([, p]) => p.plain === true);
    if (plain.length > 0) out.set(token, Object.fromEntries(plain));
  }
  return out;
}

// An Output's state; the SDK keeps it on the instance without declaring it.
type OutputState = { isKnown: Promise<boolean>; promise(): Promise<unknown> };
const secretSig = "1b47061264138c4ac30d75fd1eb44270";
const isRpcSecret = (v: unknown): boolean =>
  typeof v === "object" &&
  v !== null &&
  (v as Record<string, unknown>)["4dabf18193072939515e22adb298388d"] === secretSig;

const refusal = (kind: string, name: string, path: string, what: string) =>
  new IpamError(
    "INVALID_INPUT",
    codedMessage(
      "INVALID_INPUT",
      `${kind} "${name}": ${path} is ${what}: it decides what the ${kind} is made of (its children, their ` +
        `names and number), so it must be known when the program runs: give it as a plain value (a literal, ` +
        `or a config value that is not secret), as the schema types it`,
    ),
  );

/**
 * The construct's input `value` of the plain property `spec` as a plain value: an output known and
 * not secret (the SDK wraps a value that depends on resources, such as a map of pools, in one) by
 * its value, looking inside where the schema's items are plain too (and everywhere in an `Any`,
 * resources excepted).
 * @throws IpamError INVALID_INPUT naming the input (`failureDomains[0]`) for an output not known yet or a secret.
 */
async function plainValue(
  value: unknown,
  spec: PlainSpec,
  at: string,
  kind: string,
  name: string,
): Promise<unknown> {
  if (isUnknown(value)) throw refusal(kind, name, at, "an output not known at preview");
  if (isRpcSecret(value)) throw refusal(kind, name, at, "a secret");
  if (pulumi.Output.isInstance(value)) {
    const state = value as unknown as OutputState;
    if (!(await state.isKnown)) throw refusal(kind, name, at, "an output not known at preview");
    if (await pulumi.isSecret(value)) throw refusal(kind, name, at, "a secret");
    return plainValue(await state.promise(), spec, at, kind, name);
  }
  if (pulumi.Resource.isInstance(value) || value === null || typeof value !== "object") return value;
  const any = spec.$ref === "pulumi.json#/Any";
  if (Array.isArray(value)) {
    const of = any ? spec : spec.items;
    if (!of?.plain) return value;
    return Promise.all(value.map((item, i) => plainValue(item, of, `${at}[${i}]`, kind, name)));
  }
  const of = any ? spec : spec.additionalProperties;
  if (!of?.plain) return value;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(value))
    out[k] = await plainValue(item, of, `${at}.${k}`, kind, name);
  return out;
}

/**
 * A component's inputs with each plain one (`specs`) made a plain value, the others as given.
 * @throws IpamError INVALID_INPUT naming the first plain input given as an output not known yet or a secret.
 */
export async function plainConstructInputs(
  kind: string,
  name: string,
  inputs: Record<string, unknown>,
  specs: Record<string, PlainSpec>,
): Promise<Record<string, unknown>> {
  const out = { ...inputs };
  for (const [key, spec] of Object.entries(specs)) {
    if (inputs[key] !== undefined) out[key] = await plainValue(inputs[key], spec, key, kind, name);
  }
  return out;
}

/**
 * The plain inputs of a custom resource (`specs`) that are not known yet (at preview, outputs of
 * resources still to be created), as check failures: its provider reads them as values, and
 * TypeScript gives only values there.
 */
export function unknownPlainInputs(
  kind: string,
  inputs: Props,
  specs: Record<string, PlainSpec> | undefined,
): { property: string; reason: string }[] {
  return Object.keys(specs ?? {})
    .filter((key) => hasUnknown(inputs[key]))
    .map((key) => ({
      property: key,
      reason: codedMessage(
        "INVALID_INPUT",
        `${key} of ${kind} is an output not known at preview: the ${kind} is planned from it, so it must be ` +
          `known when the program runs: give it as a plain value, as the schema types it`,
      ),
    }));
}
