package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An archive holds its files in name order, the binary executable, and the
// same bytes every time (no timestamps): its checksum is the build's.
func TestWriteTarGz(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"jobconform", "LICENSE", "README.md"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("content of "+n), 0o600); err != nil {
			t.Fatal(err)
		}
		files[n] = p
	}
	var a, b bytes.Buffer
	if err := writeTarGz(&a, files); err != nil {
		t.Fatal(err)
	}
	if err := writeTarGz(&b, files); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("two archives of the same files differ (%v)", err)
	}
	gz, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got = append(got, h.Name)
		if string(data) != "content of "+h.Name || (h.Name == "jobconform") != (h.Mode == 0o755) {
			t.Errorf("%s: mode %o, content %q", h.Name, h.Mode, data)
		}
	}
	if strings.Join(got, " ") != "LICENSE README.md jobconform" {
		t.Errorf("entries %v", got)
	}
}

func TestDistRefusesABadPlatform(t *testing.T) {
	if err := dist("v0", t.TempDir(), []string{"linux-amd64"}); err == nil || !strings.Contains(err.Error(), "os/arch") {
		t.Errorf("error %v, want one that says how to write a platform", err)
	}
}
