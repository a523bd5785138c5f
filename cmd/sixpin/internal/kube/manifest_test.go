package kube

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 400_000_000, time.UTC)

// generate runs Generate with the test clock and run id, then writes and
// decodes the manifests strictly into the real API types.
func generate(t *testing.T, o Options) (*Manifest, *corev1.ConfigMap, *batchv1.Job, string) {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = testNow
	}
	if o.Random == nil {
		o.Random = bytes.NewReader([]byte{1, 2, 3})
	}
	if o.Image == "" {
		o.Image = "registry.example.com/sixpin:v1"
	}
	m, err := Generate(o)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var out bytes.Buffer
	if err := m.WriteYAML(&out); err != nil {
		t.Fatal(err)
	}
	cm, job := decodeStrict(t, out.String())
	return m, cm, job, out.String()
}

// decodeStrict splits the stream into its two documents and decodes them
// with unknown fields refused, so a misspelt field fails.
func decodeStrict(t *testing.T, stream string) (*corev1.ConfigMap, *batchv1.Job) {
	t.Helper()
	docs := strings.Split(stream, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2 (ConfigMap, Job):\n%s", len(docs), stream)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatalf("Job: %v", err)
	}
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || job.Kind != "Job" || job.APIVersion != "batch/v1" {
		t.Fatalf("kinds %s %s, %s %s", cm.APIVersion, cm.Kind, job.APIVersion, job.Kind)
	}
	return &cm, &job
}

func TestStrictDecodingCatchesATypo(t *testing.T) {
	_, _, _, out := generate(t, Options{Scenario: root + "scenarios/chat-8k-c16.yaml", Shards: 4})
	bad := strings.Replace(out, "completionMode:", "completionMod:", 1)
	docs := strings.Split(bad, "\n---\n")
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Fatalf("a misspelt field decoded: %v", err)
	}
}

