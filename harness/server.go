package harness

import (
	"fmt"
	"time"
)

// ServerMetricsOff turns scraping the server's metrics off
// (Config.ServerMetrics).
const ServerMetricsOff time.Duration = -1

// ParseServerMetrics reads `--server-metrics`: "off", or the scrape
// interval ("1s", "500ms"; run time).
func ParseServerMetrics(s string) (time.Duration, error) {
	if s == "off" {
		return ServerMetricsOff, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--server-metrics %q: want off or an interval such as 1s", s)
	}
	return d, nil
}
