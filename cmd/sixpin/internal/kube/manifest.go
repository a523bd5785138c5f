package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/distribution/reference"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sixpin/sixpin/scenario"
)

// Options say what to generate. Zero fields take the defaults.
type Options struct {
	// Scenario is the scenario file's path.
	Scenario string
	// Shards is N, the number of pods: at least 1, at most the scenario's
	// streams, sessions or requests (any N for an open loop).
	Shards int
	// Image is the container image; its entrypoint must be sixpin (the
	// Dockerfile's is).
	Image string
	// Profile, Endpoint and Model are passed to `sixpin run` as its flags
	// of the same names. A profile FILE travels in the ConfigMap; an
	// embedded profile NAME is passed by name.
	Profile, Endpoint, Model string
	// Namespace of the objects ("": kubectl's current namespace).
	Namespace string
	// Name of the ConfigMap and the Job (default "sixpin-" and the
	// scenario's name).
	Name string
	// StartAt is when every shard starts. Zero means Now + StartDelay
	// (default DefaultStartDelay), rounded up to a whole second.
	StartAt    time.Time
	StartDelay time.Duration
	// Now is when the manifests are made.
	Now time.Time
	// RunID is the id all shards share ("": NewRunID from StartAt and
	// Random).
	RunID string
	// Random feeds a new run id (nil: crypto/rand).
	Random io.Reader
	// APIKeySecret is "NAME" or "NAME:KEY": the Secret, and the key in it,
	// that holds the API key (KEY defaults to the profile's api_key_env).
	// The key itself never passes through sixpin.
	APIKeySecret string
	// Results is where results go: "pvc:CLAIM" (a volume every pod
	// mounts at ResultsDir) or "stdout" (each pod prints its file to the
	// log of its results container). Default DefaultResults.
	Results string
	// CPU and Memory are each pod's requests, and its limits too
	// (Kubernetes quantities: "2", "500m", "1Gi"). Defaults DefaultCPU and
	// DefaultMemory.
	CPU, Memory string
	// Capacity, when set, makes the pods a capacity search instead of a
	// run (StartAt and StartDelay do not apply: pod 0 starts each point
	// when every pod is ready for it).
	Capacity *Capacity
}

// Manifest is a run's objects and what the user needs to know about them.
type Manifest struct {
	ConfigMap *corev1.ConfigMap
	// Service is pod 0's name in the cluster for the other pods of a
	// sharded capacity search (nil otherwise).
	Service *corev1.Service
	Job     *batchv1.Job
	// RunID is shared by every shard; StartAt is their common start
	// (zero for a capacity search).
	RunID   string
	StartAt time.Time
	Shards  int
	// Claim is the results PersistentVolumeClaim ("" for stdout).
	Claim string
	// Notes are things the user should know (for stderr).
	Notes []string

	name, namespace, image string
	// search is set for a capacity search.
	search bool
	// runFor is how long the run lasts once started (0: unknown).
	runFor time.Duration
	now    time.Time
}

// Limits of the objects.
const (
	// maxConfigMapBytes is the API server's bound on a ConfigMap's data.
	maxConfigMapBytes = 1 << 20
	// maxShards is Kubernetes' bound on an Indexed Job with a backoff
	// limit per index.
	maxShards = 100_000
	// gracePeriodS is how long a stopped pod has to write its results
	// (sixpin run's default grace is 10 s).
	gracePeriodS = 60
)

// configFile is one file of the ConfigMap: its key, its path under
// ConfigDir, and its bytes.
type configFile struct {
	key, path string
	data      []byte
}

