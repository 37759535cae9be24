package oracle

import (
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, ok, err := s.Get("x"); ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := s.Claim("x"); !ok {
		t.Fatal("claim")
	}
	if at, ok := s.ClaimedAt("x"); !ok || time.Since(at) > time.Minute {
		t.Fatal("claim")
	}
	if ok, _ := s.Claim("x"); ok {
		t.Fatal("claimed twice")
	}
	o := Observe(run("11111111", "f", nil), "job", "f")
	if err := s.Put("x", o); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get("x")
	if !ok || err != nil || len(Compare(o, got, nil)) != 0 {
		t.Fatal(ok, err)
	}
}
