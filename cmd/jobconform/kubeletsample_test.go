package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/jobconform/jobconform/scenarios/catalog"
)

// Every kubelet trait of the conformance catalog is in make test's kubelet
// sample, twice where the catalog has it twice: a new kind of pod behaviour
// or act that kwok imitates cannot go unchecked on a real kubelet; and every
// sampled scenario exists and may run on kubelet nodes.
func TestKubeletSampleCoversTraits(t *testing.T) {
	all, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
		if slices.Contains(kubeletSample, s.Name) && s.Nodes == "kwok" {
			t.Errorf("%s runs on kwok nodes only: it cannot be in the kubelet sample", s.Name)
		}
	}
	for _, n := range kubeletSample {
		if !slices.Contains(names, n) {
			t.Errorf("the kubelet sample names %s, which the catalog does not hold", n)
		}
	}
	catalogTraits, sample := sampleTraits(all, nil), sampleTraits(all, kubeletSample)
	for trait, n := range catalogTraits {
		if want := min(n, 2); sample[trait] < want {
			t.Errorf("kubelet trait %s: %d scenarios of the catalog have it, %d of the sample (want %d)", trait, n, sample[trait], want)
		}
	}
	t.Logf("sample of %d of %d scenarios; traits (catalog/sample): %v / %v", len(kubeletSample), len(all), catalogTraits, sample)
}

// The focus selects the sample's specs for every controller, and no other.
func TestKubeletSampleFocus(t *testing.T) {
	f := regexp.MustCompile(kubeletSampleFocus())
	for _, ctl := range []string{"builtin", "reference", "external"} {
		if !f.MatchString(specText("conformance", ctl, "complete-simple")) {
			t.Errorf("%s: complete-simple not selected", ctl)
		}
		if f.MatchString(specText("conformance", ctl, "complete-simple-2")) || f.MatchString(specText("conformance", ctl, "created-suspended")) {
			t.Errorf("%s: a scenario outside the sample selected", ctl)
		}
	}
}
