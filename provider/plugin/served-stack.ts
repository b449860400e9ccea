import { codedMessage, IpamError } from "../core/ipam-error";
import {
  exportStackResources,
  isStackMissing,
  type CheckpointResource,
} from "../ledger/stack/stack-checkpoint";
import { stackResources } from "../ledger/stack/stack-ledger";
import { engineError } from "../runtime/engine-messages";
import type { Props } from "../resources/provider-props";

/** The stack config key (`egress-ipam:organization`) naming the organization of the stack. */
export const organizationConfig = "egress-ipam:organization";

/** The organization every self-managed backend (file, S3, GCS, Azure Blob) gives its stacks. */
const selfManaged = "organization";

/** Settings of {@link ServedStacks}. */
export interface ServedStacksOptions {
  /** The stack's checkpoint; default the one export per stack per process that the ledgers read too. */
  load?: (stack: string) => Promise<CheckpointResource[]>;
  /** The stack's checkpoint read anew, where `load`'s lacks the resource; default `pulumi stack export`, else `load`. */
  reload?: (stack: string) => Promise<CheckpointResource[]>;
  /** The plugin's environment, whose `PULUMI_CONFIG` the engine fills with the stack's `egress-ipam:*` config. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The stack the resources the plugin serves belong to. A URN names its project and stack, not the
 * organization; the engine gives the organization only with a Construct (an EgressIp), so it is, in
 * this order: the one the engine gave this process; the stack's own config `egress-ipam:organization`
 * (per stack, so a value for one organization cannot reach another's stacks); `organization`, what
 * every self-managed backend reports. `PULUMI_ORGANIZATION` is not read: a shell's variable is not a
 * stack's.
 *
 * A checkpoint is read as a stack's only where it holds the resource being served, so that another
 * organization's stack of the same name is never taken for this one: see {@link verify}.
 */
export class ServedStacks {
  private fromEngine?: string;
  private readonly load: (stack: string) => Promise<CheckpointResource[]>;
  private readonly reload: (stack: string) => Promise<CheckpointResource[]>;
  private readonly configured: string | undefined;

  constructor(opts: ServedStacksOptions = {}) {
    this.load = opts.load ?? stackResources;
    this.reload = opts.reload ?? opts.load ?? exportStackResources;
    this.configured = configuredOrganization(opts.env ?? process.env);
  }

  /**
   * Remembers the organization the engine gave (a Construct's) for every later call of this process.
   * @throws IpamError `STACK_MISMATCH` when the stack's config names another.
   */
  learn(organization: string): void {
    if (organization === "") return;
    if (this.configured !== undefined && this.configured !== organization) {
      throw new IpamError(
        "STACK_MISMATCH",
        codedMessage(
          "STACK_MISMATCH",
          `the stack config ${organizationConfig} is "${this.configured}", but the engine runs this stack in ` +
            `organization "${organization}": set it to that (\`pulumi config set ${organizationConfig} ` +
            `${organization}\`) or remove it (\`pulumi config rm ${organizationConfig}\`), and run the command again`,
        ),
      );
    }
    this.fromEngine = organization;
  }

  /** The stack `urn` belongs to, fully qualified: `<org>/<project>/<stack>`. */
  stackOf(urn: string): string {
    const { project, stack } = partsOf(urn);
    return `${this.organization()}/${project}/${stack}`;
  }

