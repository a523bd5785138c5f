package kube

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// generateSearch is generate for a capacity search: the stream holds a
// ConfigMap, a Service (when sharded) and a Job, each decoded strictly
// into the real API types.
func generateSearch(t *testing.T, o Options) (*Manifest, *corev1.ConfigMap, *corev1.Service, *batchv1.Job, string) {
	t.Helper()
	o.Now, o.Random, o.Image = testNow, bytes.NewReader([]byte{1, 2, 3}), "registry.example.com/sixpin:v1"
	m, err := Generate(o)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var out bytes.Buffer
	if err := m.WriteYAML(&out); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	want := 3
	if o.Shards == 1 {
		want = 2
	}
	if len(docs) != want {
		t.Fatalf("%d documents, want %d:\n%s", len(docs), want, out.String())
	}
	var cm corev1.ConfigMap
	var svc *corev1.Service
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	if want == 3 {
		svc = &corev1.Service{}
		if err := yaml.UnmarshalStrict([]byte(docs[1]), svc); err != nil {
			t.Fatalf("Service: %v", err)
		}
		if svc.Kind != "Service" || svc.APIVersion != "v1" {
			t.Fatalf("kind %s %s", svc.APIVersion, svc.Kind)
		}
	}
	if err := yaml.UnmarshalStrict([]byte(docs[want-1]), &job); err != nil {
		t.Fatalf("Job: %v", err)
	}
	return m, &cm, svc, &job, out.String()
}

// A sharded capacity search: the tiers file travels in the ConfigMap; a
// headless Service of the Job's name, published before its pods are
// ready, selects the run's pods and names pod 0 NAME-0.NAME through the
// Job's subdomain; every pod has the same arguments, shard 0 serving the
// coordination and the others pointed at it there; pod 0 writes the
// capacity file, which its results sidecar prints; the instructions say
// how to follow pod 0 and collect the file.
func TestCapacitySearchManifest(t *testing.T) {
	dir := t.TempDir()
	tiers := write(t, filepath.Join(dir, "tiers.yaml"), []byte("interactive: ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30\nbatch: e2e_ms.p90 <= 600000\n"))
	seed := int64(7)
	m, cm, svc, job, out := generateSearch(t, Options{
		Scenario: root + "scenarios/chat-8k-c16.yaml", Shards: 3, Namespace: "bench", Results: "stdout",
		Profile: "vllm", Endpoint: "http://vllm.inference.svc:8000/v1",
		Capacity: &Capacity{TiersFile: tiers, Tiers: []string{"cheap$(HOME): ttft_ms.p90 <= 9000"}, Max: 32, Budget: 2 * time.Hour,
			Duration: 5 * time.Minute, Seed: &seed, ShardTimeout: time.Minute},
	})
	const runID = "20260501-120000-010203"
	if m.RunID != runID || !m.StartAt.IsZero() {
		t.Fatalf("run id %s, start %s", m.RunID, m.StartAt)
	}
	if cm.Data["tiers.tiers.yaml"] == "" || cm.Data["chat-8k-c16.yaml"] == "" {
		t.Errorf("ConfigMap keys %v", cm.Data)
	}
	name := "sixpin-chat-8k-c16"
	s := svc.Spec
	if svc.Name != name || svc.Namespace != "bench" || s.ClusterIP != corev1.ClusterIPNone || !s.PublishNotReadyAddresses ||
		s.Selector[LabelRunID] != runID || len(s.Ports) != 1 || s.Ports[0].Port != 7070 || s.Ports[0].Name != "coordination" {
		t.Errorf("service %+v", svc)
	}
	pod := job.Spec.Template.Spec
	if pod.Subdomain != svc.Name || job.Spec.Template.Labels[LabelRunID] != runID || *job.Spec.Completions != 3 || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("subdomain %q, labels %v", pod.Subdomain, job.Spec.Template.Labels)
	}
	c := pod.Containers[0]
	want := []string{
		"capacity", "/config/chat-8k-c16.yaml",
		"--shard", "$(JOB_COMPLETION_INDEX)/3", "--run-id", runID,
		"--coordinate", ":7070", "--coordinator", "http://" + name + "-0." + name + ":7070",
		"-o", "/results/" + runID + "-capacity.json",
		"--tiers", "/config/tiers/tiers.yaml", "--tier", "cheap$$(HOME): ttft_ms.p90 <= 9000",
		"--max", "32", "--budget", "2h0m0s", "--duration", "5m0s", "--shard-timeout", "1m0s", "--seed", "7",
		"--profile", "vllm", "--endpoint", "http://vllm.inference.svc:8000/v1",
	}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n%q\nwant\n%q", c.Args, want)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 7070 {
		t.Errorf("ports %+v", c.Ports)
	}
	if side := pod.InitContainers[0].Args; !slices.Equal(side, []string{"kube", "emit", "--on-stop", "/results/" + runID + "-capacity.json*"}) {
		t.Errorf("results sidecar %q", side)
	}
	if job.Annotations["sixpin.dev/command"] != "capacity" || job.Annotations["sixpin.dev/start-at"] != "" {
		t.Errorf("annotations %v", job.Annotations)
	}
	for _, line := range []string{
		"# sixpin capacity " + runID + ": chat-8k-c16.yaml searched by 3 pods, pod 0 leading.",
		"kubectl -n bench delete job/" + name + " service/" + name + " configmap/" + name + " --ignore-not-found",
		"Pod 0 leads the search and serves its coordination at " + name + "-0." + name,
		"kubectl -n bench logs -f -l sixpin.dev/run-id=" + runID + ",batch.kubernetes.io/job-completion-index=0 -c sixpin",
		"kubectl -n bench logs -l sixpin.dev/run-id=" + runID + ",batch.kubernetes.io/job-completion-index=0 -c results --tail=-1 | sixpin kube collect -d .",
		"sixpin report " + runID + "-capacity.json",
		"--timeout=130m",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the manifest lacks %q:\n%s", line, out)
		}
	}
}

