package kube

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// WriteYAML writes the manifests as a multi-document YAML stream for
// `kubectl apply -f`: the ConfigMap, then the Job, then, as comments, how
// to run, wait for, collect and merge the shards.
func (m *Manifest) WriteYAML(w io.Writer) error {
	cm, err := yaml.Marshal(m.ConfigMap)
	if err != nil {
		return fmt.Errorf("write the ConfigMap: %w", err)
	}
	job, err := yaml.Marshal(m.Job)
	if err != nil {
		return fmt.Errorf("write the Job: %w", err)
	}
	var svc []byte
	if m.Service != nil {
		if svc, err = yaml.Marshal(m.Service); err != nil {
			return fmt.Errorf("write the Service: %w", err)
		}
	}
	how, err := m.instructions()
	if m.search {
		how, err = m.searchInstructions()
	}
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if m.search {
		fmt.Fprintf(bw, "# sixpin capacity %s: %s searched by %d pods, pod 0 leading.\n# How to run it and collect the capacity file: at the end.\n",
			m.RunID, m.ConfigMap.Annotations["sixpin.dev/scenario"], m.Shards)
	} else {
		fmt.Fprintf(bw, "# sixpin run %s: %s as %d shards, all starting at\n# %s. How to run, collect and merge them: at the end.\n",
			m.RunID, m.ConfigMap.Annotations["sixpin.dev/scenario"], m.Shards, m.StartAt.Format(time.RFC3339Nano))
	}
	bw.Write(cm)
	if svc != nil {
		bw.WriteString("---\n")
		bw.Write(svc)
	}
	bw.WriteString("---\n")
	bw.Write(job)
	bw.WriteString(how)
	return bw.Flush()
}

// kubectl is the kubectl command for the objects' namespace, and the
// label selector of the run's objects.
func (m *Manifest) kubectl() (k, sel string) {
	k = "kubectl"
	if m.namespace != "" {
		k += " -n " + m.namespace
	}
	return k, LabelRunID + "=" + m.RunID
}

// instructions are the comment lines after the objects.
func (m *Manifest) instructions() (string, error) {
	var b strings.Builder
	say := func(format string, args ...any) { fmt.Fprintf(&b, "# "+format+"\n", args...) }
	k, sel := m.kubectl()
	b.WriteString("#\n")
	say("1. Apply this before %s: every pod must be running by then", m.StartAt.Format(time.RFC3339))
	say("   (a shard that starts late records by how much, and a merged run is only")
	say("   as good as its latest shard). A Job's pods and this ConfigMap cannot be")
	say("   changed, so delete an earlier run called %s first:", m.name)
	say("     %s delete job/%s configmap/%s --ignore-not-found", k, m.name, m.name)
	say("     %s apply -f THIS-FILE.yaml", k)
	m.secretLines(say, k)
	if m.Claim != "" {
		say("   The PersistentVolumeClaim %s must exist, ReadWriteMany when the", m.Claim)
		say("   pods land on more than one node; for instance:")
		say("     %s apply -f - <<'EOF'", k)
		say("     {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: %s},", m.Claim)
		say("      spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}}")
		say("     EOF")
	}
	say("2. Wait for the Job:")
	say("     %s get pods -l %s -w", k, sel)
	say("     %s wait job/%s --for=condition=complete --timeout=%s", k, m.name, m.timeout())
	say("   Each shard runs once. One whose run failed or was invalid (exit 1) has")
	say("   written its results and the others go on; the Job then ends Failed and")
	say("   names it in status.failedIndexes. Bad input (exit 2), a crash or an")
	say("   eviction fails the whole Job at once: no complete set of shards can")
	say("   come of it. `%s logs POD -c %s` says why.", k, ContainerName)
	say("3. Collect the shards into ./shards:")
	say("     mkdir -p shards")
	if m.Claim == "" {
		say("     %s logs -l %s -c %s --tail=-1 | sixpin kube collect -d shards", k, sel, ResultsContainerName)
	} else {
		over, err := m.collectorOverrides()
		if err != nil {
			return "", err
		}
		pod := m.name + "-collect"
		say("   with a pod that mounts %s and prints this run's files to its", m.Claim)
		say("   log:")
		say("     %s run %s --restart=Never --image=%s --overrides='%s'", k, pod, m.image, over)
		say("     %s wait pod/%s --for=jsonpath='{.status.phase}'=Succeeded --timeout=5m", k, pod)
		say("     %s logs %s | sixpin kube collect -d shards", k, pod)
		say("     %s delete pod/%s", k, pod)
	}
	merged := m.name + "-" + m.RunID + ".json"
	say("4. Merge and report:")
	say("     sixpin merge shards/%s-shard-*.json -o %s", m.RunID, merged)
	say("     sixpin report %s", merged)
	say("5. Clean up:")
	say("     %s delete job/%s configmap/%s", k, m.name, m.name)
	return b.String(), nil
}

