// Where the Kubernetes and etcd binaries come from: built from Go modules,
// downloaded, or either (--binaries, $JOBCONFORM_BINARIES).

package options

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Binaries says where the Kubernetes and etcd binaries come from.
type Binaries struct {
	// Source: "build" (from their Go modules, the default), "download" (the
	// official release binaries, their published checksums verified) or
	// "auto" (download, else build).
	Source string
	// KubernetesURL serves <version>/bin/<os>/<arch>/<binary> and its
	// .sha256, as https://dl.k8s.io/release does; EtcdURL serves
	// <version>/etcd-<version>-<os>-<arch>.tar.gz and <version>/SHA256SUMS,
	// as etcd's GitHub releases do.
	KubernetesURL, EtcdURL string
}

// The official download sites (Binaries' defaults).
const (
	KubernetesDownloads = "https://dl.k8s.io/release"
	EtcdDownloads       = "https://github.com/etcd-io/etcd/releases/download"
)

// BinarySources are the values of --binaries and $JOBCONFORM_BINARIES.
var BinarySources = []string{"build", "download", "auto"}

// BinariesFromEnv is where binaries come from: $JOBCONFORM_BINARIES, with
// $JOBCONFORM_KUBERNETES_DOWNLOAD_URL and $JOBCONFORM_ETCD_DOWNLOAD_URL (a
// mirror laid out like the official sites), else building them. A setting
// of the machine, as the cache is: whether it can reach the download sites.
func BinariesFromEnv() (Binaries, error) {
	b := Binaries{Source: "build", KubernetesURL: KubernetesDownloads, EtcdURL: EtcdDownloads}
	if v := os.Getenv(envBinaries); v != "" {
		if !slices.Contains(BinarySources, v) {
			return b, fmt.Errorf("%s=%q: write one of %s", envBinaries, v, strings.Join(BinarySources, ", "))
		}
		b.Source = v
	}
	for _, u := range []struct {
		dst  *string
		name string
	}{{&b.KubernetesURL, envK8sURL}, {&b.EtcdURL, envEtcdURL}} {
		if v := os.Getenv(u.name); v != "" {
			if p, err := url.Parse(v); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				return b, fmt.Errorf("%s=%q: give an http(s) URL", u.name, v)
			}
			*u.dst = strings.TrimSuffix(v, "/")
		}
	}
	return b, nil
}

// AddBinariesFlag binds --binaries: it sets $JOBCONFORM_BINARIES, so that
// every process of the run (suites, clusters) gets its binaries alike.
func AddBinariesFlag(fs *flag.FlagSet) {
	fs.Func("binaries", "where the Kubernetes and etcd binaries come from: build (from Go modules; default), download (official release binaries, checksums verified; $"+envK8sURL+" and $"+envEtcdURL+" name a mirror) or auto (download, else build)", func(s string) error {
		if !slices.Contains(BinarySources, s) {
			return fmt.Errorf("%q: want one of %s", s, strings.Join(BinarySources, ", "))
		}
		return os.Setenv(envBinaries, s)
	})
}