// One pod runs the search alone: no Service, no shard flags; with a
// results claim, the collector pod prints the capacity file.
func TestCapacitySearchOnePod(t *testing.T) {
	m, _, svc, job, _ := generateSearch(t, Options{Scenario: root + "scenarios/chat-8k-c16.yaml", Shards: 1, Results: "pvc:shared",
		Profile: "vllm", Endpoint: "http://vllm.inference.svc:8000/v1", Capacity: &Capacity{}})
	if svc != nil || m.Service != nil || job.Spec.Template.Spec.Subdomain != "" {
		t.Errorf("a Service for one pod")
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if slices.Contains(args, "--shard") || !slices.Equal(args[:4], []string{"capacity", "/config/chat-8k-c16.yaml", "-o", "/results/" + m.RunID + "-capacity.json"}) {
		t.Errorf("args %q", args)
	}
	over, err := m.collectorOverrides()
	if err != nil || !strings.Contains(over, `"args":["kube","emit","/results/`+m.RunID+`-capacity.json"]`) {
		t.Errorf("collector %s %v", over, err)
	}
}

// What a sharded search cannot be is refused before any object is made.
func TestCapacitySearchRefused(t *testing.T) {
	dir := t.TempDir()
	untimed := write(t, filepath.Join(dir, "untimed.yaml"), []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 5}\n  concurrency: {mode: closed, streams: 2}\nrequests: 10\nslo: {ttft_ms: 500}\n"))
	noSLO := write(t, filepath.Join(dir, "no-slo.yaml"), []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 5}\n  concurrency: {mode: closed, streams: 2}\nduration: 1m\n"))
	badTiers := write(t, filepath.Join(dir, "tiers.yaml"), []byte("fast: ttft.p90 <= 5\n"))
	chat := root + "scenarios/chat-8k-c16.yaml"
	vllm := func(o Options) Options {
		o.Profile, o.Endpoint, o.Image, o.Now = "vllm", "http://v.svc:8000/v1", "sixpin:v1", testNow
		return o
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Scenario: chat, Shards: 2, Image: "sixpin:v1", Now: testNow, Capacity: &Capacity{}}, "every pod would simulate its own endpoint"},
		{vllm(Options{Scenario: untimed, Shards: 2, Capacity: &Capacity{}}), "has no duration: give --duration"},
		{vllm(Options{Scenario: chat, Shards: 4, Capacity: &Capacity{Max: 3}}), "the search goes up to 3 streams, fewer than the shards"},
		{vllm(Options{Scenario: chat, Shards: 4, Capacity: &Capacity{Min: 2}}), "--min 2: every one of the 4 shards needs at least one"},
		{vllm(Options{Scenario: chat, Shards: 2, Capacity: &Capacity{TiersFile: badTiers}}), `unknown metric "ttft"`},
		{vllm(Options{Scenario: chat, Shards: 2, Capacity: &Capacity{Tiers: []string{"x"}}}), "--tier"},
		{vllm(Options{Scenario: untimed, Shards: 1, Capacity: &Capacity{Tiers: []string{}}, StartAt: testNow.Add(time.Hour)}), "--start-at with --capacity"},
		{vllm(Options{Scenario: noSLO, Shards: 2, Capacity: &Capacity{}}), "no tier"},
		{vllm(Options{Scenario: chat, Shards: 2, Capacity: &Capacity{Port: 70000}}), "--coordination-port 70000"},
	} {
		if _, err := Generate(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o.Capacity, err, c.want)
		}
	}
}
