/**
 * The stable error codes of the package. Callers branch on these, never on message text; every
 * message handed to the user (the engine's errors, `check` failures, the CLI's error lines) starts
 * with its code in brackets, `[IP_UNAVAILABLE] …` (see {@link codedMessage}). Each bullet says what
 * the code means, then (`Do:`) what to do about it.
 *
 * - `INVALID_ADDRESS`: a string is not an IPv4/IPv6 address or CIDR. Do: give the address or CIDR
 *   as the message shows it should be written, e.g. `10.0.0.5` or `10.0.0.0/24`.
 * - `HOST_BITS_SET`: a subnet is not its own network address (the message names the real one). Do:
 *   use the network address the message names.
 * - `NETWORK_TOO_SMALL`: an IPv4 /31 or /32, or an IPv6 /127 or /128, used as a range subnet. Do:
 *   give a larger subnet.
 * - `INVALID_RANGE`: a range is missing its subnet, or its bounds or gateway do not fit its subnet.
 *   Do: give the subnet, or bounds and a gateway inside it.
 * - `EMPTY_RANGE_SET`: a range set without ranges. Do: give at least one range.
 * - `MIXED_FAMILIES`: a range set with both IPv4 and IPv6 ranges. Do: put each family in a range
 *   set of its own.
 * - `OVERLAPPING_RANGES`: two ranges of one set, or two sets of one config, overlap. Do: make the
 *   ranges disjoint (the message names both).
 * - `NOT_IN_RANGE`: an address is outside the range set (or network) it was meant for, or a block
 *   is not wholly between one range's rangeStart and rangeEnd (the message names the block and the
 *   ranges). Do: request an address or block inside the pool's ranges (or leave `ip` / `cidr` out so
 *   that the pool plans one), or widen the range or add one to the pool.
 * - `IP_UNAVAILABLE`: a requested address is a gateway, excluded, or held by someone else; a
 *   requested block holds its range's gateway or an excluded address, or overlaps what someone else
 *   holds. Do: request another address or block, or leave `ip` / `cidr` out so that the pool plans a
 *   free one.
 * - `PREFIX_NOT_ALLOWED`: a block's prefix length is outside its pool's `prefixLengths` rule, or the
 *   pool has no rule and the block gives no length. Do: ask for a length the rule allows (the
 *   message names the rule), or change the pool's rule.
 * - `QUOTA_EXCEEDED`: a stack would hold more addresses of a shared pool than the quota its owner
 *   set (the message names the quota, what the stack holds and who set it). Do: release addresses
 *   of the pool, or ask the pool's owner to raise the quota.
 * - `POOL_EXHAUSTED`: no allocatable address is left. Do: release addresses of the pool, or add a
 *   range to it.
 * - `DUPLICATE_ALLOCATION`: the id already holds an address in this range set. Do: release it first,
 *   or use another id.
 * - `INVALID_CONFIG`: a CNI configuration or allocator option, a provisioner config or an
 *   environment setting of the package is malformed, or a setting is given where it is not
 *   supported (`elasticIps` under the `cloud` of `ocp-static` or `cilium`); or, in a YAML, Python or
 *   Go program, two holders new to one pool in an update that no `after` orders (the message names
 *   both). Do: fix the setting the message names; for two holders, set the `after` it says.
 * - `INVALID_INPUT`: a resource's input or a CLI option has the wrong shape, or a meaning no more
 *   specific code covers (a missing namespace, two settings that exclude each other, a `podSelector`
 *   key or value that is not Kubernetes label syntax, an output not known at preview or a secret
 *   where the plugin's schema takes a plain value, such as an EgressIp's `failureDomains`; a shared
 *   pool's `prefixLengths` whose `min` and `max` are more than 8 apart). Do: fix
 *   the property the failure names; the message says what it takes.
 * - `NO_NETWORK`: a node allocator was built without a network, or an IpAllocation with `nodeId`
 *   asks a pool without `network` (webmesh ErrNoNetwork). Do: give it a network.
 * - `NO_STORAGE`: a node allocator was built without a store, or an IpAllocation with `nodeId` asks
 *   a pool without a shared `ledger` (webmesh ErrNoStorage). Do: give it a store (the pool a
 *   `ledger`).
 * - `LOCK_TIMEOUT`: a pool's lock (in-process, or a shared pool's Lease) was not acquired within
 *   its `lockAcquireTimeout`; the message names who holds it and since when. Do: wait for that
 *   holder to finish, or raise `lockAcquireTimeout`; a holder that is gone loses the Lease when it
 *   expires.
 * - `LEDGER_UNAVAILABLE`: a pool's ledger could not be read or written — the stack's checkpoint
 *   (`pulumi stack export` failed) or a shared pool's API server (unreachable, forbidden); nothing
 *   was allocated. The last two come from the ledger layer, never from the allocator itself. Do:
 *   make the backend or API server reachable with the permission the message names, then run again.
 * - `LEDGER_FULL`: a shared pool's ledger object that lists entries would grow past what one object
 *   may hold (a ConfigMap, 1 MiB): the marker of the block at the pool's `prefixLengths.min` around
 *   the entry, or the quota counter of the stack's group (the message names the object, how many
 *   entries it lists and its bytes). Nothing was held. Do: release entries inside that block or of
 *   that group; or ask the pool's owner for a `prefixLengths` rule whose `min` is a smaller block,
 *   or for narrower quota patterns that split the group.
 * - `STACK_MISMATCH`: in a YAML, Python or Go program, the checkpoint read as the stack of a
 *   resource is another stack of the same name: it holds neither the resource (one the engine has
 *   state of) nor the stack's root resource (at a create), or the backend has no stack of that name;
 *   or the stack config `egress-ipam:organization` names another organization than the engine's.
 *   Nothing was changed. Do: set `egress-ipam:organization` to the organization of the stack
 *   (`pulumi config set egress-ipam:organization <org>`), or remove it on a self-managed backend.
 * - `CONFLICT`: a Kubernetes read-modify-write lost to other writers more often than its retry
 *   budget allows (raised by the Kubernetes client layer). Do: run again once the other writers are
 *   done.
 * - `ADDRESS_IN_USE`: on the platform the address is somebody else's: another EC2 interface or
 *   instance, a VPC CNI prefix, another EgressIP, Egress, CiliumEgressGatewayPolicy, NetNamespace or
 *   HostSubnet. Do: what the message names: where the stack's allocation holds it, the EgressIp's
 *   `ips` (or the IpAllocation's `ip`) with the spare address it names, then `pulumi up`; `adopt:
 *   true` where it offers that; or free it there. (Excluding it from the pool is refused while an
 *   allocation holds it.)
 * - `TAKEN_OVER`: an address this assignment placed is now recorded for another owner (another
 *   stack, or a renamed resource that adopted it). Do: remove this assignment from the program (its
 *   delete leaves the address to its owner), or have that owner release it and run `pulumi up`.
 * - `UNMANAGED_OBJECT`: an object a provisioner would write (an EgressIP, an Egress, a
 *   CiliumEgressGatewayPolicy) exists and was not made by this package. Do: rename or delete it, or
 *   set `adopt: true` where the message offers it.
 * - `SCOPE_CONFLICT`: two EgressIps of one namespace (or another stack's) ask one shared
 *   CiliumEgressGatewayPolicy for different selectors or destinations, or would serve the same pods
 *   as another object of the namespace (an EgressIP, Egress or CiliumEgressGatewayPolicy, one made
 *   by hand included). Do: give them one scope or pod selectors that differ, as the message says;
 *   for an object made by hand, set `adopt: true` where the message offers it, or delete it or
 *   narrow what it selects.
 * - `NOT_FOUND`: a platform object the operation needs does not exist: an EC2 instance or subnet, a
 *   Node, a HostSubnet, a NetNamespace, an object a provisioner writes into. Do: create it (or the
 *   namespace or node it belongs to), or correct the name.
 * - `HOST_UNAVAILABLE`: no host can take the address: none is running in the failure domain, none
 *   has room (for another address, or on AWS for another tag: an interface takes 50, and each egress
 *   address puts one there), or the chosen one is stopped or cannot carry it. Do: start or add a host
 *   there, remove tags the interface does not need, or choose another host, as the message says.
 * - `DRIFT`: the address is not where state says it is (found at refresh or before a change): taken
 *   off its host, moved, or not taken up by the platform. Do: run `pulumi up` to put it back, or
 *   check what the message names (labels, an ExternalIPPool).
 * - `POOL_CHANGED`: an address or block planned earlier (at a preview, or a check whose hold lapsed)
 *   is no longer one the shared pool hands out: its owner changed the pool since (an exclusion, a
 *   reserved address, smaller ranges, a tighter `prefixLengths` rule), or it is now in use outside
 *   Pulumi; or `create` found the pool's definition changed since its check planned it; or another
 *   stack claimed a block around it (the check that wrote its hold crashed or timed out before
 *   registering it, so nothing kept that block from being claimed). The message
 *   names the address or block, why, and (at a check) what is held instead. Nothing was claimed.
 *   Do: run the update again (`pulumi preview` shows the new plan; `pulumi up` gets exactly it).
 * - `POOL_IN_USE`: a pool being deleted still has allocations, or a change of its ranges would leave
 *   held addresses outside it. Do: delete or move those allocations first (or keep their addresses
 *   inside the ranges).
 * - `PROVISIONER_FAILED`: a provisioner's platform (EC2, the Kubernetes API) could not be asked,
 *   refused a call, answered unexpectedly or not in time (a call is given up on after 5 minutes,
 *   `check` after its `--timeout`); the message says what was left changed. Do: make the platform
 *   reachable with valid credentials and the permissions the message names, then run again.
 * - `INVALID_STATE`: something this package stored is not as it wrote it (a pool definition, the
 *   holder queue file, a ledger claim). Do: run the program again (it writes the queue anew); if
 *   state was edited by hand, restore it.
 * - `VERSION_MISMATCH`: state or a config names a provider or provisioner this installed version
 *   does not have; or a shared pool's definition has a newer format than this version knows, or
 *   was rewritten by a version from before formats that dropped its markers or quotas (the message
 *   names the pool, the format or what was dropped, and the stack that wrote it). Do: install the
 *   version of pulumi-egress-ipam that wrote the stack, or one that has the provisioner; for a
 *   shared pool, upgrade this stack (a newer format), or upgrade the stack the message names and
 *   run its `pulumi up` (a rewrite).
 * - `UNEXPECTED`: an error that is not an IpamError reached the engine or the CLI: a bug of this
 *   package, or a failure of a library underneath that it does not recognise. Do: report it with the
 *   message (the CLI prints the stack trace with `PULUMI_EGRESS_IPAM_DEBUG=1`).
 */
