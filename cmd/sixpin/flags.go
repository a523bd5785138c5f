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
	fl.BoolVar(&c.LiveRemote, "live-remote", false, "let --live listen on a non-loopback address, a bare :PORT on every interface (anyone who reaches it sees the run's target and figures)")
	fl.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve sixpin's own live metrics for Prometheus at http://ADDR/metrics (HOST:PORT, e.g. :9464 on 127.0.0.1; loopback only unless --metrics-remote)")
	fl.BoolVar(&c.MetricsRemote, "metrics-remote", false, "let --metrics-addr listen on a non-loopback address, a bare :PORT on every interface, for a Prometheus on another machine (anyone who reaches it sees the run's figures)")
}

// addTargetFlags adds the flags that pick the endpoint a command runs
// against and how its prompts are counted.
func addTargetFlags(fl *pflag.FlagSet, c *harness.Config) {
	fl.StringVar(&c.Profile, "profile", "", "endpoint profile: an embedded NAME (sixpin profiles list) or a YAML FILE")
	fl.StringVar(&c.Endpoint, "endpoint", "", "the endpoint's base URL, e.g. http://127.0.0.1:8080/v1 (spoken to in the profile's protocol: chat unless it says otherwise)")
	fl.StringVar(&c.Model, "model", "", "model id to request (default: the profile's, else the scenario's model pin)")
	fl.StringVar(&c.Tokenizer, "tokenizer", "", "whose count prompts are built to: server (the endpoint's /tokenize), qwen2, cl100k_base, o200k_base, words, or hf:PATH/tokenizer.json (a bare PATH to a tokenizer file works too; default: the profile's)")
}

// addReadyFlag adds the flag that bounds the wait, before load, for a
// server still starting.
func addReadyFlag(fl *pflag.FlagSet, c *harness.Config) {
	fl.DurationVar(&c.ReadyTimeout, "ready-timeout", harness.DefaultReadyTimeout, "before load, wait up to this long for a server still starting (not listening yet, or answering 503 Loading model) to be ready (0: don't wait)")
}