// Generate makes the ConfigMap and the Indexed Job of a distributed run of
// opts.Scenario. It reads the scenario (and the trace and profile files it
// needs) and checks every input; errors in them wrap ErrBadInput, except
// that a bad scenario gives scenario.Load's positioned errors.
func Generate(opts Options) (*Manifest, error) {
	m := &Manifest{Shards: opts.Shards, namespace: opts.Namespace, image: opts.Image, now: opts.Now, search: opts.Capacity != nil}
	if opts.Shards < 1 || opts.Shards > maxShards {
		return nil, badf("--shards: must be between 1 and %d (got %d)", maxShards, opts.Shards)
	}
	if err := checkImage(opts.Image); err != nil {
		return nil, err
	}
	if r, err := reference.ParseNormalizedNamed(opts.Image); err == nil {
		if _, digested := r.(reference.Digested); !digested {
			if t, tagged := r.(reference.Tagged); !tagged || t.Tag() == "latest" {
				m.Notes = append(m.Notes, fmt.Sprintf("image %s has no version tag or digest: pin one, so that every pod runs the same sixpin", opts.Image))
			}
		}
	}
	if opts.Namespace != "" {
		if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
			return nil, badf("--namespace %q: %s", opts.Namespace, strings.Join(errs, "; "))
		}
	}
	if err := m.results(opts.Results); err != nil {
		return nil, err
	}
	res, memLimit, err := resources(opts.CPU, opts.Memory)
	if err != nil {
		return nil, err
	}
	if opts.Capacity == nil {
		if err := m.start(opts); err != nil {
			return nil, err
		}
	} else if !opts.StartAt.IsZero() {
		return nil, badf("--start-at with --capacity: pod 0 starts each point when every pod is ready for it")
	}

	sc, err := scenario.Load(opts.Scenario)
	if err != nil {
		return nil, err
	}
	for _, w := range sc.Warnings {
		m.Notes = append(m.Notes, "warning: "+w.Error())
	}
	if sc.Sweep != nil && opts.Shards > 1 && opts.Capacity == nil {
		// The pods' sixpin run refuses to shard a sweep.
		return nil, badf("--shards %d: %s is a sweep; shard each point as its own scenario", opts.Shards, opts.Scenario)
	}
	if opts.Shards > 1 && opts.Capacity == nil {
		// The last shard gets the smallest share: the Plan refuses it
		// when some shard would get no stream, session or request.
		if _, err := scenario.NewPlan(sc).Shard(scenario.Shard{I: opts.Shards - 1, N: opts.Shards}); err != nil {
			return nil, badf("--shards %d: %s: %v", opts.Shards, opts.Scenario, err)
		}
	}
	m.runFor = runLength(sc)

	m.name = opts.Name
	if m.name == "" {
		m.name = defaultName(sc.Name, opts.Shards)
	}
	if errs := validation.IsDNS1123Label(m.name); len(errs) > 0 {
		return nil, badf("--name %q: %s", m.name, strings.Join(errs, "; "))
	}
	if host := m.name + "-" + strconv.Itoa(opts.Shards-1); len(host) > validation.DNS1123LabelMaxLength {
		return nil, badf("--name %q: too long: the pods' host names (%s) must fit %d characters", m.name, host, validation.DNS1123LabelMaxLength)
	}

	m.RunID = opts.RunID
	if m.RunID == "" {
		random, at := opts.Random, m.StartAt
		if at.IsZero() {
			at = opts.Now
		}
		if random == nil {
			m.RunID, err = RandomRunID(at)
		} else {
			m.RunID, err = NewRunID(at, random)
		}
		if err != nil {
			return nil, err
		}
	}
	if errs := validation.IsDNS1123Label(m.RunID); len(errs) > 0 {
		return nil, badf("--run-id %q: %s", m.RunID, strings.Join(errs, "; "))
	}

	files, scenarioPath, err := scenarioFiles(sc)
	if err != nil {
		return nil, err
	}
	tg, err := resolveTarget(sc, opts)
	if err != nil {
		return nil, err
	}
	m.Notes = append(m.Notes, tg.notes...)
	if tg.file != nil {
		files = append(files, *tg.file)
	}
	secret, err := secretRef(opts.APIKeySecret, tg)
	if err != nil {
		return nil, err
	}
	if secret == nil && !tg.simulated {
		m.Notes = append(m.Notes, "no --api-key-secret: the pods send no API key (fine for an endpoint without one)")
	}

	args := []string{
		"run", scenarioPath,
		"--shard", "$(" + IndexEnv + ")/" + strconv.Itoa(opts.Shards),
		"--start-at", m.StartAt.UTC().Format(time.RFC3339Nano),
		"--run-id", m.RunID,
		"-o", m.resultsFile("$(" + IndexEnv + ")"),
	}
	if c := opts.Capacity; c != nil {
		var tiers *configFile
		if args, tiers, err = m.capacityArgs(sc, c, scenarioPath, tg.simulated); err != nil {
			return nil, err
		}
		if tiers != nil {
			files = append(files, *tiers)
		}
		if opts.Shards > 1 {
			m.Service = m.service(sc, c.Port)
		}
	}
	args = append(args, tg.args...)
	m.ConfigMap, err = m.configMap(sc, files)
	if err != nil {
		return nil, err
	}
	env := []corev1.EnvVar{indexEnv()}
	if secret != nil {
		env = append(env, corev1.EnvVar{Name: tg.keyEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: secret}})
	}
	// The Go runtime collects harder near 90% of the memory limit instead
	// of being killed at it.
	env = append(env, corev1.EnvVar{Name: "GOMEMLIMIT", Value: strconv.FormatInt(memLimit/10*9, 10)})
	m.Job = m.job(sc, args, env, res, files)
	if s := m.Service; s != nil {
		// Pod 0 is NAME-0.NAME: its host name under the Service's name.
		ps := &m.Job.Spec.Template.Spec
		ps.Subdomain = s.Name
		ps.Containers[0].Ports = []corev1.ContainerPort{{Name: "coordination", ContainerPort: s.Spec.Ports[0].Port, Protocol: corev1.ProtocolTCP}}
	}
	return m, nil
}