func TestIndexedJob(t *testing.T) {
	const scenarioPath = root + "scenarios/chat-8k-c16.yaml"
	m, cm, job, out := generate(t, Options{
		Scenario: scenarioPath, Shards: 4, Namespace: "bench",
		Profile: "vllm", Endpoint: "http://vllm.inference.svc:8000/v1", Model: "qwen",
		APIKeySecret: "vllm-key", CPU: "2", Memory: "2Gi",
	})
	const runID = "20260501-120201-010203"
	start := "2026-05-01T12:02:01Z"
	if m.RunID != runID || m.StartAt.Format(time.RFC3339Nano) != start {
		t.Fatalf("run id %s, start %s", m.RunID, m.StartAt)
	}

	s := job.Spec
	if *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Errorf("mode %s, completions %d, parallelism %d", *s.CompletionMode, *s.Completions, *s.Parallelism)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || s.BackoffLimit != nil {
		t.Errorf("backoffLimitPerIndex %v, backoffLimit %v: a shard must run once", s.BackoffLimitPerIndex, s.BackoffLimit)
	}
	rules := s.PodFailurePolicy.Rules
	if len(rules) != 2 || rules[0].Action != batchv1.PodFailurePolicyActionFailJob || rules[0].OnPodConditions[0].Type != corev1.DisruptionTarget ||
		rules[1].Action != batchv1.PodFailurePolicyActionFailJob || *rules[1].OnExitCodes.ContainerName != ContainerName ||
		rules[1].OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn || !slices.Equal(rules[1].OnExitCodes.Values, []int32{0, 1}) {
		t.Errorf("pod failure policy %+v", rules)
	}
	for _, labels := range []map[string]string{job.Labels, cm.Labels, s.Template.Labels} {
		if labels[LabelName] != "sixpin" || labels[LabelRunID] != runID {
			t.Errorf("labels %v", labels)
		}
	}
	if job.Name != "sixpin-chat-8k-c16" || cm.Name != job.Name || job.Namespace != "bench" || cm.Namespace != "bench" {
		t.Errorf("names %s/%s, %s/%s", job.Namespace, job.Name, cm.Namespace, cm.Name)
	}

	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || *pod.AutomountServiceAccountToken || len(pod.InitContainers) != 0 || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	wantArgs := []string{
		"run", "/config/chat-8k-c16.yaml",
		"--shard", "$(JOB_COMPLETION_INDEX)/4",
		"--start-at", start,
		"--run-id", runID,
		"-o", "/results/" + runID + "-shard-$(JOB_COMPLETION_INDEX).json",
		"--profile", "vllm", "--endpoint", "http://vllm.inference.svc:8000/v1", "--model", "qwen",
	}
	if c.Name != ContainerName || c.Image != "registry.example.com/sixpin:v1" || len(c.Command) != 0 || !slices.Equal(c.Args, wantArgs) {
		t.Errorf("container %s %s command %q args\n%q\nwant\n%q", c.Name, c.Image, c.Command, c.Args, wantArgs)
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env[IndexEnv]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("%s = %+v", IndexEnv, e)
	}
	key := env["VLLM_API_KEY"]
	if key.Value != "" || key.ValueFrom == nil || key.ValueFrom.SecretKeyRef == nil ||
		key.ValueFrom.SecretKeyRef.Name != "vllm-key" || key.ValueFrom.SecretKeyRef.Key != "VLLM_API_KEY" {
		t.Errorf("the API key is not a Secret reference: %+v", key)
	}
	if env["GOMEMLIMIT"].Value != "1932735276" { // 90% of 2Gi
		t.Errorf("GOMEMLIMIT %q", env["GOMEMLIMIT"].Value)
	}
	for _, rl := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
		if !rl.Cpu().Equal(resource.MustParse("2")) || !rl.Memory().Equal(resource.MustParse("2Gi")) {
			t.Errorf("resources %v", rl)
		}
	}

	ps, cs := pod.SecurityContext, c.SecurityContext
	if !*ps.RunAsNonRoot || *ps.RunAsUser != NonRootUID || *ps.FSGroup != NonRootUID || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security %+v", ps)
	}
	if !*cs.RunAsNonRoot || *cs.AllowPrivilegeEscalation || !*cs.ReadOnlyRootFilesystem || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || cs.Privileged != nil {
		t.Errorf("container security %+v", cs)
	}

	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm.Name
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	if mounts["/config"] != "config" || mounts["/results"] != "results" || mounts["/tmp"] != "tmp" {
		t.Errorf("mounts %v", mounts)
	}
	if v := vols["results"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "sixpin-results" {
		t.Errorf("results volume %+v", v)
	}
	if v := vols["config"]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name || len(v.ConfigMap.Items) != 1 || v.ConfigMap.Items[0].Path != "chat-8k-c16.yaml" {
		t.Errorf("config volume %+v", v)
	}

	want, err := os.ReadFile(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["chat-8k-c16.yaml"]; got != string(want) {
		t.Errorf("the ConfigMap's scenario differs from the file:\n%s", got)
	}
	if !*cm.Immutable || len(cm.Data) != 1 || len(cm.BinaryData) != 0 {
		t.Errorf("ConfigMap immutable %v, data %d, binary %d", *cm.Immutable, len(cm.Data), len(cm.BinaryData))
	}

	for _, w := range []string{
		"kubectl -n bench apply -f",
		"kubectl -n bench create secret generic vllm-key --from-literal=VLLM_API_KEY=\"$VLLM_API_KEY\"",
		"kubectl -n bench wait job/sixpin-chat-8k-c16 --for=condition=complete --timeout=23m",
		"kubectl -n bench logs sixpin-chat-8k-c16-collect | sixpin kube collect -d shards",
		"sixpin merge shards/" + runID + "-shard-*.json -o sixpin-chat-8k-c16-" + runID + ".json",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the instructions lack %q", w)
		}
	}
}

// TestCollectorPodOverrides decodes the PVC collector pod the instructions
// give kubectl run, strictly.
func TestCollectorPodOverrides(t *testing.T) {
	m, _, _, _ := generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 2, Results: "pvc:shared"})
	over, err := m.collectorOverrides()
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(over), &pod); err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if !slices.Equal(c.Args, []string{"kube", "emit", "/results/" + m.RunID + "-shard-*.json"}) || c.Image != m.image ||
		pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "shared" || !pod.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly ||
		!*pod.Spec.SecurityContext.RunAsNonRoot || strings.Contains(over, "'") {
		t.Errorf("collector pod %s", over)
	}
}

