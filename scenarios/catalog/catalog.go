// Package catalog embeds jobconform's scenario catalog (*.yaml here).
package catalog

import (
	"embed"

	"github.com/jobconform/jobconform/scenarios"
)

//go:embed *.yaml
var files embed.FS

// Load returns every scenario of the catalog, validated.
func Load() ([]*scenarios.Scenario, error) { return scenarios.Load(files) }