  /**
   * Verifies that the checkpoint of `stack`, the one the provider will read, is the checkpoint of
   * the stack `urn` belongs to. Of a resource the engine has `state` of, it must hold the resource,
   * under its URN or the one its state was made under (a rename with an alias), or a resource that
   * records that identity (renamed with aliases twice, its URN there is an intermediate one);
   * at a create (no state), the root stack resource, which the engine writes before any other. A
   * resource checked before its create has nothing to be found by (a first preview's stack holds
   * nothing): its create is verified.
   * @throws IpamError `STACK_MISMATCH` naming the stack read, what it lacks and what to set.
   */
  async verify(urn: string, stack: unknown, state: Props | undefined): Promise<void> {
    if (typeof stack !== "string") return;
    // The URN a state was made under: a holder's `owner`; a pool's `poolId` (a holder's names its pool).
    const madeAs = typeof state?.owner === "string" ? state.owner : state?.poolId;
    const wanted = state ? [urn, madeAs].filter((u): u is string => typeof u === "string") : [rootOf(urn)];
    // Renamed with aliases more than once, a resource's URN in the checkpoint is neither its URN now
    // nor the one it was made under; the identity its state records is still in its outputs.
    const sameRecord = (r: CheckpointResource) =>
      state !== undefined &&
      typeof madeAs === "string" &&
      (r.outputs?.owner === madeAs || r.outputs?.poolId === madeAs);
    const holds = async (read: (stack: string) => Promise<CheckpointResource[]>) => {
      try {
        return (await read(stack)).some((r) => wanted.includes(r.urn) || sameRecord(r));
      } catch (e) {
        if (!isStackMissing(e)) throw engineError(e);
        // A name recorded in state whose stack was renamed since: the provider knows what that means.
        if (stack !== this.stackOf(urn)) return true;
        throw this.mismatch(stack, `the backend has no stack "${stack}"`);
      }
    };
    // The read this process keeps may be older than what is asked about: a miss is read again.
    if ((await holds(this.load)) || (await holds(this.reload))) return;
    const what = state
      ? [...new Set(wanted)].join(" or ")
      : `${wanted[0]} (the root of every deployed stack)`;
    throw this.mismatch(
      stack,
      `the checkpoint of stack "${stack}" holds no ${what}: it is another stack of the same name, not ` +
        `the one this resource belongs to`,
    );
  }

  private mismatch(stack: string, what: string): IpamError {
    return new IpamError(
      "STACK_MISMATCH",
      codedMessage(
        "STACK_MISMATCH",
        `${what}. ${this.why(stack)} Nothing was changed; set ` +
          `\`pulumi config set ${organizationConfig} <the organization of this stack>\` ` +
          `(on a self-managed backend remove it: \`pulumi config rm ${organizationConfig}\`) and run the command again`,
      ),
    );
  }

  private organization(): string {
    return this.fromEngine ?? this.configured ?? selfManaged;
  }

  private why(stack: string): string {
    const org = stack.split("/")[0];
    if (this.fromEngine !== undefined && org === this.fromEngine) return `Its organization is the engine's.`;
    if (this.configured !== undefined && org === this.configured)
      return `Its organization "${org}" is the stack config ${organizationConfig}.`;
    if (org === selfManaged)
      return `Its organization "${org}" is the default: on Pulumi Cloud the stack config ${organizationConfig} names it.`;
    return `Its organization "${org}" was recorded in the resource's state.`;
  }
}

/**
 * The stack's `egress-ipam:organization`, as the engine passes the stack's config of the package to
 * its plugin (`PULUMI_CONFIG`, a JSON object of the keys without their `egress-ipam:`).
 */
export function configuredOrganization(env: NodeJS.ProcessEnv): string | undefined {
  let config: unknown;
  try {
    config = JSON.parse(env.PULUMI_CONFIG ?? "{}");
  } catch {
    return undefined;
  }
  const org = (config as Record<string, unknown> | null)?.organization;
  return typeof org === "string" && org.trim() !== "" ? org.trim() : undefined;
}

function partsOf(urn: string): { project: string; stack: string } {
  const [head = "", project = ""] = urn.split("::");
  return { project, stack: head.split(":")[2] ?? "" };
}

/** The URN of the root stack resource of the stack `urn` belongs to (`<project>-<stack>`, in every language). */
export function rootOf(urn: string): string {
  const { project, stack } = partsOf(urn);
  return `urn:pulumi:${stack}::${project}::pulumi:pulumi:Stack::${project}-${stack}`;
}

/** The stack a provider reads for `props`: its `stack`, or a holder's `holder.stack` before its check. */
export function stackNamedIn(props: Props): unknown {
  return props.stack ?? (props.holder as Props | undefined)?.stack;
}