func TestStdoutResultsSidecar(t *testing.T) {
	m, _, job, out := generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 2, Results: "stdout"})
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("%d init containers, want the results sidecar", len(pod.InitContainers))
	}
	sc := pod.InitContainers[0]
	file := "/results/" + m.RunID + "-shard-$(JOB_COMPLETION_INDEX).json"
	if sc.Name != ResultsContainerName || *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways ||
		!slices.Equal(sc.Args, []string{"kube", "emit", "--on-stop", file}) || sc.Env[0].Name != IndexEnv || !sc.VolumeMounts[0].ReadOnly {
		t.Errorf("sidecar %+v", sc)
	}
	if run := pod.Containers[0]; !slices.Contains(run.Args, file) {
		t.Errorf("the run writes elsewhere: %q", run.Args)
	}
	for _, v := range pod.Volumes {
		if v.Name == "results" && v.EmptyDir == nil {
			t.Errorf("results volume %+v, want an emptyDir", v)
		}
	}
	if !strings.Contains(out, "kubectl logs -l "+LabelRunID+"="+m.RunID+" -c results --tail=-1 | sixpin kube collect -d shards") {
		t.Errorf("no log collection in the instructions:\n%s", out)
	}
	if len(pod.Containers[0].Args) != 10 {
		t.Errorf("the simulator needs no target flags: %q", pod.Containers[0].Args)
	}
}

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestScenarioBytesTravelExactly: CRLF line ends, tabs and trailing blanks
// in comments, non-ASCII text — the ConfigMap holds the file byte for byte,
// so the pods' scenario has the same sha256.
func TestScenarioBytesTravelExactly(t *testing.T) {
	src := "name: nasty\r\n# ≥ café\t \r\nseed: 5   \r\npins:\r\n  model: {name: m, params_b: 1}\r\n  prompt: {tokens: 10}\r\n" +
		"  output: {tokens: 5}\r\n  concurrency: {mode: open, rate: 3}\r\nduration: 5s\r\n# no newline at the end"
	path := write(t, filepath.Join(t.TempDir(), "nasty.yaml"), []byte(src))
	_, cm, job, _ := generate(t, Options{Scenario: path, Shards: 1000, Results: "stdout"})
	if cm.Data["nasty.yaml"] != src {
		t.Errorf("scenario changed on the way:\n%q\n%q", cm.Data["nasty.yaml"], src)
	}
	if *job.Spec.Completions != 1000 || job.Name != "sixpin-nasty" {
		t.Errorf("open loop: %d completions, name %s", *job.Spec.Completions, job.Name)
	}
}

