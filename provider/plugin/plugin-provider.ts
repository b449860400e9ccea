import type * as provider from "@pulumi/pulumi/provider";
import { providerFor } from "../runtime";
import type { Props, ProviderImpl } from "../resources/provider-props";
import { errorMessage } from "../core/failure";
import { codedMessage, codeOf, IpamError } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
import { HolderOrder } from "./holder-order";
import { orderedKinds, PoolBook, pluginKinds, poolHolderKinds, type PluginContext } from "./plugin-kinds";
import { testingEnabled, testingKinds } from "./testing-kinds";
import { unwrap, toWire, type Unwrapped } from "./wire-values";
import { readRecord, recordKeys } from "../ledger/stack/allocation-record";
import { EgressIpConstructs } from "./egress-ip-construct";
import { pluginTypePrefix } from "../core/resource-types";
import * as pulumi from "@pulumi/pulumi";
import { plainInputs, unknownPlainInputs, type PlainSpec } from "./plain-inputs";
import { ServedStacks, stackNamedIn } from "./served-stack";

/** The package name of the plugin's type tokens: `egress-ipam:index:<Kind>`. */
export const pluginPackage = "egress-ipam";

/**
 * A kind the plugin serves: the provider of the runtime's table it runs, how its inputs are made,
 * whether its `pool` is an IpPool whose settings it takes, and whether its new instances take
 * addresses from that pool in a chain (holder-order).
 */
interface Served {
  kind: string;
  impl: string;
  inputs: (i: Props, ctx: PluginContext) => Props;
  holdsPool: boolean;
  ordered: boolean;
}

/** What serves a plugin type token (`egress-ipam:index:IpPool`; `egress-ipam:testing:…` where enabled). */
function kindOf(urn: string): Served {
  const type = urn.split("::")[2] ?? "";
  const token = type.split("$").at(-1) ?? type;
  const [pkg, mod, kind] = token.split(":");
  if (pkg === pluginPackage && mod === "index" && kind && pluginKinds[kind]) {
    const [holdsPool, ordered] = [poolHolderKinds.has(kind), orderedKinds.has(kind)];
    return { kind, impl: kind, inputs: pluginKinds[kind], holdsPool, ordered };
  }
  const test =
    pkg === pluginPackage && mod === "testing" && kind && testingEnabled() ? testingKinds[kind] : undefined;
  if (test) return { kind: kind!, ...test, holdsPool: false };
  throw new Error(`the egress-ipam plugin serves no resource type ${token} (${urn})`);
}

/** Every kubeconfig a resource's inputs carry: credentials, kept secret wherever the provider puts them. */
function kubeconfigs(inputs: Props): string[] {
  const out: string[] = [];
  for (const key of ["ledger", "provisioner", "observeWith"]) {
    const k = (inputs[key] as { kubeconfig?: unknown } | undefined)?.kubeconfig;
    if (typeof k === "string") out.push(k);
  }
  return out;
}

/**
 * The resource provider of the `egress-ipam` plugin: the resources of this package for programs in
 * any Pulumi language. Each call is made plain (wire-values), turned into the inputs the package's
 * own provider takes (plugin-kinds), and handed to that provider, the same one TypeScript programs'
 * dynamic resources run: one runtime for both.
 */
export class EgressIpamProvider implements provider.Provider {
  private readonly pools = new PoolBook();
  private readonly order = new HolderOrder();
  private readonly components = new EgressIpConstructs();
  /** The inputs the schema types as plain values, by type token. */
  private readonly plainSpecs: Map<string, Record<string, PlainSpec>>;

  constructor(
    readonly version: string,
    readonly schema: string,
    private readonly impl: (kind: string) => ProviderImpl = providerFor,
    private readonly stacks: ServedStacks = new ServedStacks(),
  ) {
    this.plainSpecs = plainInputs(schema);
  }

