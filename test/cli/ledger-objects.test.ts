// The size of a shared pool's objects against a ConfigMap's limit, as `report --ledger` shows it.
import { describe, expect, it } from "vitest";
import { objectsText } from "../../provider/cli/report-text";
import { configMapLimit, dataBytes } from "../../provider/ledger/kubernetes/object-sizes";

describe("object sizes", () => {
  it.each([
    [undefined, 0],
    [{}, 0],
    [{ block: "10.0.0.0/24" }, 16],
    // UTF-8 bytes, keys and values.
    [{ "p.10.0.0.5": "uid-1", é: "é" }, 15 + 4],
  ])("dataBytes(%j) = %i", (data, bytes) => expect(dataBytes(data)).toBe(bytes));

  it.each([
    [
      { name: "p.quota-0123456789abcdef", role: "quota", bytes: 524_288, keys: 9001, objects: 9003 },
      "9003 in the ledger, the largest quota counter p.quota-0123456789abcdef 524288 bytes of 1048576 (50.0 %, 9001 keys)",
    ],
    [
      { name: "p.10.0.0.0-24", role: "marker", bytes: 1_100_000, keys: 20_000, objects: 20_010 },
      "20010 in the ledger, the largest marker p.10.0.0.0-24 1100000 bytes of 1048576 (104.9 %, 20000 keys)",
    ],
    [
      { name: "p.pool", role: "pool", bytes: 355, keys: 5, objects: 1 },
      "1 in the ledger, the largest definition p.pool 355 bytes of 1048576 (0.0 %, 5 keys)",
    ],
  ])("%j", (largest, text) => expect(objectsText({ ...largest, limit: configMapLimit })).toBe(text));
});
