import { shared } from "./process-registry";

/**
 * The process's end, as a signal: aborted once this provider process is ending because its engine
 * is gone (`exitWhenEngineGone`). A call waiting its turn for a lock gives up at once instead of
 * running work nobody will read; a call already writing is let finish, within the exit's grace.
 */
export function processEnding(): AbortSignal {
  return controller().signal;
}

/** Marks the process as ending, with `reason` as what every wait that gives up rejects with. */
export function endProcess(reason: Error): void {
  controller().abort(reason);
}

const controller = () => shared("process", "ending", () => new AbortController());
