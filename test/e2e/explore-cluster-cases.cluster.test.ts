// The explorer's regression cases that need the cluster project's builds (test/explore/cases/*.json
// of shared worlds, with pools on a ledger of the test cluster and a tenant stack, and of YAML
// worlds, through the plugin and the YAML language host), replayed as explore-cases.test.ts replays
// the others (test/explore/cases-replay.ts).
import { exploreCases, replayCases } from "../explore/cases-replay";

replayCases(exploreCases(true));
