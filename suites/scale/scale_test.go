package scale_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/jobconform/jobconform/suites/scale"
)

func TestScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster of hundreds of nodes")
	}
	scale.Register()
	RegisterFailHandler(Fail)
	RunSpecs(t, scale.Description)
}
