// What a program in another language gives the plugin's resources, judged against the plugin's
// schema (provider/plugin/schema.json): every property it sets is one the schema has, with a value
// of the schema's type, and no required one is missing. The docs tests judge the YAML blocks and
// what the Python blocks register under mocks with it.
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "./markdown";

/** A property as the schema gives it. */
interface PropertySpec {
  type?: string;
  $ref?: string;
  items?: PropertySpec;
  additionalProperties?: PropertySpec;
}

/** An object type, or a resource's inputs, as the schema gives them. */
interface ObjectSpec {
  properties: Record<string, PropertySpec>;
  required: string[];
}

/** The parts of the plugin's package schema the checks read. */
export interface PackageSchema {
  name: string;
  types: Record<string, { properties?: Record<string, PropertySpec>; required?: string[] }>;
  resources: Record<
    string,
    {
      inputProperties?: Record<string, PropertySpec>;
      requiredInputs?: string[];
      properties?: Record<string, PropertySpec>;
    }
  >;
}

/** The plugin's schema as the checkout has it now. */
export function pluginSchema(): PackageSchema {
  const file = path.join(repoRoot, "provider", "plugin", "schema.json");
  return JSON.parse(fs.readFileSync(file, "utf8")) as PackageSchema;
}

/**
 * The full type token of a resource type as a program writes it (YAML also takes the short form
 * `egress-ipam:IpPool` for `egress-ipam:index:IpPool`), or undefined for another package's type.
 */
export function resourceToken(schema: PackageSchema, type: string): string | undefined {
  const parts = type.split(":");
  if (parts[0] !== schema.name) return undefined;
  return parts.length === 2 ? `${parts[0]}:index:${parts[1]}` : type;
}

/**
 * How the check sees a value it cannot judge by itself: the type token of the resource it refers
 * to, `"unknown"` for a value only the engine knows (an interpolation, another resource's output),
 * or undefined for a literal.
 */
export type Resolve = (value: unknown) => string | "unknown" | undefined;

const plainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The problems of the inputs `props` given to a resource of type `token`, each naming the property
 * path, e.g. `ranges[0].rangeStrat: not an input of egress-ipam:index:IpPoolRange`.
 */
export function inputProblems(
  schema: PackageSchema,
  token: string,
  props: Record<string, unknown>,
  resolve: Resolve = () => undefined,
): string[] {
  const resource = schema.resources[token];
  if (!resource) return [`${token}: no such resource in the ${schema.name} schema`];
  const spec = { properties: resource.inputProperties ?? {}, required: resource.requiredInputs ?? [] };
  return objectProblems(schema, spec, token, props, "", resolve);
}

function objectProblems(
  schema: PackageSchema,
  spec: ObjectSpec,
  what: string,
  value: Record<string, unknown>,
  at: string,
  resolve: Resolve,
): string[] {
  const problems: string[] = [];
  for (const required of spec.required) {
    if (value[required] === undefined) problems.push(`${at}${required}: required by ${what}, missing`);
  }
  for (const [key, v] of Object.entries(value)) {
    const property = spec.properties[key];
    if (!property) problems.push(`${at}${key}: not an input of ${what}`);
    else problems.push(...valueProblems(schema, property, v, `${at}${key}`, resolve));
  }
  return problems;
}

function valueProblems(
  schema: PackageSchema,
  spec: PropertySpec,
  value: unknown,
  at: string,
  resolve: Resolve,
): string[] {
  const resolved = resolve(value);
  const ref = spec.$ref;
  if (ref?.startsWith("#/resources/")) {
    const wanted = ref.slice("#/resources/".length);
    if (resolved === "unknown") return [];
    return resolved === wanted
      ? []
      : [`${at}: a reference to ${wanted}, not ${resolved ?? JSON.stringify(value)}`];
  }
  if (resolved !== undefined || value === null) return [];
  const not = (type: string) => [`${at}: not ${type}: ${JSON.stringify(value)}`];
  if (ref?.startsWith("#/types/")) {
    const type = schema.types[ref.slice("#/types/".length)];
    if (!type) return [`${at}: the schema has no type ${ref}`];
    if (!plainObject(value)) return not("an object");
    const object = { properties: type.properties ?? {}, required: type.required ?? [] };
    return objectProblems(schema, object, ref.slice("#/types/".length), value, `${at}.`, resolve);
  }
  switch (spec.type) {
    case "string":
      return typeof value === "string" ? [] : not("a string");
    case "number":
    case "integer":
      return typeof value === "number" ? [] : not("a number");
    case "boolean":
      return typeof value === "boolean" ? [] : not("a boolean");
    case "array":
      if (!Array.isArray(value)) return not("a list");
      return value.flatMap((v, i) => valueProblems(schema, spec.items ?? {}, v, `${at}[${i}]`, resolve));
    case "object":
      if (!plainObject(value)) return not("an object");
      return Object.entries(value).flatMap(([k, v]) =>
        valueProblems(schema, spec.additionalProperties ?? {}, v, `${at}.${k}`, resolve),
      );
    default:
      return []; // pulumi.json#/Any: a provisioner's settings, checked by the plugin at preview
  }
}
