package conformance_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/jobconform/jobconform/suites/conformance"
)

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	conformance.Register()
	RegisterFailHandler(Fail)
	RunSpecs(t, conformance.Description)
}
