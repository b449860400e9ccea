import { AddressSet, IpamError, NodeAllocator, type ReadonlyAddressSet, type Store } from "../../allocator";
import { retryOnConflict } from "../../kube/conflict-retry";
import { describeHolder, isLive, ownedBy, type Claim } from "./claim-store";
import type { KubeLedger } from "./kube-ledger";
import { markerRuleReader } from "./marker-range";

// Webmesh node addresses in a shared pool: the seed's `Allocate(ctx, nodeID)` with the pool's claim
// objects as storage. A node's address is one claim carrying the node ID; every resource made for
// the node (in any stack) adds its reference to the claim's `refs`, and the claim goes when the last
// one deletes its resource. So the same node ID gets the same address from any stack.
//
// A reference names one resource instance: the stack's identity, the URN and a value made at its
// create (`nodeRef`), kept in its state. Never the stack's name alone (two same-named stacks on two
// backends are two references), and never the URN alone (a replacement's create and its old copy's
// delete are two references). Earlier versions wrote `<stack> <urn>`: {@link legacyNodeRef}.

/** A node network: the pool's `network` and `static` inputs, validated. */
export interface NodeNetwork {
  network: string;
  static: Record<string, string>;
}

/** The reference an earlier version wrote for a resource of `stack` (its name) with URN `owner`. */
export const legacyNodeRef = (stack: string, owner: string): string => `${stack} ${owner}`;

/**
 * The allocator's {@link Store} over one listing of the pool's claims: `reserve` writes a hold
 * carrying the node ID (a create, so AlreadyExists refuses a second holder of the address).
 */
class ClaimNodeStore implements Store {
  private readonly at = Date.now();

  constructor(
    private readonly ledger: KubeLedger,
    private readonly claims: Claim[],
    private readonly owner: string,
  ) {}

  async reserve(id: string, ip: string): Promise<boolean> {
    const existing = this.claims.find((c) => c.ip === ip);
    if (existing?.nodeId === id) return true;
    if (existing && isLive(existing, this.at)) return false;
    const fields = { ...this.ledger.holdFields(this.owner, 0), nodeId: id, refs: [] };
    const written = existing
      ? await this.ledger.store.replace(existing, fields)
      : await this.ledger.store.create(ip, fields);
    if (written) {
      this.claims.push(written);
      return true;
    }
    // AlreadyExists: somebody planned this address since the listing. When it was for this node
    // (another stack planning it at once), it is this node's address: never a second one.
    const winner = await this.ledger.store.read(ip);
    if (!winner) return false;
    this.claims.push(winner);
    return winner.nodeId === id;
  }
  async lastReservedIP(): Promise<string | undefined> {
    return undefined;
  }
  async releaseByID(): Promise<void> {}
  async getByID(id: string): Promise<string[]> {
    return this.claims.filter((c) => c.nodeId === id).map((c) => c.ip);
  }
  async reserved(): Promise<ReadonlyAddressSet> {
    return new AddressSet(this.claims.filter((c) => isLive(c, this.at)).map((c) => c.ip));
  }
}

/**
 * The host prefix of `nodeId` in the shared pool (`10.0.0.2/32`): its static address, the address
 * some stack already planned or claimed for it, or the lowest free one, held for `owner` until
 * {@link claimNodeAddress}.
 * @throws IpamError NO_NETWORK / NO_STORAGE from the allocator, IP_UNAVAILABLE when the node's
 *   static address is held by another, POOL_EXHAUSTED naming the network, LEDGER_UNAVAILABLE.
 */
export function planNodeAddress(
  ledger: KubeLedger,
  owner: string,
  nodeId: string,
  net: NodeNetwork,
): Promise<string> {
  return ledger.withPoolLock(() =>
    retryOnConflict(`planning node ${nodeId} in ${ledger.what}`, async () => {
      await knownFormat(ledger);
      const store = new ClaimNodeStore(ledger, await ledger.store.list(), owner);
      return new NodeAllocator({ network: net.network, store, static: net.static }).allocate(nodeId);
    }),
  );
}

