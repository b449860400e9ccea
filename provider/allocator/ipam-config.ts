import { formatAddress, parseAddress } from "./address";
import { parseCniArgs } from "./cni-args";
import { IpamError, isIpamError } from "../core/ipam-error";
import { parsePrefix } from "./prefix";
import { resolveRange, type RangeInit } from "./range";
import { RangeSet } from "./range-set";
import { shown } from "../core/text";

/** A route as a CNI config writes it; passed through unchanged. */
export interface IpamRoute {
  /** Destination CIDR. */
  dst: string;
  /** Next hop; the interface's gateway when absent. */
  gw?: string;
}

/** The IPAM part of a CNI network config, loaded and checked the way host-local does. */
export interface IpamConfig {
  /** The network name (top-level `name`). */
  name: string;
  /** `ipam.type`, e.g. "host-local". */
  type: string;
  /** Canonical range sets: runtimeConfig.ipRanges, then the legacy top-level range, then ipam.ranges. */
  ranges: RangeSet[];
  /** Requested addresses, canonical, without prefix length: CNI_ARGS `IP=`, args.cni.ips, runtimeConfig.ips. */
  ipArgs: string[];
  /** `ipam.routes`, when given. */
  routes?: IpamRoute[];
  /** `ipam.dataDir`, when given (host-local's disk store location; unused here). */
  dataDir?: string;
  /** `ipam.resolvConf`, when given. */
  resolvConf?: string;
}

/** What {@link loadIpamConfig} returns. */
export interface LoadedIpamConfig {
  config: IpamConfig;
  /** The config's `cniVersion` as written ("" when absent). */
  cniVersion: string;
}

type Json = { [key: string]: unknown };

/**
 * Loads a CNI network config the way host-local's LoadIPAMConfig does.
 *
 * @param bytes - the config JSON as a string, Buffer or Uint8Array (UTF-8).
 * @param envArgs - the CNI_ARGS string (`IP=10.0.0.5;IgnoreUnknown=1`), if any.
 * @throws IpamError with the range set's own code (OVERLAPPING_RANGES, MIXED_FAMILIES,
 *   EMPTY_RANGE_SET, HOST_BITS_SET, …) and a message naming the range set index for a bad range set or
 *   two overlapping sets ("range set 1 overlaps with 0"); INVALID_CONFIG for everything else (bad
 *   JSON, missing `ipam`, no ranges, a bad requested IP, more than one address per family before CNI
 *   0.3.0, bad CNI_ARGS).
 */
export function loadIpamConfig(bytes: string | Uint8Array, envArgs?: string): LoadedIpamConfig {
  const net = parseJson(bytes);
  const ipam = net.ipam;
  if (!isObject(ipam)) throw invalid("the network config has no 'ipam' object");
  const cniVersion = optionalString(net.cniVersion, "cniVersion") ?? "";

  const ipArgs: string[] = [];
  const envIp = parseCniArgs(envArgs ?? "").IP;
  if (envIp !== undefined) ipArgs.push(requestedIp(envIp, "CNI_ARGS IP"));
  const cniArgs = isObject(net.args) && isObject(net.args.cni) ? net.args.cni.ips : undefined;
  for (const ip of list(cniArgs, "args.cni.ips")) ipArgs.push(requestedIp(ip, "args.cni.ips"));
  const runtime = isObject(net.runtimeConfig) ? net.runtimeConfig : {};
  for (const ip of list(runtime.ips, "runtimeConfig.ips")) ipArgs.push(requestedIp(ip, "runtimeConfig.ips"));

  const sets: unknown[] = [...list(runtime.ipRanges, "runtimeConfig.ipRanges")];
  if (typeof ipam.subnet === "string" && ipam.subnet !== "") {
    sets.push([
      { subnet: ipam.subnet, rangeStart: ipam.rangeStart, rangeEnd: ipam.rangeEnd, gateway: ipam.gateway },
    ]);
  }
  sets.push(...list(ipam.ranges, "ipam.ranges"));
  if (sets.length === 0) throw invalid("no IP ranges specified");
  const ranges = sets.map((s, i) => canonicalSet(s, i));

  const perFamily = { 4: 0, 6: 0 };
  for (const set of ranges) {
    const first = set.ranges[0];
    if (first !== undefined) perFamily[resolveRange(first).family]++;
  }
  if ((perFamily[4] > 1 || perFamily[6] > 1) && !atLeast030(cniVersion)) {
    throw invalid(`CNI version ${shown(cniVersion)} does not support more than one address per family`);
  }
  for (let j = 1; j < ranges.length; j++) {
    for (let i = 0; i < j; i++) {
      const [a, b] = [ranges[i], ranges[j]];
      if (a !== undefined && b !== undefined && b.overlaps(a)) {
        throw new IpamError("OVERLAPPING_RANGES", `range set ${j} overlaps with ${i} (${b} and ${a})`);
      }
    }
  }

  const config: IpamConfig = {
    name: optionalString(net.name, "name") ?? "",
    type: optionalString(ipam.type, "ipam.type") ?? "",
    ranges,
    ipArgs,
  };
  if (ipam.routes !== undefined) config.routes = list(ipam.routes, "ipam.routes").map(route);
  const dataDir = optionalString(ipam.dataDir, "ipam.dataDir");
  if (dataDir !== undefined) config.dataDir = dataDir;
  const resolvConf = optionalString(ipam.resolvConf, "ipam.resolvConf");
  if (resolvConf !== undefined) config.resolvConf = resolvConf;
  return { config, cniVersion };
}

