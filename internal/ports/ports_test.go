package ports

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
)

func TestTakeGivesDistinctFreePortsBelowTheEphemeralRange(t *testing.T) {
	a, err := Take(5)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := Take(5)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	lo, hi := claimRange()
	seen := map[int]bool{}
	for _, p := range append(append([]int(nil), a.Ports...), b.Ports...) {
		if seen[p] {
			t.Errorf("port %d handed out twice while claimed", p)
		}
		seen[p] = true
		if p < lo || p >= hi {
			t.Errorf("port %d outside [%d, %d)", p, lo, hi)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("claimed port %d is not free to bind: %v", p, err)
			continue
		}
		l.Close()
	}
}

// A claim is an flock: another process sees it, and it ends with the process.
func TestClaimsHoldAcrossProcesses(t *testing.T) {
	a, err := Take(1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	dir, err := portLockDir()
	if err != nil {
		t.Fatal(err)
	}
	// flock(1) from util-linux, as another process would take it.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock command")
	}
	err = exec.Command("flock", "-n", dir+"/"+strconv.Itoa(a.Ports[0]), "true").Run()
	if err == nil {
		t.Fatalf("another process took port %d's claim while it was held", a.Ports[0])
	}
	a.Release()
	if err := exec.Command("flock", "-n", dir+"/"+strconv.Itoa(a.Ports[0]), "true").Run(); err != nil {
		t.Fatalf("port %d's claim not given back by Release: %v", a.Ports[0], err)
	}
}
