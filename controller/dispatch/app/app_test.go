package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input says what to give, before anything connects.
func TestRunRefusesBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.kubeconfig")
	kc := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(kc, []byte("not: [a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give --manager-kubeconfig and --worker-kubeconfig"},
		{[]string{"--manager-kubeconfig", kc}, "give --manager-kubeconfig and --worker-kubeconfig"},
		{[]string{"--inject-fault", "no-status"}, `unknown fault "no-status"`},
		{[]string{"--manager-kubeconfig", missing, "--worker-kubeconfig", kc}, "--manager-kubeconfig"},
		{[]string{"--manager-kubeconfig", kc, "--worker-kubeconfig", kc}, "--manager-kubeconfig"},
	} {
		err := Run(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%q) = %v, want an error saying %q", c.args, err, c.want)
		}
	}
}
