import type * as k8s from "@kubernetes/client-node";
import { IpamError } from "../../core/ipam-error";
import { kubeClients, type KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/kube-errors";
import { poolLabel, poolObjectName, roleLabel, roles } from "./claim-names";
import type { KubeLedgerConfig } from "./kube-ledger";
import { ledgerUnavailable } from "./ledger-unavailable";
import { ClaimStore } from "./claim-store";
import { backfillMarkers } from "./marker-backfill";
import { BlockMarkers } from "./block-markers";
import { MarkerStore } from "./marker-store";
import { warnOnce } from "../../core/warnings";
import { covers, formatRange, hull, markerRuleOf, ruleRange, type LengthRange } from "./marker-range";

/** A shared pool's definition as stored with its ledger by the first stack that used it. */
export interface StoredDefinition {
  /** Canonical JSON of the pool's ranges, exclusions, reserved addresses and strategy. */
  definition: string;
  /** The stack that wrote it, `<org>/<project>/<stack>`. */
  stack: string;
  /** URN of the IpPool that wrote it. */
  owner: string;
  /**
   * The prefix lengths at which every entry of the pool registers in the markers of the blocks
   * around it (see block-markers.ts): stored with a rule that has min and max, never shrunk.
   */
  markers?: LengthRange;
  /** The lengths whose markers are complete, where blocks may be claimed. */
  markersReady?: LengthRange;
  resourceVersion: string;
}

/** What a stack's IpPool brings: its canonical definition and who it is. */
export interface DefinitionClaim {
  definition: string;
  stack: string;
  owner: string;
}

/**
 * The definition object (a ConfigMap `<name>.pool`) of a shared pool: read, written by the first
 * stack, compared with every later one, and replaced (carrying the resourceVersion read) only by an
 * explicit, checked update.
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

  /** The stored definition, or undefined when no stack has written one yet. */
  async read(): Promise<StoredDefinition | undefined> {
    try {
      const cm = await this.clients.core.readNamespacedConfigMap({
        name: this.name,
        namespace: this.config.namespace,
      });
      const d = cm.data ?? {};
      const { markers, ready } = markerRuleOf(d);
      return {
        definition: d.definition ?? "",
        stack: d.stack ?? "?",
        owner: d.owner ?? "?",
        ...(markers ? { markers } : {}),
        ...(ready ? { markersReady: ready } : {}),
        resourceVersion: cm.metadata?.resourceVersion ?? "",
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw ledgerUnavailable(`reading the definition of pool "${this.config.name}"`, err, this.place);
    }
  }

  /**
   * Makes sure the pool's stored definition is `mine.definition`: writes it when none is stored,
   * replaces it when `replacing` is the stored one (an explicit update of this stack's pool, already
   * checked), and otherwise refuses a different one. With `readOnly` (at `check`, which previews run
   * too) it only refuses: what every stack reads changes at `up`.
   *
   * A definition whose `prefixLengths` rule has min and max needs markers at those lengths: the
   * marker range is stored (grown, never shrunk) with the definition, then every entry the pool has
   * is registered at it, then it is marked ready, where blocks may be claimed (see
   * marker-backfill.ts). An interrupted update is finished by the next one of the same definition.
   * @throws IpamError INVALID_CONFIG naming both definitions and the stack that wrote the stored one;
   *   LEDGER_UNAVAILABLE.
   */
  async agree(mine: DefinitionClaim, replacing?: string, readOnly = false): Promise<void> {
    const needed = ruleRange(markerRuleOf({ definition: mine.definition }).rule);
    for (let attempt = 0; attempt < 5; attempt++) {
      let stored = await this.read();
      let wrote = false;
      if (stored?.definition !== mine.definition) {
        if (stored && stored.definition !== replacing) throw mismatch(this.config, stored, mine.definition);
        if (readOnly) return;
        stored = await this.write(mine, stored, hull(stored?.markers, needed));
        if (!stored) continue; // another stack wrote it meanwhile
        wrote = true;
      }
      if (readOnly) return;
      if (needed && !covers(stored.markersReady, needed)) {
        if (!(await this.readyMarkers(mine, stored, needed))) continue;
        wrote = true;
      }
      if (wrote && hull(stored.markers, needed)) await this.sweep();
      return;
    }
    throw new IpamError("CONFLICT", `the definition of pool "${this.config.name}" kept changing; try again`);
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
    const body = this.body(mine, stored?.resourceVersion, markers, stored?.markersReady);
    try {
      const written = stored
        ? await this.clients.core.replaceNamespacedConfigMap({
            name: this.name,
            namespace: this.config.namespace,
            body,
          })
        : await this.clients.core.createNamespacedConfigMap({ namespace: this.config.namespace, body });
      return {
        ...mine,
        ...(markers ? { markers } : {}),
        ...(markers && stored?.markersReady ? { markersReady: stored.markersReady } : {}),
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
        rv = await this.replace(this.body(mine, rv, markers, stored.markersReady));
      await backfillMarkers(new ClaimStore(this.clients, this.config.namespace, this.config.name), markers);
      await this.replace(this.body(mine, rv, markers, markers));
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
        definition: mine.definition,
        stack: mine.stack,
        owner: mine.owner,
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
      `${stored.definition} (written by stack ${stored.stack}, ${stored.owner}) differs from this ` +
      `stack's ${mine}; use the same ranges, exclude, reserved and strategy as the other stacks, ` +
      `or grow it with an update of a pool that has the stored definition (checked against every stack's claims)`,
  );
}
