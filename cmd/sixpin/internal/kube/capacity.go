package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// Capacity makes the Job a capacity search (`sixpin capacity`) sharded
// across its pods: pod 0 leads it and serves the coordination, reached
// through a headless Service at NAME-0.NAME:Port; the other pods are its
// workers. Every pod has the same arguments; each takes its own part.
// Only pod 0 writes a file: the capacity file, every point's shards
// merged.
type Capacity struct {
	// TiersFile is a tiers file; it travels in the ConfigMap. Tiers are
	// --tier flags.
	TiersFile string
	Tiers     []string
	// Min, Max, Resolution, MaxRuns, Points, Budget, MinSteady,
	// Duration, ShardTimeout and JoinTimeout are passed on as
	// `sixpin capacity`'s flags of the same names (zero: not given);
	// Seed too (nil: not given).
	Min, Max, Resolution                                   float64
	MaxRuns, Points                                        int
	Budget, MinSteady, Duration, ShardTimeout, JoinTimeout time.Duration
	Seed                                                   *int64
	// Port is where pod 0 serves the coordination (0:
	// DefaultCoordinationPort).
	Port int
}

// DefaultCoordinationPort is the port pod 0 of a capacity search serves
// its workers' coordination on.
const DefaultCoordinationPort = 7070

// capacityPoints is how many points a search without --max-runs is
// reckoned to run, for the wait's bound.
const capacityPoints = 12

// capacityArgs checks a capacity search of sc in m.Shards pods and
// returns its pods' arguments (before the target's) and the tiers file
// to ship (nil: none).
func (m *Manifest) capacityArgs(sc *scenario.Scenario, c *Capacity, scenarioPath string, simulated bool) ([]string, *configFile, error) {
	n := m.Shards
	if c.Port == 0 {
		c.Port = DefaultCoordinationPort
	}
	if c.Port < 1 || c.Port > 65535 {
		return nil, nil, badf("--coordination-port %d: want 1 to 65535", c.Port)
	}
	if c.Min < 0 || c.Max < 0 || c.Resolution < 0 || c.MaxRuns < 0 || c.Points < 0 || c.Budget < 0 || c.MinSteady < 0 || c.Duration < 0 || c.ShardTimeout < 0 || c.JoinTimeout < 0 {
		return nil, nil, badf("the capacity flags must not be negative")
	}
	axis, _, err := capacity.NewAxis(sc, c.Min, c.Max, c.Resolution)
	if err != nil {
		return nil, nil, badf("%s: %v", sc.Path, err)
	}
	var tiers []verdict.Tier
	var file *configFile
	if c.TiersFile != "" {
		if tiers, err = verdict.LoadTiers(c.TiersFile); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		data, err := os.ReadFile(c.TiersFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		base := filepath.Base(c.TiersFile)
		if errs := validation.IsConfigMapKey("tiers." + base); len(errs) > 0 {
			return nil, nil, badf("%s: the file name must be a ConfigMap key (letters, digits, '-', '_', '.'): rename it", c.TiersFile)
		}
		file = &configFile{key: "tiers." + base, path: "tiers/" + base, data: data}
	}
	for _, s := range c.Tiers {
		t, err := verdict.ParseTierFlag(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		tiers = append(tiers, t)
	}
	if _, ok := verdict.SLOTier(sc.SLO); len(tiers) == 0 && !ok {
		return nil, nil, badf("no tier: give --tiers FILE or --tier 'NAME: ttft_ms.p90<=2000, …', or an slo in %s", sc.Path)
	}
	point := c.Duration
	if point == 0 {
		point = sc.Duration.D()
	}
	if n > 1 {
		switch {
		case simulated:
			return nil, nil, badf("--capacity --shards %d: every pod would simulate its own endpoint, and a sharded search must load one server from every shard: give --endpoint (a `sixpin sim` Service will do)", n)
		case point <= 0:
			return nil, nil, badf("--capacity --shards %d: %s has no duration: give --duration, which every shard of a point stops at", n, sc.Path)
		case axis.Integer() && axis.Max < float64(n):
			return nil, nil, badf("--capacity --shards %d: the search goes up to %v %s, fewer than the shards: every shard needs one (raise --max)", n, axis.Max, axis.Kind)
		case axis.Integer() && c.Min > 0 && c.Min < float64(n):
			return nil, nil, badf("--min %v: every one of the %d shards needs at least one of the %s: give --min %d or more", c.Min, n, axis.Kind, n)
		case axis.Integer() && axis.Min < float64(n):
			m.Notes = append(m.Notes, fmt.Sprintf("the search starts at %d %s: every one of the %d shards needs at least one", n, axis.Kind, n))
		}
	}
	switch {
	case c.Budget > 0:
		m.runFor = c.Budget
	case point > 0:
		m.runFor = time.Duration(max(c.MaxRuns, capacityPoints)+c.Points) * point
	}

	args := []string{"capacity", scenarioPath}
	if n > 1 {
		args = append(args,
			"--shard", "$("+IndexEnv+")/"+strconv.Itoa(n),
			"--run-id", m.RunID,
			"--coordinate", ":"+strconv.Itoa(c.Port),
			"--coordinator", "http://"+m.leaderHost()+":"+strconv.Itoa(c.Port))
	}
	args = append(args, "-o", m.capacityFile())
	if file != nil {
		args = append(args, "--tiers", ConfigDir+"/"+file.path)
	}
	for _, t := range c.Tiers {
		args = append(args, "--tier", strings.ReplaceAll(t, "$", "$$"))
	}
	num := func(flag string, v float64) {
		if v != 0 {
			args = append(args, flag, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	dur := func(flag string, d time.Duration) {
		if d != 0 {
			args = append(args, flag, d.String())
		}
	}
	num("--min", c.Min)
	num("--max", c.Max)
	num("--resolution", c.Resolution)
	num("--max-runs", float64(c.MaxRuns))
	num("--points", float64(c.Points))
	dur("--budget", c.Budget)
	dur("--min-steady", c.MinSteady)
	dur("--duration", c.Duration)
	if n > 1 {
		dur("--shard-timeout", c.ShardTimeout)
		dur("--join-timeout", c.JoinTimeout)
	}
	if c.Seed != nil {
		args = append(args, "--seed", strconv.FormatInt(*c.Seed, 10))
	}
	return args, file, nil
}

// leaderHost is pod 0's name as the other pods reach it: its host name
// under the Job's subdomain, the headless Service of the same name.
func (m *Manifest) leaderHost() string { return m.name + "-0." + m.name }

// capacityFile is where pod 0 writes the capacity file.
func (m *Manifest) capacityFile() string { return ResultsDir + "/" + m.RunID + "-capacity.json" }

// service is the headless Service that gives pod 0 its name in the
// cluster's DNS (NAME-0.NAME), published before the pod is ready so that
// the workers find it as soon as it runs.
func (m *Manifest) service(sc *scenario.Scenario, port int) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: m.meta(sc),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{LabelRunID: m.RunID},
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "coordination", Port: int32(port), Protocol: corev1.ProtocolTCP}},
		},
	}
}
