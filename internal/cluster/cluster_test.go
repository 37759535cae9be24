package cluster

import (
	"reflect"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
)

// The settings name the providers this package has, and only those.
func TestProvidersAreTheOptions(t *testing.T) {
	if got := Names(); !reflect.DeepEqual(got, options.Providers) {
		t.Errorf("providers %v, options.Providers %v: keep them one list", got, options.Providers)
	}
	if DefaultProvider != (options.Options{}).ProviderName() {
		t.Errorf("default provider %q, the settings' %q", DefaultProvider, (options.Options{}).ProviderName())
	}
}
