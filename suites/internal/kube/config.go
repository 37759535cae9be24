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
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 200, 400
	rc.ContentType = runtime.ContentTypeProtobuf
	rc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return rc, nil
}
