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
	conns := connections(plan)
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

// connections is how many connections a run holds at most: a closed
// loop's streams, an open loop's max_in_flight (0: not known before load).
func connections(plan *scenario.Plan) int {
	if c := plan.Scenario().Pins.Concurrency; c.Mode == scenario.ModeOpen {
		return plan.MaxInFlight()
	}
	return plan.Streams()
}

// A run of manyConnections or more runs the collector at leanGCPercent
// (Config.SetGCPercent). Its heap is then mostly the streams' own (stacks,
// one request's objects each), and it allocates little once its streams
// are open — nothing per token — so the collector runs seldom whatever its
// target, where Go's 100 lets the heap grow to twice what is live before
// collecting. At 10,000 streams against the simulator (three runs each,
// 2026-12-03): peak RSS 311 MB at 100 (30 KiB a stream, one run), 240–258
// at 40, 217–238 at 30 (21.7–23.8 KiB); CPU per request 0.26, 0.23 and
// 0.25 ms — the collector's share grows (user time 0.14 → 0.16 ms a
// request) as the kernel's falls, within this machine's noise.
const (
	manyConnections = 2048
	leanGCPercent   = 30
)

// gcPercent is the collector's target for a run that holds conns
// connections: 0 to leave it as it is.
func gcPercent(conns int) int {
	if conns >= manyConnections {
		return leanGCPercent
	}
	return 0
}
