package kubeletnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Every kubelet on a machine serves device-plugin registration on one fixed
// path, whatever its --root-dir (k8s.io/kubelet's deviceplugin/v1beta1
// KubeletSocket, the same in every release from 1.31): as its container
// manager starts it removes the sockets there and listens anew. Two kubelets
// doing that at once fail one with "bind: address already in use", and the
// kubelet exits ("Failed to start ContainerManager"), relying on a
// babysitter to start it again; its node never became Ready. So kubelets
// start one at a time, across processes too, each until that socket is its
// own.
const devicePluginSocket = "/var/lib/kubelet/device-plugins/kubelet.sock"

// lockDevicePlugins takes the machine-wide turn to start a kubelet.
func lockDevicePlugins(ctx context.Context) (unlock func(), err error) {
	dir := filepath.Dir(devicePluginSocket)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("kubelet device-plugin directory: %w", err)
	}
	// A dot file: the kubelets' clean-up removes only sockets.
	f, err := os.OpenFile(filepath.Join(dir, ".jobconform-start.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kubelet start lock: %w", err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("kubelet start lock: %w", err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// waitDevicePluginSocket waits until the kubelet started at since listens on
// the device-plugin socket (made at or after since), or exits.
func (n *Node) waitDevicePluginSocket(ctx context.Context, since time.Time) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		if !n.kubelet.Running() {
			return false, fmt.Errorf("kubelet exited before its container manager started: %s", n.kubelet.DescribeExit())
		}
		st, err := os.Stat(devicePluginSocket)
		return err == nil && st.Mode()&os.ModeSocket != 0 && !st.ModTime().Before(since), nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("kubelet did not listen on %s within 60s (its container manager did not start); log %s", devicePluginSocket, n.kubelet.LogPath)
	}
	return err
}
