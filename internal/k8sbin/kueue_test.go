package k8sbin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureKueueCached(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "kueue", KueueVersion)
	if err := os.MkdirAll(filepath.Join(dir, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, string(Kueue)), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &Builder{CacheDir: cache, Progress: &strings.Builder{}}
	set, err := b.EnsureKueue(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if set.Version != KueueVersion || set.Manager != filepath.Join(dir, "kueue") || set.CRDDir != filepath.Join(dir, "crds") {
		t.Errorf("cached Kueue: %+v", set)
	}
}

func TestEnsureKueueRejectsBadVersion(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir(), Progress: &strings.Builder{}}
	for _, v := range []string{"0.17.0", "v0.17", "latest"} {
		if _, err := b.EnsureKueue(context.Background(), v); err == nil || !strings.Contains(err.Error(), "release tag") {
			t.Errorf("version %q: %v", v, err)
		}
	}
}
