package chaos_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/jobconform/jobconform/suites/chaos"
)

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	chaos.Register()
	RegisterFailHandler(Fail)
	RunSpecs(t, chaos.Description)
}