export type IpamErrorCode =
  | "INVALID_ADDRESS"
  | "HOST_BITS_SET"
  | "NETWORK_TOO_SMALL"
  | "INVALID_RANGE"
  | "EMPTY_RANGE_SET"
  | "MIXED_FAMILIES"
  | "OVERLAPPING_RANGES"
  | "NOT_IN_RANGE"
  | "IP_UNAVAILABLE"
  | "PREFIX_NOT_ALLOWED"
  | "QUOTA_EXCEEDED"
  | "POOL_EXHAUSTED"
  | "DUPLICATE_ALLOCATION"
  | "INVALID_CONFIG"
  | "INVALID_INPUT"
  | "NO_NETWORK"
  | "NO_STORAGE"
  | "LOCK_TIMEOUT"
  | "LEDGER_UNAVAILABLE"
  | "LEDGER_FULL"
  | "STACK_MISMATCH"
  | "CONFLICT"
  | "ADDRESS_IN_USE"
  | "TAKEN_OVER"
  | "UNMANAGED_OBJECT"
  | "SCOPE_CONFLICT"
  | "NOT_FOUND"
  | "HOST_UNAVAILABLE"
  | "DRIFT"
  | "POOL_CHANGED"
  | "POOL_IN_USE"
  | "PROVISIONER_FAILED"
  | "INVALID_STATE"
  | "VERSION_MISMATCH"
  | "UNEXPECTED";

