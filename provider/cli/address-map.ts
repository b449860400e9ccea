import { type AddressFamily, formatAddress } from "../allocator/address";
import { countUnionIn, type ReadonlyIntervalSet } from "../allocator/interval-set";
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
  /** Held by a created resource (or one pending deletion). */
  held: ReadonlyIntervalSet;
  /** Planned by an interrupted create: taken, not created. */
  planned: ReadonlyIntervalSet;
  reserved: ReadonlyIntervalSet;
  gateway: ReadonlyIntervalSet;
  /** Exclusions, cloud-reserved addresses included. */
  excluded: ReadonlyIntervalSet;
  /** Every address of every range of the pool. */
  inRange: ReadonlyIntervalSet;
}

/** A drawn row: `cells.length` cells of `blockSize` addresses each, from `first`. */
export interface MapRow {
  kind: "row";
  first: string;
  cells: CellState[];
}

/**
 * Rows left out: nothing in them is held, planned, reserved or a gateway, and no exclusion or range
 * starts or ends there, so each is all free, all excluded or all outside the ranges.
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
 * where an exclusion or a range begins or ends); the rows between them become gaps. Otherwise the
 * block size doubles until they fit. Only interval boundaries are walked, never addresses, so an
 * IPv6 /64 costs what a /24 costs.
 * @throws IpamError for a subnet that is not a CIDR.
 */
export function mapSubnet(subnet: string, layers: MapLayers, shape: MapShape = defaultShape): SubnetMap {
  const { family, network, last } = parsePrefix(subnet, "subnet");
  const columns = BigInt(shape.columns);
  const size = last - network + 1n;
  for (let block = 1n; ; block *= 2n) {
    const span = block * columns;
    const totalRows = (size + span - 1n) / span;
    const rows =
      totalRows <= BigInt(shape.maxRows) ? allRows(totalRows) : tellingRows(layers, network, last, span);
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
function tellingRows(layers: MapLayers, network: bigint, last: bigint, span: bigint): bigint[] {
  const row = (value: bigint) => (value - network) / span;
  const ranges: [bigint, bigint][] = [];
  for (const name of marked) {
    for (const [s, e] of layers[name].intervals(network, last)) ranges.push([row(s), row(e)]);
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
  const excluded = layers.excluded.countIn(from, to);
  const covered = countUnionIn(layers.inRange, layers.excluded, from, to);
  return {
    kind: "gap",
    first: formatAddress(family, from),
    last: formatAddress(family, to),
    free: (covered - excluded).toString(),
    excluded: excluded.toString(),
    outside: (to - from + 1n - covered).toString(),
  };
}
