import { AddressSet, IpamError, NodeAllocator, type ReadonlyAddressSet, type Store } from "../../allocator";
import { retryOnConflict } from "../../kube/conflict-retry";
import { describeHolder, isLive, ownedBy, type Claim } from "./claim-store";
import type { KubeLedger } from "./kube-ledger";

// Webmesh node addresses in a shared pool: the seed's `Allocate(ctx, nodeID)` with the pool's claim
// objects as storage. A node's address is one claim carrying the node ID; every stack that creates
// a resource for the node adds itself to the claim's `refs`, and the claim goes when the last one
// deletes its resource. So the same node ID gets the same address from any stack.

/** A node network: the pool's `network` and `static` inputs, validated. */
export interface NodeNetwork {
  network: string;
  static: Record<string, string>;
}

const ref = (ledger: KubeLedger, owner: string) => `${ledger.stack} ${owner}`;

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
    if (written) this.claims.push(written);
    return written !== undefined;
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
      const store = new ClaimNodeStore(ledger, await ledger.store.list(), owner);
      return new NodeAllocator({ network: net.network, store, static: net.static }).allocate(nodeId);
    }),
  );
}

/**
 * Makes the claim of `ip` a claim of `nodeId` referenced by `owner` (this ledger's stack).
 * @throws IpamError IP_UNAVAILABLE naming the holder when the address went to another node.
 */
export function claimNodeAddress(
  ledger: KubeLedger,
  owner: string,
  nodeId: string,
  ip: string,
): Promise<void> {
  return ledger.withPoolLock(() =>
    retryOnConflict(`claiming ${ip} for node ${nodeId} in ${ledger.what}`, async () => {
      const c = await ledger.store.read(ip);
      if (c && c.nodeId !== nodeId && isLive(c, Date.now())) {
        throw new IpamError(
          "IP_UNAVAILABLE",
          `planned address ${ip} of node ${nodeId} in ${ledger.what} was taken by ` +
            `${c.nodeId ? `node ${c.nodeId}, ` : ""}${describeHolder(c)}; run the update again to plan another`,
        );
      }
      const refs = [...new Set([...(c?.nodeId === nodeId ? (c.refs ?? []) : []), ref(ledger, owner)])];
      const fields = { state: "claim" as const, stack: c?.stack ?? ledger.stack, owner: c?.owner ?? owner };
      const claim = { ...fields, seq: 0, expires: 0, nodeId, refs };
      if (c) await ledger.store.replace(c, claim);
      else if (!(await ledger.store.create(ip, claim))) {
        throw Object.assign(new Error(`claim of ${ip} created meanwhile`), { code: 409 });
      }
    }),
  );
}

/** Drops `owner`'s reference to the node address `ip`; the claim goes with its last reference. */
export function releaseNodeAddress(
  ledger: KubeLedger,
  owner: string,
  nodeId: string,
  ip: string,
): Promise<void> {
  return retryOnConflict(`releasing ${ip} of node ${nodeId} in ${ledger.what}`, async () => {
    const c = await ledger.store.read(ip);
    if (!c || c.nodeId !== nodeId) return;
    const mine = ref(ledger, owner);
    if (!(c.refs ?? []).includes(mine)) {
      // Planned but never created: only this owner's own hold goes.
      if (c.state === "hold" && ownedBy(c, ledger.me, owner)) await ledger.store.delete(c);
      return;
    }
    const refs = c.refs!.filter((r) => r !== mine);
    if (refs.length === 0) await ledger.store.delete(c);
    else await ledger.store.replace(c, { ...c, refs });
  });
}
