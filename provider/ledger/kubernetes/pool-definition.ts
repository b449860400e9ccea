import type * as k8s from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { IpamError } from "../../core/ipam-error";
import { kubeClients, type KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/kube-errors";
import { poolLabel, poolObjectName, roleLabel, roles } from "./claim-names";
import type { KubeLedgerConfig } from "./ledger-config";
import { ledgerUnavailable } from "./ledger-unavailable";
import { ClaimStore } from "./claim-store";
import { backfillMarkers } from "./marker-backfill";
import { BlockMarkers } from "./block-markers";
import { MarkerStore } from "./marker-store";
import { warnOnce } from "../../core/warnings";
import { canonicalQuotas, quotaProblems, type PoolQuotas } from "../quota-rules";
import {
  covers,
  formatRange,
  hull,
  lengthOf,
  markerRuleOf,
  ruleRange,
  type LengthRange,
} from "./marker-range";
import { definitionFormat, droppedBy, rewrittenByEarlier, type Dropped } from "./definition-format";

/** A shared pool's definition as stored with its ledger by the first stack that used it. */
export interface StoredDefinition {
  /** Canonical JSON of the pool's ranges, exclusions, reserved addresses and strategy. */
  definition: string;
  /** The stack that wrote it, `<org>/<project>/<stack>`. */
  stack: string;
  /** URN of the IpPool that wrote it: the pool's owner. */
  owner: string;
  /**
   * The owner stack's identity (its `stackId`). Absent in a definition an earlier version wrote:
   * then the stack named `stack` with the IpPool `owner` owns it, until its next `up` records this.
   */
  ownerStackId?: string;
  /** The quotas the owner set (see quota-rules.ts), when it set any. */
  quotas?: PoolQuotas;
  /**
   * Which setting of the quotas this is: new at every write that changes them (a removal followed
   * by a restore of the same rule included), so a quota counter knows whether it counts under it.
   * Absent where an earlier version wrote the quotas (their text is their version then).
   */
  quotasVersion?: string;
  /**
   * The prefix lengths at which every entry of the pool registers in the markers of the blocks
   * around it (see block-markers.ts): stored with a rule that has min and max, never shrunk.
   */
  markers?: LengthRange;
  /** The lengths whose markers are complete, where blocks may be claimed. */
  markersReady?: LengthRange;
  /** Its format (see definition-format.ts): 0 where it was written before formats. */
  format: number;
  /**
   * What an earlier version dropped when it rewrote it (see definition-format.ts); only read with
   * `repairing`, else such a definition is refused.
   */
  dropped?: Dropped[];
  resourceVersion: string;
}

/** What a stack's IpPool brings: its canonical definition and who it is. */
export interface DefinitionClaim {
  definition: string;
  /** The stack, `<org>/<project>/<stack>`. */
  stack: string;
  /** The IpPool's `poolId`. */
  owner: string;
  /** The stack's identity: what ownership is recorded by. */
  stackId?: string;
  /** The quotas this pool sets (canonical JSON, see quota-rules.ts), when it sets any. */
  quotas?: string;
}

/** How a stack's IpPool stands to a shared pool: its owner, or a member that restates its definition. */
export interface Standing {
  role: "owner" | "member";
  /** The owner as messages and the `ownedBy` output name it: `stack <stack> (<urn>)`. */
  ownedBy: string;
  /** An owner whose definition differs from the stored one: a change every stack's holders must fit. */
  redefines?: boolean;
  /**
   * An owner whose stored definition is not in this version's format (written before formats, or
   * rewritten by an earlier version): its `up` writes it again, even with nothing else to change.
   */
  rewrites?: boolean;
}

/** Settings of {@link PoolDefinitions.agree}. */
export interface AgreeOptions {
  /** Take ownership of the pool from the stack that owns it (the IpPool's `adopt`). */
  adopt?: boolean;
  /** Only decide and refuse (at `check`, which previews run too): what every stack reads changes at `up`. */
  readOnly?: boolean;
}

/** `stack <stack> (<urn>)`: how the owner of a definition is named. */
export const ownerOf = (d: { stack: string; owner: string }): string => `stack ${d.stack} (${d.owner})`;

/**
 * Whether `mine` is the owner of `stored`: the same IpPool of the same stack identity. A definition
 * an earlier version wrote records no identity: the stack of its name with that IpPool owns it.
 */
export function ownsDefinition(stored: StoredDefinition, mine: DefinitionClaim): boolean {
  if (stored.owner !== mine.owner) return false;
  return stored.ownerStackId === undefined
    ? stored.stack === mine.stack
    : stored.ownerStackId === mine.stackId;
}

/**
 * The definition object (a ConfigMap `<name>.pool`) of a shared pool: written by the stack that owns
 * the pool (the first one to store it, or one that takes ownership with `adopt`), read by its
 * tenants, compared with every stack that restates it.
 */
export class PoolDefinitions {
  private readonly clients: KubeClients;
  private readonly name: string;

  /** @param config - the pool's ledger settings; @param clients - default: the context's clients. */
  constructor(
    private readonly config: KubeLedgerConfig,
    clients?: KubeClients,
  ) {
    this.clients = clients ?? kubeClients(config);
    this.name = poolObjectName(config.name);
  }

  private get place() {
    return { server: this.clients.server, context: this.clients.context, namespace: this.config.namespace };
  }

  /**
   * The stored definition, or undefined when no stack has written one yet.
   * @param options.repairing - return one an earlier version rewrote (with what it `dropped`), for
   *   its owner to write again, instead of refusing it.
   * @throws IpamError VERSION_MISMATCH for a newer format, or (unless `repairing`) a definition an
   *   earlier version rewrote (see definition-format.ts); LEDGER_UNAVAILABLE.
   */
  async read(options: { repairing?: boolean } = {}): Promise<StoredDefinition | undefined> {
    let cm: k8s.V1ConfigMap;
    try {
      cm = await this.clients.core.readNamespacedConfigMap({
        name: this.name,
        namespace: this.config.namespace,
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw ledgerUnavailable(`reading the definition of pool "${this.config.name}"`, err, this.place);
    }
    const d = cm.data ?? {};
    const { name: pool, namespace } = this.config;
    const dropped = await droppedBy({ clients: this.clients, namespace, pool, data: d });
    if (dropped.length > 0 && !options.repairing) throw rewrittenByEarlier(pool, namespace, d, dropped);
    const { markers, ready } = markerRuleOf(d);
    return {
      definition: d.definition ?? "",
      stack: d.stack ?? "?",
      owner: d.owner ?? "?",
      ...(d.ownerStackId ? { ownerStackId: d.ownerStackId } : {}),
      ...(d.quotas ? { quotas: storedQuotas(this.config.name, d.quotas) } : {}),
      ...(d.quotas && d.quotasVersion ? { quotasVersion: d.quotasVersion } : {}),
      ...(markers ? { markers } : {}),
      ...(ready ? { markersReady: ready } : {}),
      format: d.format === undefined ? 0 : definitionFormat,
      ...(dropped.length > 0 ? { dropped } : {}),
      resourceVersion: cm.metadata?.resourceVersion ?? "",
    };
  }

  /**
   * Makes the pool's stored definition agree with `mine`, and says how `mine` stands to it.
   *
   * - No definition stored: `mine` is written, and its stack owns the pool.
   * - `mine` owns it (see {@link ownsDefinition}), or takes ownership (`adopt`): its definition,
   *   quotas and identity are written when they differ. Whether a change strands a holder of any
   *   stack is the IpPool's check, before this.
   * - Otherwise `mine` is a member: its definition must be the stored one, and it sets no quotas.
   *
   * With `readOnly` (at `check`) it only decides and refuses. A definition whose `prefixLengths`
   * rule has min and max needs markers at those lengths: the marker range is stored (grown, never
   * shrunk) with the definition, then every entry the pool has is registered at it, then it is
   * marked ready, where blocks may be claimed (see marker-backfill.ts). An interrupted update is
   * finished by the next one of the same definition.
   *
   * A definition not in this version's format is written again by its owner (or a stack taking
   * ownership) with it; where an earlier version rewrote it (see definition-format.ts), with the
   * marker range the pool's markers show (registered again before blocks may be claimed) and the
   * owner's quotas under a new version (their counters count again).
   * @throws IpamError INVALID_CONFIG naming both definitions and the owner for a member that
   *   differs, or a member that sets quotas; VERSION_MISMATCH for a newer format, or for a member
   *   where an earlier version rewrote it; LEDGER_UNAVAILABLE.
   */
  async agree(mine: DefinitionClaim, options: AgreeOptions = {}): Promise<Standing> {
    const needed = ruleRange(markerRuleOf({ definition: mine.definition }).rule);
    for (let attempt = 0; attempt < 5; attempt++) {
      let stored = await this.read({ repairing: true });
      const own: Standing = {
        role: "owner",
        ownedBy: ownerOf(mine),
        ...(stored && stored.definition !== mine.definition ? { redefines: true } : {}),
        ...(stored && stored.format !== definitionFormat ? { rewrites: true } : {}),
      };
      let wrote = false;
      if (stored && !options.adopt && !ownsDefinition(stored, mine)) return this.member(stored, mine);
      if (!stored || !sameRecord(stored, mine)) {
        if (options.readOnly) return own;
        const markers = hull(hull(stored?.markers, needed), await this.markersDropped(stored));
        stored = await this.write(mine, stored, markers);
        if (!stored) continue; // another stack wrote it meanwhile
        wrote = true;
      }
      if (options.readOnly) return own;
      if (needed && !covers(stored.markersReady, needed)) {
        if (!(await this.readyMarkers(mine, stored, needed))) continue;
        wrote = true;
      }
      if (wrote && hull(stored.markers, needed)) await this.sweep();
      return own;
    }
    throw new IpamError("CONFLICT", `the definition of pool "${this.config.name}" kept changing; try again`);
  }

  /** A stack that restates a pool it does not own: it must state exactly the stored definition. */
  private member(stored: StoredDefinition, mine: DefinitionClaim): Standing {
    if (stored.dropped) {
      const data = { stack: stored.stack, owner: stored.owner };
      throw rewrittenByEarlier(this.config.name, this.config.namespace, data, stored.dropped);
    }
    if (mine.quotas !== undefined) {
      throw new IpamError(
        "INVALID_CONFIG",
        `pool "${this.config.name}" in namespace "${this.config.namespace}" is owned by ${ownerOf(stored)}, ` +
          `and only its owner sets quotas: leave quotas out here, or take ownership with adopt: true`,
      );
    }
    if (stored.definition !== mine.definition) throw mismatch(this.config, stored, mine.definition);
    return { role: "member", ownedBy: ownerOf(stored) };
  }

  /**
   * The lengths of the pool's markers where an earlier version's rewrite dropped the marker range:
   * written again with the definition (the range never shrinks, so blocks claimed under it stay
   * guarded), then registered again (backfilled) before blocks may be claimed.
   */
  private async markersDropped(stored: StoredDefinition | undefined): Promise<LengthRange | undefined> {
    if (!stored?.dropped?.includes("markers")) return undefined;
    const store = new ClaimStore(this.clients, this.config.namespace, this.config.name);
    const lengths = (await new MarkerStore(store).list()).map((m) => lengthOf(m.block)).filter((n) => n > 0);
    return lengths.length > 0 ? { min: Math.min(...lengths), max: Math.max(...lengths) } : undefined;
  }

  /**
   * Collects the markers that interrupted releases left (see BlockMarkers.sweep): at each update of
   * a pool that keeps markers. A failure is warned about, never fatal: the markers are harmless.
   */
  private async sweep(): Promise<void> {
    const store = new ClaimStore(this.clients, this.config.namespace, this.config.name);
    await new BlockMarkers(new MarkerStore(store)).sweep().catch((e: unknown) => {
      warnOnce(`collecting the unused markers of pool "${this.config.name}" failed: ${(e as Error).message}`);
    });
  }

  /**
   * Writes `mine` over `stored` (creates it when undefined), with the marker range `markers` and
   * the ready range as stored. The definition as written; undefined when another write came first.
   */
  private async write(
    mine: DefinitionClaim,
    stored: StoredDefinition | undefined,
    markers: LengthRange | undefined,
  ): Promise<StoredDefinition | undefined> {
    const quotasVersion = versionOf(stored, mine);
    const body = this.body(mine, stored?.resourceVersion, markers, stored?.markersReady, quotasVersion);
    try {
      const written = stored
        ? await this.clients.core.replaceNamespacedConfigMap({
            name: this.name,
            namespace: this.config.namespace,
            body,
          })
        : await this.clients.core.createNamespacedConfigMap({ namespace: this.config.namespace, body });
      return {
        definition: mine.definition,
        stack: mine.stack,
        owner: mine.owner,
        ...(mine.stackId ? { ownerStackId: mine.stackId } : {}),
        ...(mine.quotas ? { quotas: JSON.parse(mine.quotas) as PoolQuotas } : {}),
        ...(quotasVersion ? { quotasVersion } : {}),
        ...(markers ? { markers } : {}),
        ...(markers && stored?.markersReady ? { markersReady: stored.markersReady } : {}),
        format: definitionFormat,
        resourceVersion: written.metadata?.resourceVersion ?? "",
      };
    } catch (err) {
      if (isAlreadyExists(err) || isConflict(err)) return undefined;
      throw ledgerUnavailable(`writing the definition of pool "${this.config.name}"`, err, this.place);
    }
  }

  /**
   * Registers every entry of the pool at the stored marker range (grown to `needed` first where an
   * earlier version stored the definition without it) and marks it ready. False when the definition
   * changed meanwhile (the caller reads it again).
   */
  private async readyMarkers(
    mine: DefinitionClaim,
    stored: StoredDefinition,
    needed: LengthRange,
  ): Promise<boolean> {
    let rv = stored.resourceVersion;
    const markers = hull(stored.markers, needed)!;
    try {
      if (!covers(stored.markers, needed))
        rv = await this.replace(this.body(mine, rv, markers, stored.markersReady, stored.quotasVersion));
      await backfillMarkers(new ClaimStore(this.clients, this.config.namespace, this.config.name), markers);
      await this.replace(this.body(mine, rv, markers, markers, stored.quotasVersion));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Replaces the definition object with `body` (carrying the resourceVersion read); its new resourceVersion. */
  private async replace(body: k8s.V1ConfigMap): Promise<string> {
    try {
      const written = await this.clients.core.replaceNamespacedConfigMap({
        name: this.name,
        namespace: this.config.namespace,
        body,
      });
      return written.metadata?.resourceVersion ?? "";
    } catch (err) {
      if (isConflict(err) || isNotFound(err))
        throw Object.assign(new Error("definition changed"), { code: 409 });
      throw ledgerUnavailable(`writing the definition of pool "${this.config.name}"`, err, this.place);
    }
  }

  private body(
    mine: DefinitionClaim,
    resourceVersion?: string,
    markers?: LengthRange,
    ready?: LengthRange,
    quotasVersion?: string,
  ): k8s.V1ConfigMap {
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: this.name,
        namespace: this.config.namespace,
        labels: { [poolLabel]: this.config.name, [roleLabel]: roles.pool },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      data: {
        format: String(definitionFormat),
        definition: mine.definition,
        stack: mine.stack,
        owner: mine.owner,
        ...(mine.stackId ? { ownerStackId: mine.stackId } : {}),
        ...(mine.quotas ? { quotas: mine.quotas } : {}),
        ...(mine.quotas && quotasVersion ? { quotasVersion } : {}),
        written: new Date().toISOString(),
        // Kept through every later definition: entries keep registering where blocks were allowed.
        ...(markers ? { markers: formatRange(markers) } : {}),
        ...(markers && ready ? { markersReady: formatRange(ready) } : {}),
      },
    };
  }
}

function mismatch(config: KubeLedgerConfig, stored: StoredDefinition, mine: string): IpamError {
  return new IpamError(
    "INVALID_CONFIG",
    `pool "${config.name}" in namespace "${config.namespace}" is shared, and its stored definition ` +
      `${stored.definition} (written by ${ownerOf(stored)}, which owns it) differs from this ` +
      `stack's ${mine}; reference the pool with IpPool.shared(name, { ledger }) to follow its owner's ` +
      `definition, or state exactly the stored one; only the owner changes it (another stack takes ` +
      `ownership with adopt: true)`,
  );
}

/**
 * The version of the quotas `mine` writes over `stored`: the stored one while they stay the same,
 * a new one when they change (from none too: counters that counted under an earlier setting of the
 * same rule do not count under this one, see quota-counter.ts). None when `mine` sets none.
 */
function versionOf(stored: StoredDefinition | undefined, mine: DefinitionClaim): string | undefined {
  if (mine.quotas === undefined) return undefined;
  if (stored?.quotas !== undefined && canonicalQuotas(stored.quotas) === mine.quotas)
    return stored.quotasVersion;
  return `${new Date().toISOString()}/${randomBytes(4).toString("hex")}`;
}

/** Whether `stored` records exactly `mine` (its definition, quotas and owner) in this version's format. */
function sameRecord(stored: StoredDefinition, mine: DefinitionClaim): boolean {
  return (
    stored.format === definitionFormat &&
    stored.definition === mine.definition &&
    stored.stack === mine.stack &&
    stored.owner === mine.owner &&
    stored.ownerStackId === mine.stackId &&
    canonicalQuotas(stored.quotas) === mine.quotas
  );
}

/** The stored quotas. @throws IpamError INVALID_STATE when they are not what this package writes. */
function storedQuotas(pool: string, text: string): PoolQuotas {
  try {
    const q = JSON.parse(text) as PoolQuotas;
    if (quotaProblems(q).length === 0) return q;
  } catch {
    // reported below
  }
  throw new IpamError(
    "INVALID_STATE",
    `the quotas stored with pool "${pool}" (${JSON.stringify(text.slice(0, 80))}) are not valid: ` +
      `its owner's next pulumi up writes them again`,
  );
}
