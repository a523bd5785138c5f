package waterfall

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Rebuild is f for another metric: metric held through every step ("":
// the default decode → effective switch, its step last), recomputed from
// f's configurations without running anything. f is not changed.
func Rebuild(f *File, metric string) (*File, error) {
	if metric != "" && !slices.Contains(Metrics, metric) {
		return nil, fmt.Errorf("metric %q: want one of %s", metric, joinMetrics())
	}
	g, err := clone(f)
	if err != nil {
		return nil, err
	}
	g.Metric = metric
	g.Skipped = slices.DeleteFunc(g.Skipped, func(s Skipped) bool { return s.Pin == PinMetric })
	if metric == "" {
		withMetric := func(o []string) []string {
			if slices.Contains(o, PinMetric) {
				return o
			}
			return append(slices.Clone(o), PinMetric)
		}
		g.Order = withMetric(g.Order)
		for i, o := range g.Attribution.Orders {
			if o.Name == "reverse" {
				g.Attribution.Orders[i].Pins = append([]string{PinMetric}, slices.DeleteFunc(slices.Clone(o.Pins), func(p string) bool { return p == PinMetric })...)
				continue
			}
			g.Attribution.Orders[i].Pins = withMetric(o.Pins)
		}
		g.Start.Pins[PinMetric], g.End.Pins[PinMetric] = SwitchFrom, SwitchTo
	} else {
		drop := func(o []string) []string {
			return slices.DeleteFunc(slices.Clone(o), func(p string) bool { return p == PinMetric })
		}
		g.Order = drop(g.Order)
		for i, o := range g.Attribution.Orders {
			g.Attribution.Orders[i].Pins = drop(o.Pins)
		}
		g.Skipped = append(g.Skipped, Skipped{Pin: PinMetric, Value: metric, Reason: "held: --metric " + metric})
		g.Start.Pins[PinMetric], g.End.Pins[PinMetric] = metric, metric
	}
	if err := Fill(g); err != nil {
		return nil, err
	}
	return g, nil
}

// clone deep-copies f (its runs shared: Rebuild does not change them).
func clone(f *File) (*File, error) {
	runs := f.Runs
	c := *f
	c.Runs = nil
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var g File
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, err
	}
	g.Runs = runs
	return &g, nil
}

func joinMetrics() string {
	s := ""
	for i, m := range Metrics {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	return s
}