// checkImage refuses a string that is not an image reference.
func checkImage(image string) error {
	if image == "" {
		return badf("--image: required (the image built from sixpin's Dockerfile, pushed where the cluster can pull it)")
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return badf("--image %q: not an image reference: %v", image, err)
	}
	return nil
}

// results reads --results.
func (m *Manifest) results(s string) error {
	if s == "" {
		s = DefaultResults
	}
	if s == "stdout" {
		return nil
	}
	claim, ok := strings.CutPrefix(s, "pvc:")
	if !ok {
		return badf("--results %q: want pvc:CLAIM or stdout", s)
	}
	if errs := validation.IsDNS1123Subdomain(claim); len(errs) > 0 {
		return badf("--results %q: the claim name %s", s, strings.Join(errs, "; "))
	}
	m.Claim = claim
	return nil
}

// resources reads --cpu and --memory into requests = limits (so the pods
// are of the Guaranteed class: never the first evicted, and every shard
// has the same machine) and returns the memory limit in bytes.
func resources(cpuS, memS string) (corev1.ResourceRequirements, int64, error) {
	if cpuS == "" {
		cpuS = DefaultCPU
	}
	if memS == "" {
		memS = DefaultMemory
	}
	cpu, err := resource.ParseQuantity(cpuS)
	if err != nil || cpu.Sign() <= 0 {
		return corev1.ResourceRequirements{}, 0, badf("--cpu %q: want a positive Kubernetes quantity (1, 2, 500m)", cpuS)
	}
	mem, err := resource.ParseQuantity(memS)
	if err != nil || mem.Value() < 64<<20 {
		return corev1.ResourceRequirements{}, 0, badf("--memory %q: want a Kubernetes quantity of at least 64Mi (512Mi, 1Gi)", memS)
	}
	rl := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}, mem.Value(), nil
}

// start sets StartAt from opts.
func (m *Manifest) start(opts Options) error {
	switch {
	case !opts.StartAt.IsZero() && opts.StartDelay != 0:
		return badf("--start-at and --start-delay: give one of them")
	case !opts.StartAt.IsZero():
		if !opts.StartAt.After(opts.Now) {
			return badf("--start-at %s: not in the future (it is %s now)", opts.StartAt.UTC().Format(time.RFC3339), opts.Now.UTC().Format(time.RFC3339))
		}
		m.StartAt = opts.StartAt.UTC()
	default:
		delay := opts.StartDelay
		if delay == 0 {
			delay = DefaultStartDelay
		}
		if delay < 0 {
			return badf("--start-delay %s: must be positive", delay)
		}
		at := opts.Now.Add(delay)
		m.StartAt = at.Truncate(time.Second).UTC()
		if m.StartAt.Before(at) {
			m.StartAt = m.StartAt.Add(time.Second)
		}
	}
	if ahead := m.StartAt.Sub(opts.Now); ahead < 30*time.Second {
		m.Notes = append(m.Notes, fmt.Sprintf("the start is only %s away: a pod not running by then starts late, and its shard says so", ahead.Round(time.Second)))
	}
	return nil
}

