package local

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/process"
)

// PIDs lists the operating-system processes of the cluster that run now.
func (c *Cluster) PIDs() []int {
	c.mu.Lock()
	ps := append([]*process.Process(nil), c.groups...)
	for _, comp := range Components {
		ps = append(ps, c.procs[comp])
	}
	kubelets := append([]*kubeletnode.Node(nil), c.kubelets...)
	c.mu.Unlock()
	var pids []int
	for _, n := range kubelets {
		if n != nil {
			pids = append(pids, n.PIDs()...)
		}
	}
	for _, p := range ps {
		if pid := p.PID(); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ListenAddresses returns every TCP address the cluster's processes listen on,
// read from /proc, so that "binds only 127.0.0.1" can be checked, not assumed.
func (c *Cluster) ListenAddresses() ([]string, error) {
	inodes := map[string]bool{}
	for _, pid := range c.PIDs() {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue // exited meanwhile
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
			}
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			addr, err := parseProcAddr(f[1])
			if err != nil {
				return nil, err
			}
			out = append(out, addr)
		}
	}
	return out, nil
}

// parseProcAddr decodes /proc/net/tcp's "0100007F:1F90" (little-endian words).
func parseProcAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad /proc/net address %q", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil {
		return "", err
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.Itoa(int(port))), nil
}
