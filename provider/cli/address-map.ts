import { type AddressFamily, formatAddress } from "../allocator/address";
import { countUnionIn, IntervalSet, type ReadonlyIntervalSet } from "../allocator/interval-set";
import { parsePrefix } from "../allocator/prefix";

/**
 * What one cell of the map shows, in order of precedence: a cell covering several addresses shows
 * the first state any of them has (a block with one held address is a held cell).
 */
export const cellStates = ["held", "planned", "reserved", "gateway", "excluded", "free", "outside"] as const;

/** The state of a cell: see {@link cellStates}. `outside`: in the subnet, in none of the pool's ranges. */
export type CellState = (typeof cellStates)[number];

/** The address sets of one family that the map is drawn from (absolute address values). */
export interface MapLayers {
  /** Held by a created resource (or one pending deletion), the addresses of held blocks included. */
  held: ReadonlyIntervalSet;
  /** Planned by an interrupted create: taken, not created. */
  planned: ReadonlyIntervalSet;
  reserved: ReadonlyIntervalSet;
  gateway: ReadonlyIntervalSet;
  /** Exclusions, cloud-reserved addresses included. */
  excluded: ReadonlyIntervalSet;
  /** Every address of every range of the pool. */
  inRange: ReadonlyIntervalSet;
  /**
   * The first and last address of each held and planned block (its addresses are also in `held` or
   * `planned`): inside a block only the rows where it begins or ends are telling, so a /16 of a /8
   * costs two rows, never its addresses, and two blocks side by side still show where they meet.
   */
  blocks?: readonly (readonly [bigint, bigint])[];
}

/** A drawn row: `cells.length` cells of `blockSize` addresses each, from `first`. */
export interface MapRow {
  kind: "row";
  first: string;
  cells: CellState[];
}

/**
 * Rows left out: nothing in them is held, planned, reserved or a gateway except inside a block, and
 * no block, exclusion or range starts or ends there, so each is all of one kind: inside a held (or
 * planned) block, free, excluded or outside the ranges.
 */
export interface MapGap {
  kind: "gap";
  first: string;
  last: string;
  /** Free addresses in the gap, as a decimal string. */
  free: string;
  /** Excluded addresses in the gap, as a decimal string. */
  excluded: string;
  /** Addresses of the gap outside the pool's ranges, as a decimal string. */
  outside: string;
  /** Addresses of the gap in held blocks, as a decimal string; only when there are any. */
  held?: string;
  /** Addresses of the gap in planned (not created) blocks, as a decimal string; only when there are any. */
  planned?: string;
}

/** The map of one subnet of a pool. */
export interface SubnetMap {
  subnet: string;
  family: AddressFamily;
  /** Addresses per cell, as a decimal string (a power of two). */
  blockSize: string;
  /** Cells per row. */
  columns: number;
  /** Rows and gaps in address order. */
  lines: (MapRow | MapGap)[];
}

/** Limits of a map: rows are `columns` cells wide, and at most `maxRows` rows are drawn. */
export interface MapShape {
  columns: number;
  maxRows: number;
}

/** 64 cells a row (four groups of 16), at most 16 rows: a /22 fits address by address. */
export const defaultShape: MapShape = { columns: 64, maxRows: 16 };

const marked = ["held", "planned", "reserved", "gateway"] as const;
const precedence = [...marked, "excluded"] as const;
/**
 * Maps one subnet of a pool. Cells are single addresses when the whole subnet fits in `maxRows`
 * rows, or when the telling rows do (those with a held, planned, reserved or gateway address, or
 * where a held block, an exclusion or a range begins or ends); the rows between them become gaps.
 * Otherwise the cell size doubles until they fit. Only interval boundaries are walked, never
 * addresses, so an IPv6 /64 costs what a /24 costs, and a held /64 of a /48 what a held address does.
 * @throws IpamError for a subnet that is not a CIDR.
 */
