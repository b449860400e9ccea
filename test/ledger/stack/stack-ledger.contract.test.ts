// The Ledger contract (../ledger-contract.ts) against the stack ledger, on fabricated checkpoints.
import { stackLedger } from "../../../provider/ledger/stack/stack-ledger";
import { ledgerContract } from "../ledger-contract";

let n = 0;
ledgerContract("stackLedger", async () => {
  // A fresh stack per case: the ledger's books are process-wide by design. "Another process" of the
  // same stack cannot be made in one process, so `again` is the same book (what the stack ledger
  // keeps across processes is the checkpoint, covered by stack-ledger.test.ts).
  const stack = `org/proj/contract-${n++}`;
  const ledger = stackLedger({ stack, load: async () => [] });
  return { ledger, again: () => stackLedger({ stack, load: async () => [] }), pool: "urn:pool" };
});