/**
 * Makes the claim of `ip` a claim of `nodeId` with the reference `ref` (of `owner`, a resource of
 * this ledger's stack), in place of `replaces` (the same resource's reference written by an earlier
 * version) when given. A claim lost since is made again while the address is free.
 * @throws IpamError IP_UNAVAILABLE naming the holder when the address went to another node.
 */
export function claimNodeAddress(
  ledger: KubeLedger,
  owner: string,
  nodeId: string,
  ip: string,
  ref: string,
  replaces?: string,
): Promise<void> {
  return ledger.withPoolLock(() =>
    retryOnConflict(`claiming ${ip} for node ${nodeId} in ${ledger.what}`, async () => {
      await knownFormat(ledger);
      const c = await ledger.store.read(ip);
      if (c && c.nodeId !== nodeId && isLive(c, Date.now())) {
        throw new IpamError(
          "IP_UNAVAILABLE",
          `planned address ${ip} of node ${nodeId} in ${ledger.what} was taken by ` +
            `${c.nodeId ? `node ${c.nodeId}, ` : ""}${describeHolder(c)}; run the update again to plan another`,
        );
      }
      const kept = (c?.nodeId === nodeId ? (c.refs ?? []) : []).filter((r) => r !== replaces);
      const refs = [...new Set([...kept, ref])];
      // Who made the claim first (for messages); its references decide who uses it.
      const first = c ?? { stack: ledger.stack, stackId: ledger.me.stackId, owner };
      const fields = {
        state: "claim" as const,
        stack: first.stack,
        ...(first.stackId === undefined ? {} : { stackId: first.stackId }),
        owner: first.owner,
      };
      const claim = { ...fields, seq: 0, expires: 0, nodeId, refs };
      if (c) await ledger.store.replace(c, claim);
      else if (!(await ledger.store.create(ip, claim))) {
        throw Object.assign(new Error(`claim of ${ip} created meanwhile`), { code: 409 });
      }
    }),
  );
}

/**
 * Drops the reference `ref` (of `owner`) to the node address `ip`; the claim goes with its last
 * reference.
 */
export function releaseNodeAddress(
  ledger: KubeLedger,
  owner: string,
  nodeId: string,
  ip: string,
  ref: string,
): Promise<void> {
  return retryOnConflict(`releasing ${ip} of node ${nodeId} in ${ledger.what}`, async () => {
    await knownFormat(ledger);
    const c = await ledger.store.read(ip);
    if (!c || c.nodeId !== nodeId) return;
    if (!(c.refs ?? []).includes(ref)) {
      // Planned but never created: only this owner's own hold goes.
      if (c.state === "hold" && ownedBy(c, ledger.me, owner)) await ledger.store.delete(c);
      return;
    }
    const refs = c.refs!.filter((r) => r !== ref);
    if (refs.length === 0) await ledger.store.delete(c);
    else await ledger.store.replace(c, { ...c, refs });
  });
}

/**
 * What is wrong with the claim of the node address `ip` that the resource with reference `ref`
 * holds, or undefined when the claim is of `nodeId` and carries `ref`.
 */
export async function nodeClaimProblem(
  ledger: KubeLedger,
  nodeId: string,
  ip: string,
  ref: string,
): Promise<string | undefined> {
  const c = await ledger.store.read(ip);
  if (!c) return `node address ${ip} of node ${nodeId} has no claim in ${ledger.what}`;
  if (c.nodeId !== nodeId) {
    return (
      `node address ${ip} of node ${nodeId} is claimed in ${ledger.what} by ` +
      `${c.nodeId ? `node ${c.nodeId}, ` : ""}${describeHolder(c, ledger.me)}`
    );
  }
  if (c.state !== "claim" || !(c.refs ?? []).includes(ref)) {
    return `the claim of node address ${ip} (node ${nodeId}) in ${ledger.what} does not reference this resource`;
  }
  return undefined;
}

/**
 * Refuses, as every entry write does, a pool whose definition this version may not act under
 * (definition-format.ts). @throws IpamError VERSION_MISMATCH; LEDGER_UNAVAILABLE.
 */
async function knownFormat(ledger: KubeLedger): Promise<void> {
  const { clients, namespace, pool } = ledger.store;
  await markerRuleReader(clients, namespace, pool)();
}