// runLength is about how long sc runs once started (0: unknown).
func runLength(sc *scenario.Scenario) time.Duration {
	d := sc.Duration.D()
	if sc.Sweep != nil {
		d *= time.Duration(len(sc.Sweep.Values))
	}
	return d
}

// defaultName is "sixpin-" and the scenario's name as a DNS label, short
// enough for the pods' host names (NAME-INDEX).
func defaultName(scName string, shards int) string {
	var b strings.Builder
	b.WriteString("sixpin-")
	dash := true
	for _, r := range strings.ToLower(scName) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if room := validation.DNS1123LabelMaxLength - 1 - len(strconv.Itoa(shards-1)); len(name) > room {
		name = strings.TrimRight(name[:room], "-")
	}
	return name
}

// scenarioFiles returns the scenario file, and the trace it replays, as
// ConfigMap files, and the scenario's path in the pods. The scenario keeps
// its file name (its default name and its sha256 must not change).
func scenarioFiles(sc *scenario.Scenario) ([]configFile, string, error) {
	data, err := os.ReadFile(sc.Path)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != sc.SHA256 {
		return nil, "", badf("%s changed while it was read; run again", sc.Path)
	}
	base := filepath.Base(sc.Path)
	if errs := validation.IsConfigMapKey(base); len(errs) > 0 {
		return nil, "", badf("%s: the file name must be a ConfigMap key (letters, digits, '-', '_', '.'): rename it", sc.Path)
	}
	files := []configFile{{key: base, path: base, data: data}}
	if w := sc.Workload; w.Replay() {
		if filepath.IsAbs(w.File) {
			return nil, "", badf("%s: workload.file %s: the pods read the scenario from a ConfigMap, so the trace must be given relative to the scenario, at or below its directory", sc.Path, w.File)
		}
		rel := filepath.ToSlash(filepath.Clean(w.File))
		if rel == ".." || strings.HasPrefix(rel, "../") || rel == base {
			return nil, "", badf("%s: workload.file %s: the pods read the scenario from a ConfigMap, so the trace must sit at or below the scenario's directory", sc.Path, w.File)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(sc.Path), w.File))
		if err != nil {
			return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		key := "trace." + path.Base(rel)
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return nil, "", badf("%s: workload.file %s: the file name must be a ConfigMap key (letters, digits, '-', '_', '.'): rename it", sc.Path, w.File)
		}
		files = append(files, configFile{key: key, path: rel, data: data})
	}
	return files, ConfigDir + "/" + base, nil
}

// configMap holds files, as text where they are UTF-8, else as binary.
func (m *Manifest) configMap(sc *scenario.Scenario, files []configFile) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: m.meta(sc),
		// A run's inputs must not change under it.
		Immutable: ptr(true),
	}
	total, seen := 0, map[string]bool{}
	for _, f := range files {
		if seen[f.key] || seen["/"+f.path] {
			return nil, badf("%s: two of the scenario's files would share the name %s in the pods", sc.Path, f.path)
		}
		seen[f.key], seen["/"+f.path] = true, true
		total += len(f.data)
		if utf8.Valid(f.data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[f.key] = string(f.data)
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[f.key] = f.data
		}
	}
	if total > maxConfigMapBytes {
		return nil, badf("the scenario's files come to %d bytes, more than a ConfigMap holds (%d): shorten the trace", total, maxConfigMapBytes)
	}
	return cm, nil
}

// meta is the name, namespace, labels and annotations of every object.
func (m *Manifest) meta(sc *scenario.Scenario) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        m.name,
		Namespace:   m.namespace,
		Labels:      m.labels(),
		Annotations: m.annotations(sc),
	}
}

// annotations say what the objects run: the scenario, the shards, and
// the start (a run) or the search (a capacity search).
func (m *Manifest) annotations(sc *scenario.Scenario) map[string]string {
	a := map[string]string{
		"sixpin.dev/scenario":        filepath.Base(sc.Path),
		"sixpin.dev/scenario-sha256": sc.SHA256,
		"sixpin.dev/shards":          strconv.Itoa(m.Shards),
	}
	if m.search {
		a["sixpin.dev/command"] = "capacity"
	} else {
		a["sixpin.dev/start-at"] = m.StartAt.Format(time.RFC3339Nano)
	}
	return a
}

func (m *Manifest) labels() map[string]string {
	return map[string]string{LabelName: "sixpin", LabelRunID: m.RunID}
}

