package kube

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// LoadConfig reads a kubeconfig into the rest.Config every harness client
// uses: room for the bursts a 200-pod Job makes, and protobuf, as the
// control plane's own components speak. The apiserver serialises a watched
// change once per encoding and shares it among watchers; in JSON the
// harness's recorders made it encode every change a second time.
// Typed clients only: a dynamic client made from it still speaks JSON.
// Uncompressed: from v1.37 (WatchListCompression) the apiserver gzips a
// watch-list stream flush by flush, for each watcher apart, when the client
// accepts gzip, which Go's transport does by default; on loopback that is
// CPU spent on both ends for nothing.
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 200, 400
	rc.ContentType = runtime.ContentTypeProtobuf
	rc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	rc.DisableCompression = true
	return rc, nil
}

// WriteOneContext writes one context of a kubeconfig — name, or its
// current context when name is "" — into a file of dir, readable by its
// owner alone: that context as the current one, its cluster and user
// only, their certificates and keys inlined. kubeconfig is a file, or ""
// for kubectl's own choice: the files $KUBECONFIG lists, merged, else
// ~/.kube/config. Every process of a run (suites, controllers, Chaos
// Mesh's clients) then reads the file as its --kubeconfig, and --context
// needs no flag of theirs.
func WriteOneContext(kubeconfig, name, dir string) (string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	where := "the kubeconfig of $KUBECONFIG or ~/.kube/config"
	if kubeconfig != "" {
		rules.ExplicitPath, where = kubeconfig, kubeconfig
	}
	cfg, err := rules.Load()
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if len(cfg.Contexts) == 0 {
		return "", fmt.Errorf("%s has no context: give --kubeconfig, or set KUBECONFIG", where)
	}
	if name == "" {
		name = cfg.CurrentContext
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return "", fmt.Errorf("%s has no context %q (it has %s)", where, name, strings.Join(slices.Sorted(maps.Keys(cfg.Contexts)), ", "))
	}
	cfg.CurrentContext = name
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return "", fmt.Errorf("%s, context %s: %w", where, name, err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return "", fmt.Errorf("%s, context %s: %w", where, name, err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o600)
}
