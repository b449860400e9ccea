import { codedMessage, IpamError } from "../../core/ipam-error";
import * as pulumi from "@pulumi/pulumi";
import { withSecretKubeconfig, type ProvisionerArgs } from "../secret-kubeconfig";
import { encodeHolder, urnPrefix } from "../pool/pool-queue-codec";
import { QueueFileWriter, type QueueFileRef } from "../pool/pool-queue-file";
import type { LedgerArgs } from "../pool/ledger-option";
import type { PrefixLengthRule, RangeArgs } from "../pool/pool-spec";
import type { PoolQuotas } from "../../ledger/quota-rules";
import { providerContext, type ProviderContext } from "../context";
import { thinProvider } from "../thin-provider";

/** A range in CNI host-local form; defaults as host-local fills them. */
export interface IpPoolRange {
  /** The subnet, e.g. `10.0.8.0/24`; must be a network address. */
  subnet: pulumi.Input<string>;
  /** First address handed out (default: network+1). */
  rangeStart?: pulumi.Input<string>;
  /** Last address handed out (default: broadcast−1 for IPv4, the last address for IPv6). */
  rangeEnd?: pulumi.Input<string>;
  /** Never handed out (default: network+1). */
  gateway?: pulumi.Input<string>;
}

/** Inputs of {@link IpPool}. Give `ranges` or `cniConfig`. */
export interface IpPoolArgs {
  /**
   * The ranges addresses come from; those of one family must not overlap. Ranges of both families
   * make a dual-stack pool (one range set per family, as a `cniConfig` with two): an AWS subnet's
   * IPv4 and IPv6 blocks in one pool. Adding ranges is an in-place update.
   */
  ranges?: pulumi.Input<pulumi.Input<IpPoolRange>[]>;
  /** A CNI host-local config (JSON text); each of its range sets is one family of the pool. */
  cniConfig?: pulumi.Input<string>;
  /** CIDRs or addresses never handed out and refused when requested. */
  exclude?: pulumi.Input<pulumi.Input<string>[]>;
  /** Addresses never handed out automatically, but accepted when an allocation requests them. */
  reserved?: pulumi.Input<pulumi.Input<string>[]>;
  /** `round-robin` (default; CNI host-local) or `lowest-free`. */
  strategy?: pulumi.Input<"round-robin" | "lowest-free">;
  /** Exclude the addresses a cloud reserves in every subnet: `aws` (network+1..+3 and the last). */
  cloudReserved?: pulumi.Input<"aws">;
  /**
   * A webmesh node network, e.g. `10.42.0.0/16` (instead of `ranges` / `cniConfig`): allocations with
   * a `nodeId` get one host prefix each, the lowest free after the network address.
   */
  network?: pulumi.Input<string>;
  /** Fixed node addresses of a node `network`, by node ID (`10.42.0.5` or `10.42.0.5/32`). */
  static?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * The prefix lengths a `PrefixAllocation` of the pool may ask for, and the default when it
   * gives none, e.g. `{ min: 16, max: 28, default: 24 }`; a block outside it is refused at preview
   * naming the rule. Changing it applies to later plans only. In a shared pool (`ledger`) `min` and
   * `max` may be at most 8 apart: every address registers in a marker at each length between.
   */
  prefixLengths?: pulumi.Input<PrefixLengthRule>;
  /**
   * Share the pool across stacks through a Kubernetes ledger: `{ kind: "kubernetes", name,
   * namespace, context?, lockDuration?: "10s", lockAcquireTimeout?: "30s" }`. Stacks naming the same
   * namespace and name share one pool; the kubeconfig comes from `KUBECONFIG` (or `~/.kube/config`),
   * only the context name is stored. See docs/shared-pools.md for the RBAC rules.
   */
  ledger?: pulumi.Input<LedgerArgs>;
  /**
   * The per-stack quotas of a shared pool, set by its owner: `default` addresses for each stack, and
   * limits by stack name (`"project/stack"` or `"org/project/stack"`, a segment may be `*`; the
   * stacks a name matches count together), e.g. `{ default: 8, stacks: { "network/prod": 64 } }`.
   * A block counts its addresses. A plan over quota is refused at preview. Only the owner sets them.
   */
  quotas?: pulumi.Input<PoolQuotas>;
  /**
   * Take ownership of a shared pool from the stack that owns it: this stack's definition and quotas
   * are written at `up` (refused at preview if they would leave any stack's address outside it).
   */
  adopt?: pulumi.Input<boolean>;
}

