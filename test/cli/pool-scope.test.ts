import { describe, expect, it } from "vitest";
import { poolScope } from "../../provider/cli/pool-scope";
import { resolvePool } from "../../provider/resources/pool/pool-spec";
import type { StackPool } from "../../provider/cli/stack-pools";

const pool = (id: string, subnet: string): StackPool => ({
  id,
  pool: resolvePool({ ranges: [{ subnet }] }).pool!,
});
const root = pool("root", "10.0.0.0/8");
const child = pool("child", "10.0.1.0/24");
// root holds the child's block and an address; the child holds a /28 and an address.
const scope = poolScope([
  { pool: "root", ip: "10.0.1.0/24" },
  { pool: "root", ip: "10.2.0.5" },
  { pool: "child", ip: "10.0.1.16/28" },
  { pool: "child", ip: "10.0.1.5" },
]);

describe("poolScope", () => {
  it.each<[string, StackPool, string, boolean]>([
    ["an address of the root outside its blocks", root, "10.3.0.9", true],
    ["an address held as an address stays the pool's", root, "10.2.0.5", true],
    ["an address inside the root's block is not the root's", root, "10.0.1.5", false],
    ["it is the child pool's, made of that block", child, "10.0.1.5", true],
    ["an address inside a block of the child is nobody's", child, "10.0.1.20", false],
    ["an address outside the pool's ranges", child, "10.0.2.1", false],
  ])("%s: %s %s → %s", (_what, p, ip, expected) => {
    expect(scope.answersFor(p, ip)).toBe(expected);
  });
});
