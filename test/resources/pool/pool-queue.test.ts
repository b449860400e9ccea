import { describe, expect, it } from "vitest";
import {
  encodeHolder,
  urnPrefix,
  type QueuedHolder,
} from "../../../provider/resources/pool/pool-queue-codec";
import { QueueFileWriter } from "../../../provider/resources/pool/pool-queue-file";
import { readQueue, unknownAhead } from "../../../provider/resources/pool/pool-queue";

// The value the engine sends for an input not known yet (provider/core/unknowns.ts).
const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const urn = (name: string) => `urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;

describe("a pool's queue read from its file", () => {
  // first: automatic, its observer (index 0) not known at preview; fixed: a requested address;
  // second: automatic. The engine may check fixed before second.
  const holders: QueuedHolder[] = [
    { owner: urn("first"), observer: 0 },
    { owner: urn("fixed"), ip: "10.0.10.12" },
    { owner: urn("second") },
  ];
  const writer = new QueueFileWriter();
  const refs = holders.map((h, i) =>
    writer.append(encodeHolder(h, urnPrefix(h.owner), i > 0 ? holders[i - 1]!.owner : undefined)),
  );
  const observers = [{ kind: "none", hosts: { a: [unknownValue] } }];

  it("keeps a holder waiting for an unknown observer ahead of every later check, whichever comes first", () => {
    const fixed = readQueue({ observers, ...refs[1]! }, urn("fixed"))!;
    expect(unknownAhead(fixed)).toEqual([urn("first")]);
    fixed.planned();
    const second = readQueue({ observers, ...refs[2]! }, urn("second"))!;
    // Planned up to fixed, but first still waits: second must be shown unknown, not planned alone.
    expect(second.holders.map((h) => h.owner)).toEqual(holders.map((h) => h.owner));
    expect(unknownAhead(second)).toEqual([urn("first")]);
  });
});
