package main

import (
	"github.com/spf13/pflag"

	"github.com/sixpin/sixpin/harness"
)

// addLiveFlags adds the flags that watch a run from outside: the live
// page and sixpin's own metrics.
func addLiveFlags(fl *pflag.FlagSet, c *harness.Config) {
	fl.StringVar(&c.Live, "live", "", "serve a live page of the run at ADDR (HOST:PORT, e.g. 127.0.0.1:8089; loopback only unless --live-remote)")
	fl.BoolVar(&c.LiveKeep, "live-keep", false, "keep the live page up at the end, showing the final report, until Ctrl-C")
	fl.BoolVar(&c.LiveRemote, "live-remote", false, "let --live listen on a non-loopback address (anyone who reaches it sees the run's target and figures)")
	fl.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve sixpin's own live metrics for Prometheus at http://ADDR/metrics (e.g. :9464)")
}
