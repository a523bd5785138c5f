package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sixpin/sixpin/cmd/sixpin/internal/kube"
	"github.com/sixpin/sixpin/results"
)

func TestKubeManifestFlags(t *testing.T) {
	t.Parallel()
	var got *KubeOptions
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	cmd := NewCmdKubeManifest(f, func(o *KubeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--shards", "4", "--image", "img:v1", "--profile", "vllm", "--endpoint", "http://e.svc/v1", "--model", "m",
		"--namespace", "ns", "--name", "n", "--start-at", "2030-01-01T00:00:00Z", "--run-id", "r", "--api-key-secret", "s:k",
		"--results", "stdout", "--cpu", "2", "--memory", "3Gi"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := kube.Options{Scenario: "s.yaml", Shards: 4, Image: "img:v1", Profile: "vllm", Endpoint: "http://e.svc/v1", Model: "m",
		Namespace: "ns", Name: "n", StartDelay: kube.DefaultStartDelay, RunID: "r", APIKeySecret: "s:k", Results: "stdout", CPU: "2", Memory: "3Gi"}
	if got.Kube != want || got.StartAt != "2030-01-01T00:00:00Z" {
		t.Errorf("options %+v, start %q", got.Kube, got.StartAt)
	}
}

// TestKubeManifestRefusesAKey: a key given on the command line is refused
// and never echoed; the environment's key never reaches the manifest.
func TestKubeManifestRefusesAKey(t *testing.T) {
	t.Parallel()
	const key = "sk-test-Zq81SECRET"
	env := map[string]string{"OPENAI_API_KEY": key}
	code, out, errOut := sixpin(t, env, "kube", "manifest", "testdata/tiny.yaml", "--shards", "2", "--image", "sixpin:v1", "--api-key", key)
	if code != ExitBadInput || strings.Contains(out+errOut, key) || !strings.Contains(errOut, "--api-key-secret NAME") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = sixpin(t, env, "kube", "manifest", "testdata/tiny.yaml", "--shards", "2", "--image", "sixpin:v1",
		"--profile", "openai", "--api-key-secret", "openai-key")
	if code != ExitOK || strings.Contains(out+errOut, key) || !strings.Contains(out, "secretKeyRef") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = sixpin(t, nil, "kube", "manifest", "testdata/tiny.yaml", "--shards", "2", "--image", "sixpin:v1", "--start-at", "2030-01-01T00:00:00Z", "--start-delay", "1m")
	if code != ExitBadInput || !strings.Contains(errOut, "give one of them") {
		t.Errorf("--start-at and --start-delay: exit %d: %s", code, errOut)
	}
	code, _, errOut = sixpin(t, nil, "kube", "manifest", "testdata/tiny.yaml", "--shards", "3", "--image", "sixpin:v1")
	if code != ExitBadInput || !strings.Contains(errOut, "N is more than the 2 streams") {
		t.Errorf("3 shards of 2 streams: exit %d: %s", code, errOut)
	}
}

// expandK8s expands $(VAR) and $$ in s as Kubernetes does in a
// container's arguments.
func expandK8s(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			if s[i+1] == '$' {
				b.WriteByte('$')
				i++
				continue
			}
			if s[i+1] == '(' {
				if j := strings.IndexByte(s[i+2:], ')'); j >= 0 {
					if v, ok := env[s[i+2:i+2+j]]; ok {
						b.WriteString(v)
						i += 2 + j
						continue
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// podArgs are a container's arguments as pod index sees them, its mounts
// moved under root.
func podArgs(args []string, index int, root string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = expandK8s(a, map[string]string{kube.IndexEnv: strconv.Itoa(index)})
		for _, dir := range []string{kube.ConfigDir, kube.ResultsDir} {
			if strings.HasPrefix(a, dir+"/") {
				a = root + a
			}
		}
		out[i] = a
	}
	return out
}

// TestKubeJobContract runs the Job's exact command lines locally, as the
// pods would: the ConfigMap's files laid out as its volume, each shard's
// `sixpin run` as its own process against the built-in simulator, each
// results sidecar stopped after its run, their logs collected and, once
// `sixpin merge` exists, merged. The flags another step adds to `sixpin
// run` (--shard, --start-at, --run-id) are left out while run does not
// know them, so each process runs the whole scenario until then.
func TestKubeJobContract(t *testing.T) {
	t.Parallel()
	const shards = 2
	root := t.TempDir()
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	// Bounded in time, not requests: the shards' windows must overlap for
	// the merged concurrency to be the sum, and a run of a few
	// milliseconds would not survive one shard starting a few late.
	code, manifest, errOut := sixpin(t, nil, "kube", "manifest", "testdata/tiny-timed.yaml", "--shards", strconv.Itoa(shards), "--image", "sixpin:test",
		"--profile", "sim-instant", "--results", "stdout", "--start-at", start)
	if code != ExitOK {
		t.Fatalf("kube manifest: exit %d: %s", code, errOut)
	}
	docs := strings.Split(manifest, "\n---\n")
	var cm corev1.ConfigMap
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, it := range v.ConfigMap.Items {
			path := filepath.Join(root, kube.ConfigDir, it.Path)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(cm.Data[it.Key]), 0o444); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, kube.ResultsDir), 0o755); err != nil {
		t.Fatal(err)
	}

	runFlags := NewCmdRun(&Factory{IO: &IOStreams{}}, nil).Flags()
	runArgs := pod.Containers[0].Args
	var pending []string
	for i := 0; i < len(runArgs); i++ {
		if name, ok := strings.CutPrefix(runArgs[i], "--"); ok && runFlags.Lookup(name) == nil {
			pending = append(pending, runArgs[i])
			runArgs = slices.Delete(slices.Clone(runArgs), i, i+2)
			i--
		}
	}
	t.Logf("flags sixpin run does not know yet, left out: %v", pending)

	logs := make([]bytes.Buffer, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The sidecar starts first and is stopped once the run has ended.
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan int)
			go func() {
				f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &logs[i], ErrOut: &logs[i]}, Getenv: func(string) string { return "" }, Hard: context.Background()}
				done <- execute(ctx, f, podArgs(pod.InitContainers[0].Args, i, root))
			}()
			run := exec.Command(os.Args[0], "-test.run=^$")
			run.Env = append(os.Environ(), "SIXPIN_TEST_AS_MAIN=1", kube.IndexEnv+"="+strconv.Itoa(i),
				"SIXPIN_TEST_ARGS="+strings.Join(podArgs(runArgs, i, root), " "))
			out, err := run.CombinedOutput()
			stop()
			if err != nil {
				t.Errorf("shard %d: sixpin %s: %v\n%s", i, strings.Join(podArgs(runArgs, i, root), " "), err, out)
			}
			if code := <-done; code != ExitOK {
				t.Errorf("shard %d: the results sidecar exited %d: %s", i, code, logs[i].String())
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var all bytes.Buffer
	for i := range logs {
		all.Write(logs[i].Bytes())
	}
	shardDir := filepath.Join(root, "shards")
	os.Mkdir(shardDir, 0o755)
	var out, cerr bytes.Buffer
	f := &Factory{IO: &IOStreams{In: &all, Out: &out, ErrOut: &cerr}, Getenv: func(string) string { return "" }, Hard: context.Background()}
	if code := execute(context.Background(), f, []string{"kube", "collect", "-d", shardDir}); code != ExitOK {
		t.Fatalf("kube collect: exit %d: %s", code, cerr.String())
	}
	runID := job.Labels[kube.LabelRunID]
	var files []string
	for i := range shards {
		name := fmt.Sprintf("%s-shard-%d.json", runID, i)
		got, err := os.ReadFile(filepath.Join(shardDir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, kube.ResultsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the collected file differs from the pod's", name)
		}
		run, err := results.ReadFile(filepath.Join(shardDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if run.Scenario.SHA256 != job.Annotations["sixpin.dev/scenario-sha256"] {
			t.Errorf("%s: scenario sha256 %s, the manifest's %s", name, run.Scenario.SHA256, job.Annotations["sixpin.dev/scenario-sha256"])
		}
		files = append(files, filepath.Join(shardDir, name))
	}

	if c, _, err := NewCmdRoot(f).Find([]string{"merge"}); err == nil && c.Name() == "merge" {
		merged := filepath.Join(root, "merged.json")
		if code, _, errOut := sixpin(t, nil, append(append([]string{"merge"}, files...), "-o", merged)...); code != ExitOK {
			t.Errorf("sixpin merge: exit %d: %s", code, errOut)
		}
	} else {
		t.Log("no sixpin merge yet: the shards are collected, not merged")
	}
}

// The pods of a capacity search all have the Job's arguments, and `sixpin
// capacity` reads them into pod 0 leading (serving the coordination) and
// pod 1 its worker, pointed at pod 0's name under the Job's Service; the
// search's flags reach every pod, and are refused without --capacity.
func TestKubeCapacityContract(t *testing.T) {
	t.Parallel()
	code, manifest, errOut := sixpin(t, nil, "kube", "manifest", "testdata/tiny-timed.yaml", "--shards", "2", "--image", "sixpin:v1",
		"--profile", "vllm", "--endpoint", "http://v.svc:8000/v1", "--capacity", "--tier", "t: ttft_ms.p90<=2000", "--max", "8", "--duration", "1m", "--seed", "4")
	if code != ExitOK {
		t.Fatalf("kube manifest --capacity: exit %d: %s", code, errOut)
	}
	docs := strings.Split(manifest, "\n---\n")
	var svc corev1.Service
	var job batchv1.Job
	if len(docs) != 3 || yaml.UnmarshalStrict([]byte(docs[1]), &svc) != nil || yaml.UnmarshalStrict([]byte(docs[2]), &job) != nil {
		t.Fatalf("want a ConfigMap, a Service and a Job:\n%s", manifest)
	}
	if !strings.Contains(errOut, "capacity search "+job.Labels[kube.LabelRunID]+": 2 pods, pod 0 leading") {
		t.Errorf("stderr: %s", errOut)
	}
	leader := job.Name + "-0." + svc.Name
	for i := range 2 {
		var got *CapacityOptions
		args := podArgs(job.Spec.Template.Spec.Containers[0].Args, i, "")
		code, _, errOut := runCmd(t, func(f *Factory) *cobra.Command {
			return NewCmdCapacity(f, func(_ *cobra.Command, o *CapacityOptions) error { got = o; return nil })
		}, args[1:]...)
		if code != ExitOK || args[0] != "capacity" {
			t.Fatalf("pod %d: %q: exit %d: %s", i, args, code, errOut)
		}
		c := got.Config
		if got.Shard != fmt.Sprintf("%d/2", i) || c.Distributed.RunID != job.Labels[kube.LabelRunID] || c.Coordinate != ":7070" ||
			c.Coordinator != "http://"+leader+":7070" || !slices.Equal(c.Tiers, []string{"t: ttft_ms.p90<=2000"}) || c.Max != 8 ||
			c.Duration != time.Minute || got.Seed != 4 || c.Endpoint != "http://v.svc:8000/v1" || c.Output != "/results/"+c.Distributed.RunID+"-capacity.json" {
			t.Errorf("pod %d: %+v", i, got)
		}
	}
	code, _, errOut = sixpin(t, nil, "kube", "manifest", "testdata/tiny-timed.yaml", "--shards", "2", "--image", "sixpin:v1", "--tier", "t: ttft_ms.p90<=2000")
	if code != ExitBadInput || !strings.Contains(errOut, "--tier is a capacity search's: give --capacity too") {
		t.Errorf("--tier without --capacity: exit %d: %s", code, errOut)
	}
	code, _, errOut = sixpin(t, nil, "kube", "manifest", "testdata/tiny-timed.yaml", "--shards", "2", "--image", "sixpin:v1", "--capacity", "--start-delay", "1m",
		"--profile", "vllm", "--endpoint", "http://v.svc:8000/v1")
	if code != ExitBadInput || !strings.Contains(errOut, "pod 0 starts each point when every pod is ready") {
		t.Errorf("--start-delay with --capacity: exit %d: %s", code, errOut)
	}
}
