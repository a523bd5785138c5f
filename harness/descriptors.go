package harness

import (
	"fmt"

	"github.com/sixpin/sixpin/internal/fdlimit"
	"github.com/sixpin/sixpin/scenario"
)

// checkDescriptors refuses, before any request, a run that needs more
// open files than the process may have: one connection per stream (per
// request in flight under an open loop's max_in_flight), the server's end
// of each too when it runs in this process (inProcess), and what the run
// keeps open besides. Past the limit the connections beyond it would fail
// mid-run, each a connect error the server never caused. An open loop
// without max_in_flight, and a replay, hold what their arrivals make:
// not known before load, not checked.
func checkDescriptors(plan *scenario.Plan, inProcess bool) error {
	conns := plan.Streams()
	if c := plan.Scenario().Pins.Concurrency; c.Mode == scenario.ModeOpen {
		conns = plan.MaxInFlight()
	}
	limit, ok := fdlimit.Limit()
	if conns <= 0 || !ok {
		return nil
	}
	need := fdlimit.Need(conns, inProcess)
	if uint64(need) <= limit {
		return nil
	}
	where := fmt.Sprintf("%d connections", conns)
	if inProcess {
		where += " and the built-in simulator's end of each"
	}
	return fmt.Errorf("%w: this run needs about %d open files (%s, and %d for its files and listeners) and the process may open %d: raise the limit — `ulimit -n %d` in the shell that runs sixpin (up to its hard limit, `ulimit -Hn`), LimitNOFILE=%d in a systemd unit, `docker run --ulimit nofile=%d:%d` — or run fewer streams per process (shards: sixpin run --shard I/N)",
		ErrBadInput, need, where, fdlimit.Reserve, limit, need, need, need, need)
}