// secretLines say, when the pods read an API key, how to make the
// Secret that holds it (k is the kubectl command).
func (m *Manifest) secretLines(say func(string, ...any), k string) {
	if env := m.keyEnv(); env != nil {
		ref := env.ValueFrom.SecretKeyRef
		say("   The Secret %s must hold the API key under %s, e.g. from your", ref.Name, ref.Key)
		say("   shell's %s:", env.Name)
		say("     %s create secret generic %s --from-literal=%s=\"$%s\"", k, ref.Name, ref.Key, env.Name)
	}
}

// keyEnv is the run container's API-key variable, or nil.
func (m *Manifest) keyEnv() *corev1.EnvVar {
	for i, e := range m.Job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return &m.Job.Spec.Template.Spec.Containers[0].Env[i]
		}
	}
	return nil
}

// timeout is a generous bound on the Job's time from now, in whole
// minutes: until the start, the run, and ten minutes more (an hour when
// the run's length is a request count). A capacity search's run is its
// budget, or its points at the point's duration.
func (m *Manifest) timeout() string {
	if m.runFor == 0 {
		return "1h"
	}
	d := m.runFor + 10*time.Minute
	if !m.search {
		d += m.StartAt.Sub(m.now)
	}
	return strconv.Itoa(int((d+time.Minute-1)/time.Minute)) + "m"
}

// collected is what the collector pod prints: every shard's results
// file, or the capacity file.
func (m *Manifest) collected() string {
	if m.search {
		return m.capacityFile()
	}
	return m.resultsFile("*")
}

// searchInstructions are the comment lines after a capacity search's
// objects.
func (m *Manifest) searchInstructions() (string, error) {
	var b strings.Builder
	say := func(format string, args ...any) { fmt.Fprintf(&b, "# "+format+"\n", args...) }
	k, sel := m.kubectl()
	objects := "job/" + m.name + " configmap/" + m.name
	if m.Service != nil {
		objects = "job/" + m.name + " service/" + m.name + " configmap/" + m.name
	}
	b.WriteString("#\n")
	say("1. Apply it. A Job's pods and this ConfigMap cannot be changed, so delete")
	say("   an earlier search called %s first:", m.name)
	say("     %s delete %s --ignore-not-found", k, objects)
	say("     %s apply -f THIS-FILE.yaml", k)
	m.secretLines(say, k)
	if m.Claim != "" {
		say("   The PersistentVolumeClaim %s must exist (pod 0 writes the file there).", m.Claim)
	}
	if m.Service != nil {
		say("   Pod 0 leads the search and serves its coordination at %s; the", m.leaderHost())
		say("   other pods join it as they start, and each point runs on all %d at once.", m.Shards)
	}
	say("2. Follow the search in pod 0's log, and wait for the Job:")
	say("     %s logs -f -l %s,%s=0 -c %s", k, sel, IndexLabel, ContainerName)
	say("     %s wait job/%s --for=condition=complete --timeout=%s", k, m.name, m.timeout())
	say("   A pod that fails or goes unheard stops the search: pod 0 writes what it")
	say("   had, marked incomplete, and the Job ends Failed. Bad input (exit 2), a")
	say("   crash or an eviction fails the whole Job at once.")
	say("3. Collect the capacity file into ./%s:", path.Base(m.capacityFile()))
	if m.Claim == "" {
		say("     %s logs -l %s,%s=0 -c %s --tail=-1 | sixpin kube collect -d .", k, sel, IndexLabel, ResultsContainerName)
	} else {
		over, err := m.collectorOverrides()
		if err != nil {
			return "", err
		}
		pod := m.name + "-collect"
		say("   with a pod that mounts %s and prints it to its log:", m.Claim)
		say("     %s run %s --restart=Never --image=%s --overrides='%s'", k, pod, m.image, over)
		say("     %s wait pod/%s --for=jsonpath='{.status.phase}'=Succeeded --timeout=5m", k, pod)
		say("     %s logs %s | sixpin kube collect -d .", k, pod)
		say("     %s delete pod/%s", k, pod)
	}
	say("4. Report:")
	say("     sixpin report %s", path.Base(m.capacityFile()))
	say("5. Clean up:")
	say("     %s delete %s", k, objects)
	return b.String(), nil
}

// collectorOverrides is the spec of a pod that mounts the results claim
// read-only and prints this run's files with Emit, as JSON for `kubectl
// run --overrides` (which then replaces its own container list).
func (m *Manifest) collectorOverrides() (string, error) {
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: ptr(false),
		SecurityContext:              podSecurity(),
		Containers: []corev1.Container{{
			Name:            "collect",
			Image:           m.image,
			Args:            []string{"kube", "emit", m.collected()},
			Resources:       smallResources(),
			SecurityContext: containerSecurity(),
			VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: m.Claim, ReadOnly: true},
		}}},
	}
	b, err := json.Marshal(struct {
		APIVersion string         `json:"apiVersion"`
		Spec       corev1.PodSpec `json:"spec"`
	}{"v1", spec})
	if err != nil {
		return "", fmt.Errorf("write the collector pod: %w", err)
	}
	return string(b), nil
}
