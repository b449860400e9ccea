import { describe, expect, it } from "vitest";
import { readRecord, recordProps } from "../../../provider/ledger/stack/allocation-record";

const pool = "urn:pulumi:dev::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool";
const owner = "urn:pulumi:dev::p::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::web";
const record = { pool, owner, ips: ["10.0.8.7"], seq: 4 };
const own = { poolId: pool, owner, ips: ["10.0.8.7"] };

describe("allocation records", () => {
  it("writes the record as the holder's own poolId, owner and ips, and a plain seq", () => {
    expect(recordProps(record)).toEqual({ ...own, seq: 4 });
  });

  // Every format a released version wrote must keep its address: state outlives versions.
  it.each([
    ["this version's", { ...own, seq: 4 }, record],
    ["a requested address (seq 0)", { ...own, seq: 0 }, { ...record, seq: 0 }],
    ["the previous version's allocation: { seq }", { ...own, allocation: { seq: 4 } }, record],
    ["the first versions' whole record", { stack: "o/p/s", allocation: record }, record],
    ["a whole record without seq", { allocation: { pool, owner, ips: ["10.0.8.7"] } }, { ...record, seq: 0 }],
  ])("reads %s", (_what, props, expected) => {
    expect(readRecord(props)).toEqual(expected);
  });

  it.each([
    ["no record", { poolId: pool, owner, ips: ["10.0.8.7"] }],
    ["a pool's outputs", { poolId: pool, stack: "o/p/s", size: "254" }],
    ["ips that are not strings", { ...own, ips: [7], seq: 1 }],
    ["no owner", { poolId: pool, ips: ["10.0.8.7"], seq: 1 }],
    ["a seq that is not a number", { ...own, seq: "4" }],
  ])("finds nothing in %s", (_what, props) => {
    expect(readRecord(props)).toBeUndefined();
  });
});
