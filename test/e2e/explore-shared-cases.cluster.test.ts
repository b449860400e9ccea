// The explorer's regression cases of shared worlds (test/explore/cases/*.json with `shared`: the
// program's pools on a ledger of the test cluster, and a tenant stack), replayed as
// explore-cases.test.ts replays the others (test/explore/cases-replay.ts).
import { exploreCases, replayCases } from "../explore/cases-replay";

replayCases(exploreCases(true));
