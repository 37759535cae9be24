package provider

import (
	"path/filepath"
	"strings"
	"testing"
)

// --artifacts alone decides where a cluster's logs go: $ARTIFACTS, the
// flag's default, is never read here.
func TestDefaultLogDirFollowsArtifacts(t *testing.T) {
	t.Setenv("ARTIFACTS", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	art := t.TempDir()
	got, err := DefaultLogDir(art, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, filepath.Join(art, "clusters", "c1-")) {
		t.Errorf("with an artifacts directory: %s, want it under %s/clusters", got, art)
	}
	got, err = DefaultLogDir("", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(got, art) || !strings.Contains(got, filepath.Join("logs", "c1-")) {
		t.Errorf("without one: %s, want the user cache's logs", got)
	}
}
