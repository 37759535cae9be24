// Package ports hands out TCP ports on 127.0.0.1 that no other process of
// jobconform and no outgoing connection can take while they are held: what
// clusters and controllers started side by side (parallel suites) bind.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/jobconform/jobconform/internal/options"
)

// Claim holds ports for as long as their user runs. Ports come from below
// the kernel's ephemeral range (outgoing connections take their source ports
// from it), and each is claimed with an exclusive flock on a file of its own
// in a directory every jobconform process shares; the kernel drops a claim
// when its process dies, so a killed harness leaves none behind.
type Claim struct {
	Ports []int
	locks []*flock.Flock
}

// portSpan is how many ports below the ephemeral range the claims use.
const portSpan = 10000

// Take claims n distinct ports on 127.0.0.1, each free to bind now.
func Take(n int) (*Claim, error) {
	dir, err := portLockDir()
	if err != nil {
		return nil, err
	}
	lo, hi := claimRange()
	c := &Claim{}
	start := lo + rand.IntN(hi-lo)
	for i := 0; i < hi-lo && len(c.Ports) < n; i++ {
		port := lo + (start-lo+i)%(hi-lo)
		f := flock.New(filepath.Join(dir, strconv.Itoa(port)))
		ok, err := f.TryLock()
		if err != nil {
			c.Release()
			return nil, fmt.Errorf("claim a port: %w", err)
		}
		if !ok {
			continue // another cluster holds it
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			_ = f.Close() // in use by something that does not claim ports
			continue
		}
		l.Close()
		c.Ports = append(c.Ports, port)
		c.locks = append(c.locks, f)
	}
	if len(c.Ports) < n {
		c.Release()
		return nil, fmt.Errorf("no %d free ports on 127.0.0.1 between %d and %d (claims in %s)", n, lo, hi, dir)
	}
	return c, nil
}

// Release gives the ports back (nil: nothing to give).
func (c *Claim) Release() {
	if c == nil {
		return
	}
	for _, f := range c.locks {
		_ = f.Close()
	}
	c.locks = nil
}

// claimRange is [lo, hi): the portSpan ports below the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range; Linux's default starts at 32768).
func claimRange() (int, int) {
	hi := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > portSpan+1024 {
				hi = v
			}
		}
	}
	return hi - portSpan, hi
}

func portLockDir() (string, error) {
	root, err := options.CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errors.Join(fmt.Errorf("port claims directory %s", dir), err)
	}
	return dir, nil
}