// TestTraceTravels: a replayed trace goes in the ConfigMap beside the
// scenario, gzip as binary data, at its path relative to the scenario.
func TestTraceTravels(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"session":"a","turn":0,"offset_s":0,"input_tokens":10,"output_tokens":5}` + "\n" +
		`{"session":"b","turn":0,"session_start_s":1,"offset_s":0,"input_tokens":20,"output_tokens":5}` + "\n"))
	zw.Close()
	write(t, filepath.Join(dir, "traces", "two.jsonl.gz"), gz.Bytes())
	path := write(t, filepath.Join(dir, "replay.yaml"), []byte("name: replay\npins:\n  model: {name: m}\nworkload: {kind: trace, file: traces/two.jsonl.gz}\n"))
	_, cm, job, _ := generate(t, Options{Scenario: path, Shards: 2})
	if !bytes.Equal(cm.BinaryData["trace.two.jsonl.gz"], gz.Bytes()) {
		t.Errorf("trace not in the ConfigMap's binary data: %v", cm.BinaryData)
	}
	items := job.Spec.Template.Spec.Volumes[0].ConfigMap.Items
	if len(items) != 2 || items[1].Key != "trace.two.jsonl.gz" || items[1].Path != "traces/two.jsonl.gz" {
		t.Errorf("items %+v", items)
	}
	if _, err := Generate(Options{Scenario: path, Shards: 3, Image: "sixpin:v1", Now: testNow}); err == nil || !strings.Contains(err.Error(), "more than the 2 sessions of the trace") {
		t.Errorf("3 shards of 2 sessions: %v", err)
	}
}

// TestProfileFileTravels: a profile file goes in the ConfigMap under its
// own name and the pods are pointed at it; the scenario's target endpoint
// and model, which --profile would otherwise drop, are passed along.
func TestProfileFileTravels(t *testing.T) {
	dir := t.TempDir()
	prof := []byte("kind: vllm\nbase_url: http://vllm.default.svc:8000/v1\napi_key_env: MY_KEY\n")
	profPath := write(t, filepath.Join(dir, "my-vllm.yaml"), prof)
	sc := write(t, filepath.Join(dir, "s.yaml"), []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 5}\n  concurrency: {mode: closed, streams: 2}\nrequests: 10\n"+
		"target: {profile: "+profPath+", model: served-m}\n"))
	_, cm, job, _ := generate(t, Options{Scenario: sc, Shards: 2, APIKeySecret: "keys:vllm"})
	if cm.Data["profile.my-vllm.yaml"] != string(prof) {
		t.Errorf("profile not in the ConfigMap: %v", cm.Data)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if tail := c.Args[10:]; !slices.Equal(tail, []string{"--profile", "/config/profile/my-vllm.yaml", "--model", "served-m"}) {
		t.Errorf("target args %q", tail)
	}
	if e := c.Env[1]; e.Name != "MY_KEY" || e.ValueFrom.SecretKeyRef.Name != "keys" || e.ValueFrom.SecretKeyRef.Key != "vllm" {
		t.Errorf("key env %+v", e)
	}

	tok := write(t, filepath.Join(dir, "tokenizer.json"), byteLevelTokenizer())
	for name, body := range map[string]string{
		"headers.X-Api-Key looks like a credential": "kind: vllm\nbase_url: http://v.svc:8000/v1\nheaders: {X-Api-Key: abc}\n",
		"a file on this machine":                    "kind: vllm\nbase_url: http://v.svc:8000/v1\ntokenizer: hf:" + tok + "\n",
	} {
		p := write(t, filepath.Join(dir, "bad.yaml"), []byte(body))
		_, err := Generate(Options{Scenario: sc, Shards: 2, Image: "sixpin:v1", Profile: p, Now: testNow})
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "abc") {
			t.Errorf("profile %q: %v", body, err)
		}
	}
}

// byteLevelTokenizer is the smallest tokenizer.json sixpin loads: GPT-2's
// 256 byte tokens and no merges.
func byteLevelTokenizer() []byte {
	var vocab []string
	n := 0
	for b := range 256 {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = rune(256 + n)
			n++
		}
		vocab = append(vocab, fmt.Sprintf("%q: %d", string(r), b))
	}
	return []byte(`{"pre_tokenizer": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {` +
		strings.Join(vocab, ", ") + `}, "merges": []}}`)
}

// TestUserWordsAreNotExpanded: Kubernetes expands $(VAR) in arguments, so
// a $ of the user's is doubled.
func TestUserWordsAreNotExpanded(t *testing.T) {
	_, _, job, _ := generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 1, Profile: "vllm", Endpoint: "https://e.example.com/v1", Model: "m$(HOME)"})
	if a := job.Spec.Template.Spec.Containers[0].Args; a[len(a)-1] != "m$$(HOME)" {
		t.Errorf("model arg %q", a[len(a)-1])
	}
}

func TestStartTime(t *testing.T) {
	m, _, _, _ := generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 1, StartDelay: 90 * time.Second})
	if want := time.Date(2026, 5, 1, 12, 1, 31, 0, time.UTC); !m.StartAt.Equal(want) {
		t.Errorf("start %s, want %s (now + delay, rounded up to a second)", m.StartAt, want)
	}
	at := time.Date(2026, 5, 1, 13, 0, 0, 5, time.UTC)
	m, _, job, _ := generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 1, StartAt: at, RunID: "r1"})
	if a := job.Spec.Template.Spec.Containers[0].Args; !m.StartAt.Equal(at) || a[5] != "2026-05-01T13:00:00.000000005Z" || a[7] != "r1" {
		t.Errorf("start %s, args %q", m.StartAt, a)
	}
	m, _, _, _ = generate(t, Options{Scenario: root + "scenarios/smoke.yaml", Shards: 1, StartDelay: 10 * time.Second})
	if !strings.Contains(strings.Join(m.Notes, "\n"), "only 11s away") {
		t.Errorf("no note on a near start: %q", m.Notes)
	}
}

func TestParseStartAt(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-05-01T12:00:00Z":      time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		"2026-05-01T14:00:00+02:00": time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		"1777636800":                time.Unix(1777636800, 0),
		"1777636800.25":             time.Unix(1777636800, 250_000_000),
	} {
		got, err := ParseStartAt(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStartAt(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "tomorrow", "1e9", "-5", "12.5.6", "2026-05-01"} {
		if _, err := ParseStartAt(in); !errors.Is(err, ErrBadInput) {
			t.Errorf("ParseStartAt(%q): %v", in, err)
		}
	}
}

func TestNewRunID(t *testing.T) {
	id, err := NewRunID(time.Date(2026, 5, 1, 12, 2, 3, 0, time.FixedZone("x", 3600)), bytes.NewReader([]byte{0xab, 0xcd, 0xef}))
	if err != nil || id != "20260501-110203-abcdef" {
		t.Errorf("NewRunID = %q, %v", id, err)
	}
}

// TestBadInput: every input is checked, with the flag named, and nothing
// secret is echoed.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	agentic := write(t, filepath.Join(dir, "agentic.yaml"), []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 5}\n  concurrency: {mode: closed, streams: 8}\n"+
		"workload: {kind: agentic, sessions: 3, turns: 2, growth_tokens: 10}\nduration: 1m\n"))
	base := Options{Scenario: root + "scenarios/smoke.yaml", Shards: 2, Image: "sixpin:v1", Now: testNow}
	cases := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"no shards", func(o *Options) { o.Shards = 0 }, "--shards: must be between 1 and 100000 (got 0)"},
		{"more shards than streams", func(o *Options) { o.Shards = 5 }, "--shards 5: " + root + "scenarios/smoke.yaml: shard 4/5: N is more than the 4 streams (pins.concurrency.streams)"},
		{"a sweep", func(o *Options) { o.Scenario = root + "harness/testdata/sweep.yaml" }, "is a sweep; shard each point as its own scenario"},
		{"more shards than sessions", func(o *Options) { o.Scenario, o.Shards = agentic, 4 }, "more than the 3 sessions (workload.sessions)"},
		{"no image", func(o *Options) { o.Image = "" }, "--image: required"},
		{"bad image", func(o *Options) { o.Image = "Registry/Sixpin:v1" }, `--image "Registry/Sixpin:v1": not an image reference`},
		{"bad name", func(o *Options) { o.Name = "Sixpin_Run" }, `--name "Sixpin_Run"`},
		{"long name", func(o *Options) { o.Name = strings.Repeat("a", 62) }, "pods' host names"},
		{"bad namespace", func(o *Options) { o.Namespace = "a.b" }, `--namespace "a.b"`},
		{"bad results", func(o *Options) { o.Results = "s3://bucket" }, "--results \"s3://bucket\": want pvc:CLAIM or stdout"},
		{"bad claim", func(o *Options) { o.Results = "pvc:Bad_Claim" }, "the claim name"},
		{"bad cpu", func(o *Options) { o.CPU = "lots" }, `--cpu "lots"`},
		{"no cpu", func(o *Options) { o.CPU = "0" }, `--cpu "0"`},
		{"small memory", func(o *Options) { o.Memory = "1Mi" }, "--memory \"1Mi\": want a Kubernetes quantity of at least 64Mi"},
		{"past start", func(o *Options) { o.StartAt = testNow.Add(-time.Second) }, "--start-at 2026-05-01T11:59:59Z: not in the future"},
		{"both starts", func(o *Options) { o.StartAt, o.StartDelay = testNow.Add(time.Hour), time.Minute }, "give one of them"},
		{"negative delay", func(o *Options) { o.StartDelay = -time.Minute }, "--start-delay -1m0s: must be positive"},
		{"bad run id", func(o *Options) { o.RunID = "Run 1" }, `--run-id "Run 1"`},
		{"missing scenario", func(o *Options) { o.Scenario = "nope.yaml" }, "nope.yaml"},
		{"bad scenario", func(o *Options) { o.Scenario = root + "cmd/sixpin/testdata/bad.yaml" }, "bad.yaml:6:43: pins.output.tokens.max"},
		{"loopback base_url", func(o *Options) { o.Profile = "vllm" }, "profile vllm's base_url http://127.0.0.1:8000/v1: a loopback address in a pod is the pod itself"},
		{"loopback endpoint", func(o *Options) { o.Endpoint = "http://localhost:8080/v1" }, "--endpoint http://localhost:8080/v1: a loopback address"},
		{"endpoint with simulator", func(o *Options) { o.Profile, o.Endpoint = "sim-instant", "http://e.svc/v1" }, "--endpoint cannot be used with simulator profile sim-instant"},
		{"no such profile", func(o *Options) { o.Profile = "nope" }, `no profile "nope"`},
		{"secret for the simulator", func(o *Options) { o.APIKeySecret = "k" }, "the built-in simulator takes no API key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.change(&o)
			_, err := Generate(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}

	// Secrets: a key pasted as the Secret's name, or inside the URL.
	const key = "sk-PROJ-Abc123SECRET"
	for _, o := range []Options{
		{Profile: "openai", APIKeySecret: key},
		{Profile: "openai", APIKeySecret: "openai:" + key + "!"},
		{Endpoint: "https://user:" + key + "@api.example.com/v1"},
		{Endpoint: "http://h.svc:8000/v1?api-key=" + key},
		{Endpoint: "http://h.svc:8000/v1?api-version=2024-06-01&access_token=" + key},
		{Endpoint: "http://h.svc:8000/v1?sig=" + key},
	} {
		o.Scenario, o.Shards, o.Image, o.Now = base.Scenario, 2, base.Image, testNow
		_, err := Generate(o)
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "--api-key-secret") {
			t.Errorf("%+v: error %v must refuse without echoing the key, and name --api-key-secret", o, err)
		}
	}
}

// TestNoCredentialTravels: a credential in a URL that would travel — the
// scenario's target.endpoint and a profile file's base_url go in the
// ConfigMap even when --endpoint overrides them — is refused, naming
// where it is and never echoing it; a query that holds none (an API
// version) travels.
func TestNoCredentialTravels(t *testing.T) {
	const key = "sk-PROJ-Abc123SECRET"
	dir := t.TempDir()
	scenario := func(target string) string {
		return write(t, filepath.Join(dir, fmt.Sprintf("s%d.yaml", len(target))), []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 5}\n  concurrency: {mode: closed, streams: 2}\nrequests: 10\n"+target))
	}
	prof := write(t, filepath.Join(dir, "p.yaml"), []byte("kind: vllm\nbase_url: http://v.svc:8000/v1?key="+key+"\n"))
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"scenario endpoint", Options{Scenario: scenario("target: {endpoint: 'http://v.svc:8000/v1?token=" + key + "'}\n"), Endpoint: "http://w.svc:8000/v1"},
			"the scenario's target.endpoint: the URL carries a credential (query parameter token)"},
		{"profile base_url", Options{Scenario: scenario(""), Profile: prof, Endpoint: "http://w.svc:8000/v1"},
			"profile p's base_url: the URL carries a credential (query parameter key)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Shards, c.o.Image, c.o.Now = 1, "sixpin:v1", testNow
			_, err := Generate(c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), key) {
				t.Errorf("error %v, want one containing %q and not the key", err, c.want)
			}
		})
	}
	_, _, job, _ := generate(t, Options{Scenario: scenario(""), Shards: 1, Profile: "vllm", Endpoint: "http://v.svc:8000/v1?api-version=2024-06-01"})
	if a := job.Spec.Template.Spec.Containers[0].Args; a[len(a)-1] != "http://v.svc:8000/v1?api-version=2024-06-01" {
		t.Errorf("endpoint arg %q", a[len(a)-1])
	}
}
