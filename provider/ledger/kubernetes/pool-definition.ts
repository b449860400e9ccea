import type * as k8s from "@kubernetes/client-node";
import { IpamError } from "../../core/ipam-error";
import { kubeClients, type KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/kube-errors";
import { poolLabel, poolObjectName, roleLabel, roles } from "./claim-names";
import type { KubeLedgerConfig } from "./kube-ledger";
import { ledgerUnavailable } from "./ledger-unavailable";

/** A shared pool's definition as stored with its ledger by the first stack that used it. */
export interface StoredDefinition {
  /** Canonical JSON of the pool's ranges, exclusions, reserved addresses and strategy. */
  definition: string;
  /** The stack that wrote it, `<org>/<project>/<stack>`. */
  stack: string;
  /** URN of the IpPool that wrote it. */
  owner: string;
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
      return {
        definition: d.definition ?? "",
        stack: d.stack ?? "?",
        owner: d.owner ?? "?",
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
   * @throws IpamError INVALID_CONFIG naming both definitions and the stack that wrote the stored one;
   *   LEDGER_UNAVAILABLE.
   */
  async agree(mine: DefinitionClaim, replacing?: string, readOnly = false): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.read();
      if (stored?.definition === mine.definition) return;
      if (stored && stored.definition !== replacing) throw mismatch(this.config, stored, mine.definition);
      if (readOnly) return;
      const body = this.body(mine, stored?.resourceVersion);
      try {
        if (stored) {
          await this.clients.core.replaceNamespacedConfigMap({
            name: this.name,
            namespace: this.config.namespace,
            body,
          });
        } else {
          await this.clients.core.createNamespacedConfigMap({ namespace: this.config.namespace, body });
        }
        return;
      } catch (err) {
        if (!isAlreadyExists(err) && !isConflict(err)) {
          throw ledgerUnavailable(`writing the definition of pool "${this.config.name}"`, err, this.place);
        }
      }
    }
    throw new IpamError("CONFLICT", `the definition of pool "${this.config.name}" kept changing; try again`);
  }

  private body(mine: DefinitionClaim, resourceVersion?: string): k8s.V1ConfigMap {
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