/** Inputs of {@link IpPool.shared}: a tenant's reference to a shared pool another stack owns. */
export interface SharedIpPoolArgs {
  /** The pool's ledger, as its owner gives it (`kind`, `name`, `namespace`; `context` and the rest as needed). */
  ledger: pulumi.Input<LedgerArgs>;
}

/** Marks the args {@link IpPool.shared} passes to the constructor. */
const tenant = Symbol("shared pool reference");

/**
 * A pool queue as the program builds it (the engine resolves it before `check`): where the
 * holders' lines are in the queue file, or (`EGRESS_IPAM_POOL_QUEUE=inline`) the lines themselves.
 */
type PoolQueueInput = { observers: pulumi.Input<ProvisionerArgs>[] } & (
  { holders: Promise<string> } | { file: Promise<string>; lines: Promise<number>; bytes: Promise<number> }
);

/** Whether holders carry the queue's lines inline (`EGRESS_IPAM_POOL_QUEUE=inline`) instead of a file's place. */
function inlineQueue(): boolean {
  const mode = process.env.EGRESS_IPAM_POOL_QUEUE;
  if (mode === undefined || mode === "" || mode === "file") return false;
  if (mode === "inline") return true;
  // Thrown in the program, where no provider boundary codes it: the message carries its code itself.
  throw new IpamError(
    "INVALID_CONFIG",
    codedMessage(
      "INVALID_CONFIG",
      `EGRESS_IPAM_POOL_QUEUE is "${mode}": leave it unset (a file, the default) or set it to inline`,
    ),
  );
}

/** Where an allocation adopts its address from: see `IpAllocationArgs.adoptFrom`. */
export interface AdoptFromArgs {
  /** The namespace whose present address is taken over. */
  namespace: pulumi.Input<string>;
  /** The allocation's failure domain: the address on a Node of this domain is taken. */
  failureDomain?: string;
  /** Every failure domain of the EgressIp: an address on a Node of another one is refused. */
  domains?: string[];
  /** This pool is the EgressIp's only pool: every address of the namespace must be in it. */
  onlyPool?: boolean;
  /** The families the EgressIp places: an address of another family listed is its sibling allocation's. */
  families?: ("ipv4" | "ipv6")[];
}

/** What a holder passes to its provider as its `holder` input: who it is and the pool's queue up to it. */
export interface HolderInput extends ProviderContext {
  queue: PoolQueueInput;
}

/** Whether a value is plain JSON (no outputs or promises inside), so equal values mean equal configs. */
function isPlainJson(value: unknown): boolean {
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) return true;
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value as object).every((v) => v === undefined || isPlainJson(v));
}

/** One allocation of a pool, as `pulumi refresh` reports it. */
export interface PoolAllocation {
  /** The address. */
  ip: string;
  /** URN of the resource holding it. */
  owner: string;
}

/** What an allocation needs to know about its pool at `check` time (known at preview). */
export interface PoolRef {
  /** The pool's identity ({@link IpPool.poolId}) in its ledger and its holders' state. */
  id: string;
  ranges?: RangeArgs[];
  cniConfig?: string;
  exclude?: string[];
  reserved?: string[];
  strategy?: "round-robin" | "lowest-free";
  cloudReserved?: "aws";
  /** A node network (webmesh). */
  network?: string;
  /** Fixed node addresses. */
  static?: Record<string, string>;
  /** The rule for blocks. */
  prefixLengths?: PrefixLengthRule;
  /** The pool's shared ledger, when it has one. */
  ledger?: LedgerArgs;
  /** A tenant's reference ({@link IpPool.shared}): the definition is read from the ledger at `check`. */
  shared?: boolean;
}

/**
 * A pool of IP addresses with CNI host-local semantics. Every problem in its inputs is reported at
 * preview, per property. Allocations live in the state of the resources that hold them; the pool
 * refuses a change that would leave a held address outside it, and refuses deletion while it has
 * holders, naming them.
 */
