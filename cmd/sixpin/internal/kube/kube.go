// Package kube turns a scenario into the Kubernetes objects of a
// distributed sixpin run.
//
// The objects (DESIGN §8) are a ConfigMap holding the scenario and
// the files it needs, and an Indexed Job whose pod I runs shard I of N, all
// shards waiting for the same wall-clock start. It also carries results
// files out of pods through their logs (Emit, Collect).
//
// The objects are the real Kubernetes API types (k8s.io/api), so a
// misspelt field cannot compile, and they are written with sigs.k8s.io/yaml.
package kube

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Names and paths the manifests and the image agree on.
const (
	// ContainerName is the container that runs `sixpin run`.
	ContainerName = "sixpin"
	// ResultsContainerName is the sidecar that prints the results file
	// to its log when the run has ended (--results stdout).
	ResultsContainerName = "results"
	// ConfigDir is where the ConfigMap is mounted.
	ConfigDir = "/config"
	// ResultsDir is where each pod writes its results file.
	ResultsDir = "/results"
	// IndexEnv is the variable Kubernetes sets to a pod's completion index
	// in an Indexed Job.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// IndexAnnotation is the pod annotation IndexEnv is read from.
	IndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// IndexLabel is the pod label of the same name and value (Kubernetes
	// ≥ 1.28), for selecting one index's pod.
	IndexLabel = IndexAnnotation
	// NonRootUID is the uid and gid the pods run as: distroless's nonroot,
	// the Dockerfile's USER.
	NonRootUID = 65532

	// LabelName and LabelRunID label every object of a run.
	LabelName  = "app.kubernetes.io/name"
	LabelRunID = "sixpin.dev/run-id"
)

// Defaults of the options.
const (
	DefaultStartDelay = 2 * time.Minute
	DefaultResults    = "pvc:sixpin-results"
	DefaultCPU        = "1"
	DefaultMemory     = "1Gi"
)

// ErrBadInput marks an error in what the caller gave (exit code 2).
var ErrBadInput = errors.New("bad input")

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadInput}, args...)...)
}

// ParseStartAt reads a start time as RFC 3339 (2026-05-01T12:00:00Z) or
// unix seconds (1777636800, fractions allowed).
func ParseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if sec, err := strconv.ParseInt(whole, 10, 64); err == nil && sec > 0 && len(frac) <= 9 && digits(frac) {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		return time.Unix(sec, ns).UTC(), nil
	}
	return time.Time{}, badf("--start-at %q: want RFC 3339 (2026-05-01T12:00:00Z) or unix seconds", s)
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// NewRunID returns a run id for a run starting at start: the start's UTC
// date and time and six random hex digits read from random
// ("20260501-120000-3f9a1c"), a valid label value.
func NewRunID(start time.Time, random io.Reader) (string, error) {
	var b [3]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return start.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}

// RandomRunID is NewRunID with crypto/rand.
func RandomRunID(start time.Time) (string, error) { return NewRunID(start, rand.Reader) }
