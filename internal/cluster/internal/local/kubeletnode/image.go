package kubeletnode

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// The images kubelet nodes run, assembled offline from Debian's busybox-static:
// no registry is reachable, and none is needed.
const (
	// BusyboxImage runs the pods' behaviour scripts.
	BusyboxImage = "jobconform.local/busybox:static"
	// PauseImage holds each pod sandbox; containerd's sandbox_image. Its
	// entrypoint sleeps and exits on SIGTERM, as the real pause does.
	PauseImage = "jobconform.local/pause:static"
)

// BusyboxPath is where Debian's busybox-static installs its binary.
var BusyboxPath = "/bin/busybox"

// pauseScript is the sandbox's entrypoint.
const pauseScript = `trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done`

// checkStaticBusybox makes sure path is a statically linked executable: a
// dynamically linked busybox (Debian's "busybox" package) finds no libc in
// the image.
func checkStaticBusybox(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v: kubelet nodes need Debian's busybox-static (apt-get install busybox-static)", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (Debian's busybox, not busybox-static): run apt-get install busybox-static", path)
		}
	}
	return nil
}

// writeImages writes the busybox and pause images as docker-archive tarballs
// into dir (what "ctr images import" reads) and returns their paths.
func writeImages(dir string) (busybox, pause string, err error) {
	if err := checkStaticBusybox(BusyboxPath); err != nil {
		return "", "", err
	}
	layer, err := busyboxLayer(BusyboxPath)
	if err != nil {
		return "", "", err
	}
	busybox = filepath.Join(dir, "busybox.tar")
	pause = filepath.Join(dir, "pause.tar")
	if err := writeArchive(busybox, BusyboxImage, layer, []string{"/bin/sh"}); err != nil {
		return "", "", err
	}
	if err := writeArchive(pause, PauseImage, layer, []string{"/bin/sh", "-c", pauseScript}); err != nil {
		return "", "", err
	}
	return busybox, pause, nil
}

// busyboxLayer is a root filesystem: /bin/busybox, a link per applet, and the
// directories a container runtime expects to mount over.
func busyboxLayer(path string) ([]byte, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(path, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", path, err)
	}
	applets := strings.Fields(string(out))
	sort.Strings(applets)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, d := range []string{"bin/", "dev/", "etc/", "proc/", "sys/", "tmp/", "var/", "var/run/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct{ name, body string }{
		{"etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"},
		{"etc/group", "root:x:0:\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: epoch}); err != nil {
			return nil, err
		}
		tw.Write([]byte(f.body))
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin)), ModTime: epoch}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	for _, a := range applets {
		if a == "busybox" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArchive writes a one-layer image in the docker-archive format
// (manifest.json with RepoTags), which names the image on import.
func writeArchive(path, ref string, layer []byte, entrypoint []string) error {
	sum := sha256.Sum256(layer)
	diffID := "sha256:" + hex.EncodeToString(sum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": entrypoint,
			"Env":        []string{"PATH=/bin"},
			"WorkingDir": "/",
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	csum := sha256.Sum256(config)
	configName := hex.EncodeToString(csum[:]) + ".json"
	layerName := hex.EncodeToString(sum[:]) + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{ref}, "Layers": []string{layerName}}})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		body []byte
	}{{configName, config}, {layerName, layer}, {"manifest.json", manifest}} {
		if dir := filepath.Dir(e.name); dir != "." {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755}); err != nil {
				f.Close()
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.body))}); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(e.body); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