  async check(urn: string, olds: Props, news: Props): Promise<provider.CheckResult> {
    const { kind, impl, inputs: inputsOf, holdsPool, ordered } = kindOf(urn);
    const given = unwrap(news);
    const old = unwrap(olds);
    for (const k of kubeconfigs(given.value)) given.secrets.add(k);
    const failure = (property: string, e: unknown) => ({
      inputs: news,
      failures: [
        { property, reason: codedMessage(codeOf(e, "INVALID_CONFIG"), terminalSafe(errorMessage(e))) },
      ],
    });
    const unknownPlain = unknownPlainInputs(
      kind,
      given.value,
      this.plainSpecs.get(`${pluginTypePrefix}${kind}`),
    );
    if (unknownPlain.length > 0) return { inputs: news, failures: unknownPlain };
    const poolRef = given.refs.get("pool");
    let pool: Props | undefined;
    if (holdsPool) {
      try {
        if (!poolRef)
          throw new IpamError("INVALID_INPUT", "give pool as a reference to an egress-ipam IpPool resource");
        pool = this.pools.holderInput(poolRef.urn, urn);
      } catch (e) {
        return failure("pool", e);
      }
      for (const k of kubeconfigs({ ledger: pool.ledger })) given.secrets.add(k);
    }
    const stack = this.stacks.stackOf(urn);
    const inputs = inputsOf(given.value, { stack, urn, pool });
    // One the stack has: the checkpoint its plan reads must hold it.
    if (Object.keys(old.value).length > 0) await this.stacks.verify(urn, stack, old.value);
    this.order.refers(
      urn,
      [...given.refs.values()].map((r) => r.urn),
    );
    const fresh = ordered && poolRef !== undefined && readRecord(old.value) === undefined;
    if (fresh) {
      try {
        this.order.next(poolRef.urn, urn, given.refs.get("after")?.urn);
      } catch (e) {
        return failure("after", e);
      }
      // After a new holder whose plan waits for up, this one's plan waits too: preview would show
      // an address up gives the one ahead.
      if (this.order.waitingAhead(poolRef.urn, urn) !== undefined) {
        this.order.waits(poolRef.urn, urn);
        return { inputs: toWire(inputs, given.secrets, recordKeys), failures: [] };
      }
    }
    const result = await this.impl(impl).check(old.value, inputs);
    // As checked: a pool renamed with an alias keeps the identity (poolId) its state has.
    if (kind === "IpPool") this.pools.record(urn, result.inputs ?? inputs);
    const failed = (result.failures ?? []).length > 0;
    if (fresh && !failed && result.inputs?.poolId === undefined) this.order.waits(poolRef!.urn, urn);
    return {
      inputs: toWire(result.inputs ?? inputs, given.secrets, recordKeys),
      failures: (result.failures ?? []).map((f) => ({ property: f.property, reason: f.reason })),
    };
  }

  async diff(id: string, urn: string, olds: Props, news: Props): Promise<provider.DiffResult> {
    const result = await this.impl(kindOf(urn).impl).diff(id, unwrap(olds).value, unwrap(news).value);
    return result;
  }

  async create(urn: string, inputs: Props): Promise<provider.CreateResult> {
    const given = this.plain(inputs);
    await this.stacks.verify(urn, stackNamedIn(given.value), undefined);
    const result = await this.impl(kindOf(urn).impl).create(given.value);
    return { id: result.id, outs: toWire(result.outs ?? {}, given.secrets, recordKeys) };
  }

  /**
   * Refresh: the resource's read, with the inputs it changes (an EgressIpAssignment found elsewhere
   * records its host again, so the next check plans it anew, as in a TypeScript program). `pulumi
   * import` (no stored state to read) is refused, saying how an address in use comes under management.
   */
  async read(id: string, urn: string, props: Props): Promise<provider.ReadResult> {
    const { kind, impl } = kindOf(urn);
    if (Object.keys(props ?? {}).length === 0) {
      throw new IpamError(
        "INVALID_INPUT",
        codedMessage(
          "INVALID_INPUT",
          `${kind} ${id} cannot be brought in by pulumi import: an address is the pool's to plan, and ` +
            `one in use outside Pulumi comes under management by declaring it: an IpAllocation with ` +
            `ip: "${id}" and adopt: true, an EgressIp with adopt: true (the namespace's addresses), or ` +
            `the program pulumi-egress-ipam import writes from a cluster`,
        ),
      );
    }
    const given = this.plain(props);
    await this.stacks.verify(urn, stackNamedIn(given.value), given.value);
    const result = await this.impl(impl).read(id, given.value);
    return {
      id: result.id ?? id,
      props: toWire(result.props ?? {}, given.secrets, recordKeys),
      ...(result.inputs ? { inputs: toWire(result.inputs, given.secrets, recordKeys) } : {}),
    };
  }

  async update(id: string, urn: string, olds: Props, news: Props): Promise<provider.UpdateResult> {
    const old = this.plain(olds);
    const given = this.plain(news);
    for (const s of old.secrets) given.secrets.add(s);
    await this.stacks.verify(urn, stackNamedIn(given.value), old.value);
    const result = await this.impl(kindOf(urn).impl).update(id, old.value, given.value);
    return { outs: toWire(result.outs ?? {}, given.secrets, recordKeys) };
  }

  async delete(id: string, urn: string, props: Props): Promise<void> {
    const given = this.plain(props).value;
    await this.stacks.verify(urn, stackNamedIn(given), given);
    await this.impl(kindOf(urn).impl).delete(id, given);
  }

  /** The plugin's one component, EgressIp, made of the plugin's own resources. */
  async construct(
    name: string,
    type: string,
    inputs: pulumi.Inputs,
    options: pulumi.ComponentResourceOptions,
  ): Promise<provider.ConstructResult> {
    if (type !== `${pluginTypePrefix}EgressIp`)
      throw new Error(`the egress-ipam plugin has no component ${type}`);
    // The engine gives the organization here, the one request to this plugin that carries it.
    this.stacks.learn(pulumi.getOrganization());
    return this.components.construct(name, type, inputs, options, this.plainSpecs.get(type));
  }

  /** Stored inputs or outputs made plain, with their kubeconfigs counted secret whether or not they were stored so. */
  private plain(props: Props): Unwrapped {
    const given = unwrap(props);
    for (const k of kubeconfigs(given.value)) given.secrets.add(k);
    const pool = given.value.pool as Props | undefined;
    for (const k of kubeconfigs({ ledger: pool?.ledger })) given.secrets.add(k);
    return given;
  }
}
