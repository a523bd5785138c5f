package uplot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The embedded files are the release's, byte for byte, and the script
// carries its version and licence banner.
func TestVendoredFilesAreTheRelease(t *testing.T) {
	for name, c := range map[string]struct{ got, want string }{
		"uPlot.iife.min.js": {Script, scriptSHA256},
		"uPlot.min.css":     {Style, styleSHA256},
	} {
		sum := sha256.Sum256([]byte(c.got))
		if hex.EncodeToString(sum[:]) != c.want {
			t.Errorf("%s: sha256 %x, want %s (the release's)", name, sum, c.want)
		}
	}
	if !strings.Contains(Script, "(v"+Version+")") {
		t.Errorf("the script's banner does not name v%s", Version)
	}
	if !strings.Contains(License, "MIT License") {
		t.Error("the licence is not uPlot's MIT licence")
	}
}
