package kube

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's folder.
const root = "../../../../"

// dockerfileLines returns the Dockerfile's instructions, comments dropped.
func dockerfileLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(root + "Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// shellWords splits a shell command line on blanks, honouring double
// quotes (all the Dockerfile's build line uses).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestDockerfileShape checks the image the Dockerfile describes: a Go 1.26
// builder, a distroless static final stage, a numeric non-root user and
// sixpin as the entrypoint (the manifests rely on all four).
func TestDockerfileShape(t *testing.T) {
	lines := dockerfileLines(t)
	want := []string{
		"FROM golang:1.26 AS build",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"COPY --from=build /out/sixpin /sixpin",
		"USER 65532:65532",
		`ENTRYPOINT ["/sixpin"]`,
	}
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("Dockerfile lacks %q", w)
		}
	}
	if last := lines[len(lines)-1]; last != `ENTRYPOINT ["/sixpin"]` {
		t.Errorf("Dockerfile ends with %q", last)
	}
	if NonRootUID != 65532 {
		t.Errorf("NonRootUID = %d, the Dockerfile's USER is 65532", NonRootUID)
	}
}

// TestDockerfileBuildsStatic builds sixpin exactly as the Dockerfile's
// build line does and checks the binary is static (no interpreter, no
// shared libraries), carries the Dockerfile's build settings, and runs.
// A cold build takes about a minute, so -short leaves it out; make test
// runs it.
func TestDockerfileBuildsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sixpin with the Dockerfile's flags (a minute when the build cache is cold); run without -short")
	}
	var build []string
	for _, l := range dockerfileLines(t) {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			build = shellWords(strings.TrimPrefix(l, "RUN "))
		}
	}
	if build == nil {
		t.Fatal("no RUN ... go build line in the Dockerfile")
	}
	env := append(os.Environ(), "GOFLAGS=")
	var assigned []string
	for len(build) > 0 && strings.Contains(build[0], "=") {
		assigned = append(assigned, build[0])
		build = build[1:]
	}
	if !slices.Contains(assigned, "CGO_ENABLED=0") {
		t.Errorf("the build line sets %v, not CGO_ENABLED=0", assigned)
	}
	env = append(env, assigned...)
	if runtime.GOOS != "linux" {
		env = append(env, "GOOS=linux")
	}
	if len(build) < 2 || build[0] != "go" || build[1] != "build" {
		t.Fatalf("build line %q does not start with go build", build)
	}
	bin := filepath.Join(t.TempDir(), "sixpin")
	args := slices.Clone(build[1:])
	o := slices.Index(args, "-o")
	if o < 0 || o+1 >= len(args) {
		t.Fatalf("build line %q has no -o FILE", build)
	}
	args[o+1] = bin
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a PT_INTERP program header: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary keeps its symbol table: -ldflags -s did not apply")
	}

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	// (With -trimpath, Go does not record -ldflags; the missing symbol
	// table above shows -s applied.)
	for k, v := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[k] != v {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
		}
	}
	if runtime.GOOS == "linux" {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "sixpin") {
			t.Errorf("sixpin --version: %v: %s", err, out)
		}
	}
}
