// The explorer's regression cases of local and cloud worlds (test/explore/cases/*.json), replayed
// (test/explore/cases-replay.ts); those of shared worlds, which need the test cluster, are
// explore-cluster-cases.cluster.test.ts's.
import { exploreCases, replayCases } from "../explore/cases-replay";

replayCases(exploreCases(false));
