// Pools made of blocks: a pool whose ranges lie inside a block held in another pool of the stack
// (`new IpPool("prod-subnets", { ranges: [{ subnet: prod.cidr }] })`) is that block's child. The
// report shows it under the block: parent pool → block → child pool → its holders.
import { parseAddress } from "../allocator/address";
import { entrySpan, type EntrySpan } from "../ledger/held-entry";
import type { BlockHolder } from "./holder";

/** The block a pool is made of, and the pool that holds it. */
export interface PoolParent {
  /** The URN of the pool holding the block. */
  pool: string;
  /** That pool's logical name. */
  name: string;
  /** The block, e.g. `10.0.0.0/16`. */
  block: string;
  /** The URN of the block's holder (a PrefixAllocation). */
  owner: string;
}

/** What linking needs of a pool's usage. */
export interface PoolNode {
  /** The pool's URN. */
  pool: string;
  name: string;
  ranges: { rangeStart: string; rangeEnd: string }[];
  blocks: BlockHolder[];
  parent?: PoolParent;
}

const inside = (inner: EntrySpan, outer: EntrySpan) =>
  inner.family === outer.family && inner.start >= outer.start && inner.end <= outer.end;

/** The spans of a pool's ranges (`rangeStart` to `rangeEnd`). */
function rangeSpans(u: PoolNode): EntrySpan[] {
  return u.ranges.map((r) => {
    const start = parseAddress(r.rangeStart);
    return { family: start.family, start: start.value, end: parseAddress(r.rangeEnd).value };
  });
}

/**
 * Links each pool to the block it is made of: the smallest block, held in another of `usages`, that
 * every range of the pool lies inside. Sets the pool's `parent` and lists it in the block's `pools`;
 * a link that would close a loop (two pools each inside the other's block) is left out. Returns the
 * pools in tree order: `usages`' order for the pools made of no block shown, each followed by the
 * pools made of its blocks (by block, then as in `usages`), depth first.
 */
export function linkPools<T extends PoolNode>(usages: T[]): T[] {
  const blocks = usages.flatMap((u) => u.blocks.map((b) => ({ u, b, span: entrySpan(b.cidr) })));
  const parentOf = new Map<T, { u: T; b: BlockHolder }>();
  for (const child of usages) {
    const spans = rangeSpans(child);
    let best: (typeof blocks)[number] | undefined;
    for (const c of blocks) {
      if (c.u === child || !spans.every((s) => inside(s, c.span))) continue;
      if (!best || c.span.end - c.span.start < best.span.end - best.span.start) best = c;
    }
    if (best) parentOf.set(child, best);
  }
  for (const child of usages) {
    // A walk up that comes back to the pool is a loop: the first pool of it found becomes a root.
    const seen = new Set<T>();
    let at = parentOf.get(child)?.u;
    while (at && at !== child && !seen.has(at)) {
      seen.add(at);
      at = parentOf.get(at)?.u;
    }
    if (at === child) parentOf.delete(child);
  }
  const children = new Map<BlockHolder, T[]>();
  for (const child of usages) {
    const link = parentOf.get(child);
    if (!link) continue;
    const { u, b } = link;
    child.parent = { pool: u.pool, name: u.name, block: b.cidr, owner: b.owner };
    b.pools = [...(b.pools ?? []), { pool: child.pool, name: child.name }];
    children.set(b, [...(children.get(b) ?? []), child]);
  }
  const ordered: T[] = [];
  const visit = (u: T) => {
    ordered.push(u);
    for (const b of u.blocks) for (const c of children.get(b) ?? []) visit(c);
  };
  for (const u of usages) if (!parentOf.has(u)) visit(u);
  return ordered;
}

/**
 * How deep each pool of a tree-ordered list sits: 0 for one whose parent pool is not in the list,
 * else one more than its parent's.
 */
export function treeDepths(usages: readonly PoolNode[]): number[] {
  const depth = new Map<string, number>();
  return usages.map((u) => {
    const d = u.parent && depth.has(u.parent.pool) ? depth.get(u.parent.pool)! + 1 : 0;
    depth.set(u.pool, d);
    return d;
  });
}
