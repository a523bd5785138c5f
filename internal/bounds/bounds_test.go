package bounds

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCenturyFitsADuration(t *testing.T) {
	if Century <= 0 || Century > math.MaxInt64/2 || Century.Hours() != 876600 {
		t.Fatalf("Century = %v", Century)
	}
	if !Seconds(0) || !Seconds(CenturySeconds) || Seconds(CenturySeconds+1) || Seconds(-1) || Seconds(math.NaN()) || Seconds(math.Inf(1)) {
		t.Error("Seconds misjudges the edges")
	}
	if d := time.Duration(CenturySeconds * 1e9); d != Century {
		t.Errorf("CenturySeconds in ns = %v, want %v", d, Century)
	}
}

func TestReadFileRefusesHugeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, make([]byte, FileBytes+10), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "big.yaml: the file is larger than 32 MiB") {
		t.Errorf("ReadFile = %v", err)
	}
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path); err != nil || string(data) != "a: 1\n" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
}