export class IpPool extends pulumi.dynamic.Resource {
  /** Canonical ranges, one list per range set (two for a dual-stack CNI config). */
  declare public readonly rangeSets: pulumi.Output<RangeArgs[][]>;
  /** Addresses the pool hands out automatically, as a decimal string (an IPv6 pool exceeds 2^53). */
  declare public readonly size: pulumi.Output<string>;
  /** Current allocations, after `pulumi refresh`. */
  declare public readonly allocations: pulumi.Output<PoolAllocation[] | undefined>;
  /**
   * Free addresses, as a decimal string: after `pulumi refresh`; of a reference ({@link IpPool.shared}),
   * also as its check found them at create and update.
   */
  declare public readonly free: pulumi.Output<string | undefined>;
  /**
   * The pool's identity in its ledger and its holders' state: its URN when it was first created,
   * kept when it is renamed or re-parented with an alias.
   */
  declare public readonly poolId: pulumi.Output<string>;
  /**
   * A shared pool's owner, `stack <org/project/stack> (<IpPool URN>)`: the stack that defines it.
   * Known at preview; undefined for a stack-local pool.
   */
  declare public readonly ownedBy: pulumi.Output<string | undefined>;
  /**
   * Addresses this stack holds in a shared pool (a block counts its addresses), as a decimal
   * string, of a reference ({@link IpPool.shared}): as its check found them at create and update,
   * and read again by `pulumi refresh` (another stack's allocation is no change of the reference).
   */
  declare public readonly used: pulumi.Output<string | undefined>;
  /** This stack's quota in a shared pool (its group's limit, in addresses); undefined when none applies. */
  declare public readonly quota: pulumi.Output<string | undefined>;
  /** A reference's pool definition as its owner stored it (canonical JSON). */
  declare public readonly definition: pulumi.Output<string | undefined>;
  /** What allocations from this pool pass to their provider; known at preview for literal inputs. */
  public readonly ref: pulumi.Output<PoolRef>;
  private readonly observers: pulumi.Input<ProvisionerArgs>[] = [];
  /** The queue's lines so far, newline-separated (inline form); undefined before the first holder. */
  private queueText: Promise<string | undefined> = Promise.resolve(undefined);
  /** The queue's file (file form), made with the first holder. */
  private queueFile: QueueFileWriter | undefined;
  /** The queue file's extent after the newest holder's line (file form). */
  private queueEnd: Promise<QueueFileRef | undefined> = Promise.resolve(undefined);
  private lastOwner: Promise<string> | undefined;
  private readonly observerIndex = new Map<unknown, number>();

  /**
   * Adds a holder (a resource taking addresses from this pool; of one `family` only, if given) to
   * the pool's queue, and returns what the holder passes as its `holder` input: its context and
   * every holder so far, in program order, itself last.
   *
   * The engine checks resources one at a time in the order their registrations arrive, and
   * concurrent registrations arrive in a different order on every run. With the queue, a holder's
   * check first plans every earlier holder that has no plan yet, so preview and `up` plan the same
   * addresses in program order whatever order the checks come in. Holders do not wait for each
   * other's creates, only for the earlier holders' URNs and `observeWith` values (so an
   * `observeWith` must not depend on a later holder of the same pool). A requested address that is
   * not a plain string is not known when other holders are planned: list it in the pool's
   * `reserved` so automatic plans stay off it.
   */
  enqueueHolder(
    context: ProviderContext,
    ip: pulumi.Input<string> | undefined,
    observeWith: pulumi.Input<ProvisionerArgs> | undefined,
    adoptFrom?: AdoptFromArgs,
    family?: "ipv4" | "ipv6",
  ): HolderInput {
    // An adopted address is known to the others when its namespace is (they find it as its check does).
    const adopt =
      adoptFrom && typeof adoptFrom.namespace === "string"
        ? { ...adoptFrom, namespace: adoptFrom.namespace }
        : undefined;
    const requested =
      adoptFrom && !adopt ? null : ip === undefined ? undefined : typeof ip === "string" ? ip : null;
    const observer = observeWith === undefined ? undefined : this.observer(observeWith);
    const previous = this.lastOwner;
    this.lastOwner = context.owner;
    const line = Promise.all([context.owner, previous]).then(([urn, before]) =>
      encodeHolder(
        { owner: urn, ip: requested, observer, ...(adopt ? { adopt } : {}), ...(family ? { family } : {}) },
        urnPrefix(urn),
        before,
      ),
    );
    const observers = [...this.observers];
    if (inlineQueue()) {
      // Each holder's text extends the previous one's: one concatenation per holder.
      this.queueText = Promise.all([this.queueText, line]).then(([text, l]) =>
        text === undefined ? l : `${text}\n${l}`,
      );
      const holders = this.queueText.then((text) => text!);
      return { ...context, queue: { observers, holders } };
    }
    // Appended in program order (after the previous holder's line), before the holder's input resolves.
    const writer = (this.queueFile ??= new QueueFileWriter());
    const end = Promise.all([this.queueEnd, line]).then(([, l]) => writer.append(l));
    this.queueEnd = end;
    return {
      ...context,
      queue: {
        observers,
        file: end.then((r) => r.file),
        lines: end.then((r) => r.lines),
        bytes: end.then((r) => r.bytes),
      },
    };
  }