function canonicalSet(raw: unknown, index: number): RangeSet {
  if (!Array.isArray(raw)) throw invalid(`range set ${index} is not a list of ranges`);
  const inits = raw.map((r, k): RangeInit => {
    if (!isObject(r)) throw invalid(`range ${k} of range set ${index} is not an object`);
    // As with Go's JSON decoding into net.IP, an empty or null bound means "not set".
    const opt = (v: unknown): string | undefined =>
      v === undefined || v === null || v === "" ? undefined : (v as string);
    return {
      subnet: r.subnet as string,
      rangeStart: opt(r.rangeStart),
      rangeEnd: opt(r.rangeEnd),
      gateway: opt(r.gateway),
    };
  });
  try {
    return new RangeSet(inits).canonicalize();
  } catch (err) {
    if (isIpamError(err)) throw new IpamError(err.code, `invalid range set ${index}: ${err.message}`);
    throw err;
  }
}

/** An `ip` or `ip/len` (host bits allowed) as a canonical address without prefix length. */
function requestedIp(raw: unknown, where: string): string {
  try {
    if (typeof raw !== "string") throw invalid("not a string");
    const a = raw.includes("/") ? parsePrefix(raw, where) : parseAddress(raw, where);
    return formatAddress(a.family, "address" in a ? a.address : a.value);
  } catch {
    throw invalid(`${where}: ${shown(raw)} is not an IP address`);
  }
}

function atLeast030(version: string): boolean {
  if (version === "") return false; // no version declared means 0.1.0
  const parts = version.split(".");
  if (parts.length > 3 || !parts.every((p) => /^[0-9]+$/.test(p))) return false;
  const [major = 0, minor = 0] = parts.map(Number);
  return major > 0 || minor >= 3;
}

function route(raw: unknown, k: number): IpamRoute {
  if (!isObject(raw) || typeof raw.dst !== "string") throw invalid(`ipam.routes[${k}] needs a "dst" string`);
  const gw = optionalString(raw.gw, `ipam.routes[${k}].gw`);
  return gw === undefined ? { dst: raw.dst } : { dst: raw.dst, gw };
}

function parseJson(bytes: string | Uint8Array): Json {
  let value: unknown;
  try {
    value = JSON.parse(typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes));
  } catch (err) {
    throw invalid(`the network config is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw invalid("the network config is not a JSON object");
  return value;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(`${where} is not a list`);
  return value;
}

function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalid(`${where} is not a string`);
  return value;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(message: string): IpamError {
  return new IpamError("INVALID_CONFIG", message);
}
