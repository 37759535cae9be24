package harness

import (
	"slices"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// ShardOf keeps the scenarios of ss that shard k of n runs (shard.Split),
// in their order; controllers weigh them.
func ShardOf(suite string, ss []*scenarios.Scenario, controllers []string, k, n int) []*scenarios.Scenario {
	keep := measured().Shard(suite, scenarios.Names(ss), controllers, k, n)
	return slices.DeleteFunc(slices.Clone(ss), func(s *scenarios.Scenario) bool { return !keep[s.Name] })
}

// MyShard is ShardOf for this suite process's --shard (Settings).
func MyShard(suite string, ss []*scenarios.Scenario, cs []runner.Controller) []*scenarios.Scenario {
	st, _ := Settings() // a bad setting is reported by whoever read it first
	k, n, _ := options.ParseShard(st.Run.Shard)
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return ShardOf(suite, ss, names, k, n)
}

// FirstShard tells whether this suite process runs the first shard (or
// the whole): the specs that are no scenario's run — checks of the
// harness itself — run there only, once per sharded run.
func FirstShard() bool {
	st, _ := Settings()
	k, _, _ := options.ParseShard(st.Run.Shard)
	return k <= 1
}