/**
 * The one error class of the package. `code` is stable public API; `message` names the offending
 * value and, where there is one, the range set or network it was checked against.
 */
export class IpamError extends Error {
  /** Stable machine-readable reason; see {@link IpamErrorCode}. */
  readonly code: IpamErrorCode;

  /**
   * @param code - the stable reason.
   * @param message - human-readable text naming the value and the pool.
   * @param options - `cause`: the error this one reports (a client's, kept for debugging).
   */
  constructor(code: IpamErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "IpamError";
    this.code = code;
  }
}

/**
 * True when `err` is an {@link IpamError}, optionally with the given code. Works across copies of the
 * package (checks `name` and `code` rather than `instanceof`).
 */
export function isIpamError(err: unknown, code?: IpamErrorCode): err is IpamError {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === "IpamError" && typeof e.code === "string" && (code === undefined || e.code === code);
}

/** The code of a thrown value: an IpamError's own, else `fallback` (`UNEXPECTED` unless given). */
export const codeOf = (err: unknown, fallback: IpamErrorCode = "UNEXPECTED"): IpamErrorCode =>
  isIpamError(err) ? err.code : fallback;

/**
 * The code a boundary (the engine's, the CLI's) shows a thrown value with: an IpamError's own; an
 * abort by timeout (`TimeoutError`: the package's only timeouts bound provisioner calls)
 * `PROVISIONER_FAILED`; anything else `UNEXPECTED`.
 */
export const boundaryCode = (err: unknown): IpamErrorCode =>
  codeOf(
    err,
    (err as { name?: unknown } | null)?.name === "TimeoutError" ? "PROVISIONER_FAILED" : "UNEXPECTED",
  );

/**
 * Matches a message in the form {@link codedMessage} writes, capturing the code: how tests and tools
 * find the code of a printed error.
 */
export const codedPattern = /^\[([A-Z][A-Z_]*[A-Z])\] /;

/**
 * `message` as it is handed to the user: `[CODE] message`. A message that starts with a code already
 * (a failure turned into an error on its way out) is left as it is.
 */
export function codedMessage(code: IpamErrorCode, message: string): string {
  return codedPattern.test(message) ? message : `[${code}] ${message}`;
}
