package kube

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
