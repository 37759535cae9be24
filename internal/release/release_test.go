package release

import "testing"

func TestParse(t *testing.T) {
	good := map[string]string{"v1.37.1": "v1.37.1", "1.34.3": "v1.34.3", " v1.31.0 ": "v1.31.0"}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "latest", "v1.30.14", "v1.37", "v1.37.0-rc.1", "v2.0.0"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if Staging("v1.34.3") != "v0.34.3" {
		t.Errorf("Staging(v1.34.3) = %s", Staging("v1.34.3"))
	}
	if v, err := Resolve(""); err != nil || v != Default {
		t.Errorf("Resolve(\"\") = %q, %v; want %s", v, err, Default)
	}
}