  /** The index of a provisioner config among the queue's observers; equal plain configs share one. */
  private observer(config: pulumi.Input<ProvisionerArgs>): number {
    const key = isPlainJson(config) ? JSON.stringify(config) : config;
    let index = this.observerIndex.get(key);
    if (index === undefined) {
      index = this.observers.push(config) - 1;
      this.observerIndex.set(key, index);
    }
    return index;
  }

  /**
   * A tenant's reference to a shared pool that another stack owns: the pool's definition (ranges,
   * exclusions, strategy, rule for blocks) and quotas are read from its ledger at every `check`, so
   * the owner grows the pool without this program changing. Holders take it as they take any pool;
   * `size`, `free`, `used` and `quota` are known at preview.
   */
  static shared(name: string, args: SharedIpPoolArgs, opts?: pulumi.CustomResourceOptions): IpPool {
    return new IpPool(name, { ledger: args.ledger, [tenant]: true } as IpPoolArgs, opts);
  }

  constructor(name: string, args: IpPoolArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "IpPool", opts);
    if ((args as { [tenant]?: boolean })[tenant]) {
      const ledger = withSecretKubeconfig(args.ledger);
      const figures = {
        rangeSets: undefined,
        size: undefined,
        free: undefined,
        used: undefined,
        quota: undefined,
      };
      const props = { ledger, shared: true, stack: context.stack, poolId: context.owner, ...figures };
      super(
        thinProvider("IpPool"),
        name,
        { ...props, definition: undefined, ownedBy: undefined },
        opts,
        "egress-ipam",
        "IpPool",
      );
      const holderInput = { ledger, shared: true, id: this.poolId };
      holderInputs.set(this, holderInput);
      this.ref = pulumi.output(holderInput) as pulumi.Output<PoolRef>;
      return;
    }
    const spec = {
      ranges: args.ranges,
      cniConfig: args.cniConfig,
      exclude: args.exclude,
      reserved: args.reserved,
      strategy: args.strategy,
      cloudReserved: args.cloudReserved,
      network: args.network,
      static: args.static,
      prefixLengths: args.prefixLengths,
    };
    const ledger = withSecretKubeconfig(args.ledger);
    const props = {
      ...spec,
      ledger,
      quotas: args.quotas,
      adopt: args.adopt,
      stack: context.stack,
      poolId: context.owner,
      ownedBy: undefined,
      rangeSets: undefined,
      size: undefined,
      allocations: undefined,
      free: undefined,
    };
    super(thinProvider("IpPool"), name, props, opts, "egress-ipam", "IpPool");
    // The identity the pool's state keeps (its URN when first created, kept through renames with
    // an alias); an output of the pool, so that resources taking the ref depend on it (and are
    // deleted before it).
    const holderInput = { ...spec, ledger, id: this.poolId };
    holderInputs.set(this, holderInput);
    this.ref = pulumi.output(holderInput) as pulumi.Output<PoolRef>;
  }
}

// What each pool's holders pass as their `pool` input: the ref's parts as they are, not one output
// of them all, so that a ledger's kubeconfig stays a secret of its own in the holders' state.
const holderInputs = new WeakMap<IpPool, pulumi.Inputs>();

/** The `pool` input of a holder of `pool`: {@link IpPool.ref}'s parts, each an input of its own. */
export function poolInput(pool: IpPool): pulumi.Inputs {
  return holderInputs.get(pool)!;
}
