package scale

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// The forms --scale accepts are the forms the catalog holds.
func TestScaleFormsAgree(t *testing.T) {
	if len(options.ScaleForms) != len(catalog.ScaleForms) {
		t.Fatalf("options %v, catalog %v", options.ScaleForms, catalog.ScaleForms)
	}
	for _, f := range options.ScaleForms {
		if _, ok := catalog.ScaleForms[f]; !ok {
			t.Errorf("--scale %s has no catalog form", f)
		}
	}
}

// The slowed reference runs beside the reference on the completing Job
// only, and never beside a mutant.
func TestSlowedRunsBesideTheReference(t *testing.T) {
	ref := referenceController()
	if got := Controllers(ref, "scale-indexed-complete"); len(got) != 2 || got[1].Name != Slowed.Name {
		t.Errorf("indexed-complete: %v", got)
	}
	if got := Controllers(ref, "scale-delete-midway"); len(got) != 1 {
		t.Errorf("delete-midway: %v", got)
	}
	mutant := referenceController()
	mutant[0].Faults = []string{"no-finalizer"}
	if got := Controllers(mutant, "scale-10k-indexed-complete"); len(got) != 1 {
		t.Errorf("beside a mutant: %v", got)
	}
}

func referenceController() []runner.Controller { return []runner.Controller{runner.Reference} }

func TestWarmUpScenario(t *testing.T) {
	for _, form := range options.ScaleForms {
		all, err := catalog.LoadScale(form)
		if err != nil {
			t.Fatal(err)
		}
		s, err := warmUpScenario(all)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		want := map[string]int32{"1k": 500, "10k": 1000, "600": 550}[form]
		if got := ptr.Deref(s.Job.Parallelism, 0); got != want {
			t.Errorf("%s: the warm-up's parallelism is %d, want the form's largest, %d", form, got, want)
		}
	}
}
