package kubeletnode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Packages are the Debian packages kubelet nodes need.
const Packages = "containerd runc busybox-static"

// ErrCannotRun wraps the reasons this machine cannot run containers at all
// (as opposed to a missing package): specs that need kubelet nodes skip.
var ErrCannotRun = errors.New("this machine cannot run containers")

// Check says whether kubelet nodes can run here: root, CAP_SYS_ADMIN,
// writable cgroups (else ErrCannotRun), and the commands of Packages.
func Check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: kubelet nodes need root (running as uid %d)", ErrCannotRun, os.Geteuid())
	}
	if !hasCapSysAdmin() {
		return fmt.Errorf("%w: kubelet nodes need CAP_SYS_ADMIN (mounts, namespaces)", ErrCannotRun)
	}
	if err := cgroupsWritable(); err != nil {
		return fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	var missing []string
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kubelet nodes need %s on PATH: install Debian's packages with: apt-get install -y %s (make test does)", strings.Join(missing, ", "), Packages)
	}
	return checkStaticBusybox(BusyboxPath)
}

func hasCapSysAdmin() bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return err == nil && caps&(1<<21) != 0 // CAP_SYS_ADMIN
		}
	}
	return false
}

// cgroupMounts lists the mount points of cgroup (v1) and cgroup2 file systems.
func cgroupMounts() []string {
	var out []string
	for _, m := range mountInfo() {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			out = append(out, m.point)
		}
	}
	return out
}

func cgroupsWritable() error {
	mounts := cgroupMounts()
	if len(mounts) == 0 {
		return errors.New("no cgroup file system is mounted")
	}
	// A name of its own: nodes starting together each probe.
	probe, err := os.MkdirTemp(mounts[0], "jobconform-probe-")
	if err != nil {
		return fmt.Errorf("cgroups are not writable (%v)", err)
	}
	return os.Remove(probe)
}

// createCgroup makes the node's cgroup in every hierarchy: the kubelet puts
// its QoS classes and pods below it (cgroupRoot), so everything the node's
// containers run in is found, and removed, under one name.
func createCgroup(root string) error {
	for _, m := range cgroupMounts() {
		dir := filepath.Join(m, root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
		// A cpuset cgroup admits no process until it has CPUs and memory nodes.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return fmt.Errorf("cgroup %s: %w", dir, err)
				}
			}
		}
	}
	return nil
}

type mount struct{ point, fstype string }

// mountInfo reads this process's mount table.
func mountInfo() []mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		if len(fields) < 7 {
			continue
		}
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{point: unescapeMount(fields[4]), fstype: fields[sep+1]})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// teardown removes what a node's containers left: their processes (every
// process in the node's cgroups), containerd's shims (found by the socket
// they were started with), mounts under dir, the cgroups, and dir.
func teardown(dir, cgroupRoot string) error {
	var errs []error
	killCgroups(cgroupRoot)
	killShims(socketPath(dir))
	if err := unmountUnder(dir); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroups(cgroupRoot); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cgroupDirs lists root's cgroup directories in every hierarchy, deepest first.
func cgroupDirs(root string) []string {
	var dirs []string
	for _, m := range cgroupMounts() {
		top := filepath.Join(m, root)
		filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

func cgroupPIDs(root string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range cgroupDirs(root) {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// killCgroups SIGKILLs every process in root's cgroups until none is left
// (a dying process may fork no more, but one seen late is caught next round).
func killCgroups(root string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := cgroupPIDs(root)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killShims SIGKILLs the containerd shims started for the containerd at sock:
// they detach from containerd and would outlive it.
func killShims(sock string) {
	for _, pid := range shimPIDs(sock) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(shimPIDs(sock)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

func shimPIDs(sock string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		for _, a := range args {
			if a == sock || strings.HasPrefix(a, sock) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) error {
	var points []string
	for _, m := range mountInfo() {
		if strings.HasPrefix(m.point, dir+"/") {
			points = append(points, m.point)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func removeCgroups(root string) error {
	var errs []error
	for _, d := range cgroupDirs(root) {
		var err error
		for i := 0; i < 20; i++ { // a killed process leaves its cgroup a moment later
			if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// Sweep tears down the nodes of processes that died without stopping them
// (SIGKILL): their kubelets and containerds died with them (PDEATHSIG), but
// shims and containers are daemonised and live on.
func Sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			teardown(d, "/"+filepath.Base(d))
		}
	}
}

// Leftovers lists what of a node whose directory was dir is still there:
// processes in its cgroups, shims, mounts, cgroups, the directory. Tests use it.
func Leftovers(dir string) []string {
	var out []string
	root := "/" + filepath.Base(dir)
	for _, pid := range cgroupPIDs(root) {
		out = append(out, fmt.Sprintf("process %d in cgroup %s", pid, root))
	}
	for _, pid := range shimPIDs(socketPath(dir)) {
		out = append(out, fmt.Sprintf("shim process %d", pid))
	}
	for _, m := range mountInfo() {
		if strings.HasPrefix(m.point, dir+"/") {
			out = append(out, "mount "+m.point)
		}
	}
	for _, d := range cgroupDirs(root) {
		out = append(out, "cgroup "+d)
	}
	if _, err := os.Stat(dir); err == nil {
		out = append(out, "directory "+dir)
	}
	return out
}

func healthy(ctx context.Context, url string) (bool, string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode == http.StatusOK, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
}
