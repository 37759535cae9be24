// Package catalog embeds the chaos scenarios (*.yaml here): scenarios whose
// steps inject disruptions, run by the chaos suite (suites/chaos).
package catalog

import (
	"embed"

	"github.com/jobconform/jobconform/scenarios"
)

//go:embed *.yaml
var files embed.FS

// Load returns every chaos scenario, validated.
func Load() ([]*scenarios.Scenario, error) { return scenarios.Load(files) }
