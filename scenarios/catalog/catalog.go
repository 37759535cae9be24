// Package catalog embeds jobconform's scenario catalogs: conformance/*.yaml,
// which the conformance suite runs on any cluster, and chaos/*.yaml, whose
// steps inject disruptions and which the chaos suite runs on clusters the
// harness controls.
package catalog

import (
	"embed"
	"io/fs"

	"github.com/jobconform/jobconform/scenarios"
)

//go:embed conformance/*.yaml chaos/*.yaml
var files embed.FS

// Load returns every conformance scenario, validated.
func Load() ([]*scenarios.Scenario, error) { return load("conformance") }

// LoadChaos returns every chaos scenario, validated.
func LoadChaos() ([]*scenarios.Scenario, error) { return load("chaos") }

func load(dir string) ([]*scenarios.Scenario, error) {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		return nil, err
	}
	return scenarios.Load(sub)
}
