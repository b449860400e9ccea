import { isUnknown } from "../core/unknowns";

// The engine's encodings in the property values it sends a plugin that accepts secrets, resource
// references and output values (what `@pulumi/pulumi/provider` announces): an object with this
// key, whose value says what the object is.
const signatureKey = "4dabf18193072939515e22adb298388d";
const secretSig = "1b47061264138c4ac30d75fd1eb44270";
const resourceSig = "5cf8f73096256a8f31e491e813e4eb8e";
const outputSig = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
/** The engine's value for an input not known yet (the same one dynamic providers receive). */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A resource reference as it arrives: the resource's URN and, when known, its ID. */
export interface ResourceRef {
  urn: string;
  id?: string;
}

/** Property values as the resource providers of this package take them, with what was unwrapped. */
export interface Unwrapped {
  /** Plain JSON: secrets by their value, outputs by their value or {@link unknownValue}, references by their URN. */
  value: Record<string, unknown>;
  /** Every string that was secret (inside a secret or a secret output), to wrap again on the way out. */
  secrets: Set<string>;
  /** The references, by the dotted path of the property that held them (`pool`, `after`). */
  refs: Map<string, ResourceRef>;
}

/**
 * Property values as the engine sends them to a plugin, made plain in one place: what every
 * provider method of the plugin receives first (see {@link toWire} for the way back).
 */
export function unwrap(props: Record<string, unknown> | undefined): Unwrapped {
  const secrets = new Set<string>();
  const refs = new Map<string, ResourceRef>();
  const walk = (v: unknown, path: string, secret: boolean): unknown => {
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${path}[${i}]`, secret));
    if (v === null || typeof v !== "object") {
      if (secret && typeof v === "string" && !isUnknown(v)) secrets.add(v);
      return v;
    }
    const o = v as Record<string, unknown>;
    switch (o[signatureKey]) {
      case secretSig:
        return walk(o.value, path, true);
      case outputSig:
        return "value" in o ? walk(o.value, path, secret || o.secret === true) : unknownValue;
      case resourceSig: {
        const urn = String(o.urn);
        const id = typeof o.id === "string" && o.id !== "" && !isUnknown(o.id) ? o.id : undefined;
        refs.set(path, id === undefined ? { urn } : { urn, id });
        return urn;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(o)) out[k] = walk(item, path === "" ? k : `${path}.${k}`, secret);
    return out;
  };
  return { value: walk(props ?? {}, "", false) as Record<string, unknown>, secrets, refs };
}

/**
 * Values as the engine takes them back from a plugin: every string in `secrets` wrapped as a
 * secret, so a value that was secret where it came in (a ledger's kubeconfig) stays one in the
 * inputs and outputs the engine stores, wherever the provider put it, but in the top-level
 * properties `plain` names (an allocation's record, which must stay readable); and no `undefined`,
 * which the wire format has no value for (a property left undefined is left out, as a dynamic
 * provider's results are serialized; one in a list is null).
 */
export function toWire<T>(props: T, secrets: ReadonlySet<string>, plain: ReadonlySet<string> = new Set()): T {
  const walk = (v: unknown, keep: boolean): unknown => {
    if (typeof v === "string") return secrets.has(v) && !keep ? { [signatureKey]: secretSig, value: v } : v;
    if (Array.isArray(v)) return v.map((item) => (item === undefined ? null : walk(item, keep)));
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) if (item !== undefined) out[k] = walk(item, keep);
    return out;
  };
  if (props === null || typeof props !== "object" || Array.isArray(props)) return walk(props, false) as T;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(props)) if (item !== undefined) out[k] = walk(item, plain.has(k));
  return out as T;
}
