package drill_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/jobconform/jobconform/suites/drill"
)

func TestDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real clusters")
	}
	drill.Register()
	RegisterFailHandler(Fail)
	RunSpecs(t, drill.Description)
}