export function mapSubnet(subnet: string, layers: MapLayers, shape: MapShape = defaultShape): SubnetMap {
  const { family, network, last } = parsePrefix(subnet, "subnet");
  const columns = BigInt(shape.columns);
  const size = last - network + 1n;
  const inBlocks = new IntervalSet(layers.blocks ?? []);
  for (let block = 1n; ; block *= 2n) {
    const span = block * columns;
    const totalRows = (size + span - 1n) / span;
    const rows =
      totalRows <= BigInt(shape.maxRows)
        ? allRows(totalRows)
        : tellingRows(layers, inBlocks, network, last, span);
    if (rows.length <= shape.maxRows || span >= size) {
      const lines: (MapRow | MapGap)[] = [];
      let next = network;
      for (const r of rows) {
        const first = network + r * span;
        if (first > next) lines.push(gap(family, layers, next, first - 1n));
        const cells: CellState[] = [];
        for (let c = 0n; c < columns && first + c * block <= last; c++) {
          const from = first + c * block;
          const to = from + block - 1n > last ? last : from + block - 1n;
          cells.push(cellState(layers, from, to));
        }
        lines.push({ kind: "row", first: formatAddress(family, first), cells });
        next = first + span;
      }
      if (next <= last) lines.push(gap(family, layers, next, last));
      return { subnet, family, blockSize: block.toString(), columns: shape.columns, lines };
    }
  }
}

function allRows(count: bigint): bigint[] {
  const out: bigint[] = [];
  for (let i = 0n; i < count; i++) out.push(i);
  return out;
}

/** Indexes of the telling rows of `span` addresses (see {@link mapSubnet}), sorted. */
function tellingRows(
  layers: MapLayers,
  inBlocks: ReadonlyIntervalSet,
  network: bigint,
  last: bigint,
  span: bigint,
): bigint[] {
  const row = (value: bigint) => (value - network) / span;
  const ranges: [bigint, bigint][] = [];
  for (const name of marked) {
    for (const [s, e] of layers[name].intervals(network, last)) {
      // Inside a block only its first and last rows tell (below): the rest folds into a gap.
      let at = s;
      for (const [bs, be] of inBlocks.intervals(s, e)) {
        if (bs > at) ranges.push([row(at), row(bs - 1n)]);
        at = be + 1n;
      }
      if (at <= e) ranges.push([row(at), row(e)]);
    }
  }
  for (const [s, e] of layers.blocks ?? []) {
    if (e < network || s > last) continue;
    ranges.push([row(s < network ? network : s), row(s < network ? network : s)]);
    ranges.push([row(e > last ? last : e), row(e > last ? last : e)]);
  }
  for (const name of ["excluded", "inRange"] as const) {
    for (const [s, e] of layers[name].intervals(network, last)) {
      if (s > network) ranges.push([row(s), row(s)]);
      if (e < last) ranges.push([row(e), row(e)]);
    }
  }
  ranges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rows: bigint[] = [];
  for (const [from, to] of ranges) {
    // Stop early: the caller only needs to know that there are too many.
    for (let r = rows.length > 0 && rows.at(-1)! >= from ? rows.at(-1)! + 1n : from; r <= to; r++) {
      rows.push(r);
      if (rows.length > 4096) return rows;
    }
  }
  return rows;
}

function cellState(layers: MapLayers, from: bigint, to: bigint): CellState {
  for (const name of precedence) if (layers[name].countIn(from, to) > 0n) return name;
  return layers.inRange.countIn(from, to) > 0n ? "free" : "outside";
}

function gap(family: AddressFamily, layers: MapLayers, from: bigint, to: bigint): MapGap {
  // Every kind is one interval or none in a gap (boundaries make telling rows), so these sets are small.
  const clip = (...sets: ReadonlyIntervalSet[]) =>
    new IntervalSet(sets.flatMap((s) => [...s.intervals(from, to)]));
  const taken = clip(layers.held, layers.planned);
  const held = layers.held.countIn(from, to);
  const planned = taken.size - held;
  const excluded = countUnionIn(taken, layers.excluded, from, to) - taken.size;
  const covered = countUnionIn(taken, clip(layers.inRange, layers.excluded), from, to);
  return {
    kind: "gap",
    first: formatAddress(family, from),
    last: formatAddress(family, to),
    free: (covered - taken.size - excluded).toString(),
    excluded: excluded.toString(),
    outside: (to - from + 1n - covered).toString(),
    ...(held > 0n ? { held: held.toString() } : {}),
    ...(planned > 0n ? { planned: planned.toString() } : {}),
  };
}