// ownFile is the file a pod writes: its shard's results file, or the
// capacity file (a glob: only pod 0 writes it, and the others' emit
// prints nothing).
func (m *Manifest) ownFile() string {
	if m.search {
		return m.capacityFile() + "*"
	}
	return m.resultsFile("$(" + IndexEnv + ")")
}

// resultsFile is shard index's results file in the pods.
func (m *Manifest) resultsFile(index string) string {
	return ResultsDir + "/" + m.RunID + "-shard-" + index + ".json"
}

// indexEnv declares the completion index variable (the Job controller
// adds the same one; declaring it makes $(JOB_COMPLETION_INDEX) in the
// arguments plain to read).
func indexEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + IndexAnnotation + "']"},
	}}
}

// job is the Indexed Job. Each index runs once (backoffLimitPerIndex: 0):
// a retried shard would start after the others, into a different load. A
// shard whose run failed or was invalid (exit 1) has written its results,
// so its index fails and the others go on; any other failure (bad input,
// a crash, an eviction) leaves no complete set of shards, so it fails the
// whole Job at once (podFailurePolicy FailJob) rather than let the rest
// load the endpoint for nothing.
func (m *Manifest) job(sc *scenario.Scenario, args []string, env []corev1.EnvVar, res corev1.ResourceRequirements, files []configFile) *batchv1.Job {
	items := make([]corev1.KeyToPath, len(files))
	for i, f := range files {
		items[i] = corev1.KeyToPath{Key: f.key, Path: f.path}
	}
	resultsVolume := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if m.Claim != "" {
		resultsVolume = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: m.Claim}}
	}
	run := corev1.Container{
		Name:                     ContainerName,
		Image:                    m.image,
		Args:                     args,
		Env:                      env,
		Resources:                res,
		SecurityContext:          containerSecurity(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: ConfigDir, ReadOnly: true},
			{Name: "results", MountPath: ResultsDir},
			{Name: "tmp", MountPath: "/tmp"},
		},
	}
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  ptr(false),
		TerminationGracePeriodSeconds: ptr(int64(gracePeriodS)),
		SecurityContext:               podSecurity(),
		// One shard per node where the cluster allows: the point of
		// sharding is more than one machine's CPU and network.
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       "kubernetes.io/hostname",
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunID: m.RunID}},
		}},
		Containers: []corev1.Container{run},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: m.name},
				Items:                items,
				DefaultMode:          ptr(int32(0o444)),
			}}},
			{Name: "results", VolumeSource: resultsVolume},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
	if m.Claim == "" {
		// A native sidecar (Kubernetes ≥ 1.29): it runs beside the run and
		// is stopped after it, whatever its exit code, and then prints
		// the results file to its own log, which holds nothing else.
		spec.InitContainers = []corev1.Container{{
			Name:            ResultsContainerName,
			Image:           m.image,
			Args:            []string{"kube", "emit", "--on-stop", m.ownFile()},
			Env:             []corev1.EnvVar{indexEnv()},
			RestartPolicy:   ptr(corev1.ContainerRestartPolicyAlways),
			Resources:       smallResources(),
			SecurityContext: containerSecurity(),
			VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir, ReadOnly: true}},
		}}
	}
	meta := m.meta(sc)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr(batchv1.IndexedCompletion),
			Completions:          ptr(int32(m.Shards)),
			Parallelism:          ptr(int32(m.Shards)),
			BackoffLimitPerIndex: ptr(int32(0)),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{
					Action:          batchv1.PodFailurePolicyActionFailJob,
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
				},
				{
					Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						ContainerName: ptr(ContainerName),
						Operator:      batchv1.PodFailurePolicyOnExitCodesOpNotIn,
						Values:        []int32{0, 1},
					},
				},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels, Annotations: meta.Annotations},
				Spec:       spec,
			},
		},
	}
}

// podSecurity runs as distroless's nonroot user; fsGroup lets it write the
// results volume.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr(true),
		RunAsUser:           ptr(int64(NonRootUID)),
		RunAsGroup:          ptr(int64(NonRootUID)),
		FSGroup:             ptr(int64(NonRootUID)),
		FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurity meets the "restricted" Pod Security Standard.
func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// smallResources are those of a container that only copies a file.
func smallResources() corev1.ResourceRequirements {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

func ptr[T any](v T) *T { return &v }
